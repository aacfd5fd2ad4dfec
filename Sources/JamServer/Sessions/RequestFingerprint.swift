import Crypto
import Foundation
import JamCore
import JamProtocol

/// What a REST change asked for, in a few characters: kept with its idempotency key's answer,
/// so the same key sent with another request is refused rather than answered with the first
/// one's result (the draft standard for `Idempotency-Key` answers such a reuse with 422).
enum RequestFingerprint {
    /// Hex digits in a fingerprint.
    static let length = 16

    /// The first 16 hex digits of a SHA-256 of `command` as its caller asked for it: values
    /// the server makes itself (an add's item id, a fresh join code) are left out, as a
    /// request sent again gets new ones, and so is an add's nonce: it is a key of its own, and
    /// a client building its retry afresh may make a new one (the key answers for both).
    static func of(_ command: Command) -> String { text(hash(asAsked(command))) }

    /// The fingerprint a socket's command id is kept with, as a number (the command path
    /// formats nothing): as `of`, with a library track cut to its id, as the log holds the
    /// library's copy of the track (`LibraryTracks.resolving`) and a restart reads the
    /// fingerprint of a logged answer from its logged command.
    static func forSocket(_ command: Command) -> UInt64 {
        hash(libraryTracksCut(asAsked(command)))
    }

    /// The fingerprint a device-sync request's id is kept with: a sync report's is its
    /// command's (it is applied as one); a calibration's or re-sync's, answered by this node
    /// alone, that of its kind and fields.
    static func forSocket(_ request: DeviceSyncRequest) -> UInt64 {
        switch request {
        case .report(let report): forSocket(.syncReport(report))
        case .calibrate(let calibrate): hash(kind: "calibrate", calibrate)
        case .calibrationReport(let report): hash(kind: "calibrationReport", report)
        case .resync(let resync): hash(kind: "resync", resync)
        }
    }

    private static func hash(_ command: Command) -> UInt64 {
        // The log's own writer: the same bytes for the same command, on every node and build.
        digest(JSONWriter.encode(command))
    }

    private static func hash(kind: String, _ fields: some Encodable) -> UInt64 {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        var bytes = Array(kind.utf8)
        do {
            bytes += try encoder.encode(fields)
        } catch {
            // Only a non-finite number fails, and none can come decoded from JSON: the kind
            // alone then still tells this request from a command.
        }
        return digest(bytes)
    }

    private static func digest(_ bytes: [UInt8]) -> UInt64 {
        SHA256.hash(data: bytes).prefix(length / 2).reduce(0) { $0 << 8 | UInt64($1) }
    }

    private static func libraryTracksCut(_ command: Command) -> Command {
        switch command {
        case .add(let track, let nonce, let itemId):
            track.source == .library ? .add(track: Track(id: track.id, name: "", artist: "", source: .library), nonce: nonce, itemId: itemId) : command
        case .all(let commands): .all(commands.map(libraryTracksCut))
        case .whileCurrent(let epoch, let inner): .whileCurrent(epoch: epoch, command: libraryTracksCut(inner))
        case .join, .leave, .connect, .disconnect, .remove, .vote, .skip, .requestSkip, .withdrawSkipRequest, .finish, .play, .pause, .resume, .seek,
            .ready, .syncReport, .updateSettings, .setRole, .kick, .setDeviceDelay, .setJoinCode, .end, .djPrepare, .djTimeline:
            command
        }
    }

    /// A fingerprint's `length` lowercase hex digits.
    static func text(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: length - digits.count) + digits
    }

    /// The fingerprint `text` wrote, or nil for anything else.
    static func value<S: StringProtocol>(_ text: S) -> UInt64? {
        guard isText(text) else { return nil }
        return UInt64(text, radix: 16)
    }

    /// Whether `text` is a fingerprint as `text(_:)` writes it.
    static func isText<S: StringProtocol>(_ text: S) -> Bool {
        text.utf8.count == length
            && text.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
    }

    /// `command` without what the server fills in.
    static func asAsked(_ command: Command) -> Command {
        switch command {
        case .add(let track, _, _): .add(track: track, nonce: "", itemId: madeByServer)
        case .setJoinCode: .setJoinCode("")
        case .djPrepare(let track, _): .djPrepare(track: track, itemId: madeByServer)
        case .all(let commands): .all(commands.map(asAsked))
        case .whileCurrent(let epoch, let inner): .whileCurrent(epoch: epoch, command: asAsked(inner))
        case .join, .leave, .connect, .disconnect, .remove, .vote, .skip, .requestSkip, .withdrawSkipRequest, .finish, .play, .pause, .resume, .seek,
            .ready, .syncReport, .updateSettings, .setRole, .kick, .setDeviceDelay, .end, .djTimeline:
            command
        }
    }

    private static let madeByServer = ItemID("00000000-0000-0000-0000-000000000000")
}
