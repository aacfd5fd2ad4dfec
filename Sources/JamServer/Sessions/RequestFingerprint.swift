import Crypto
import Foundation
import JamCore
import JamProtocol

/// What a REST change asked for, in a few characters: kept with its idempotency key's answer,
/// so the same key sent with another request is refused rather than answered with the first
/// one's result (the draft standard for `Idempotency-Key` answers such a reuse with 422).
enum RequestFingerprint {
    /// The first 16 hex digits of a SHA-256 of `command` as its caller asked for it: values
    /// the server makes itself (an add's item id, a fresh join code) are left out, as a
    /// request sent again gets new ones, and so is an add's nonce: it is a key of its own, and
    /// a client building its retry afresh may make a new one (the key answers for both).
    /// Hex digits in a fingerprint.
    static let length = 16

    static func of(_ command: Command) -> String {
        // The log's own writer: the same bytes for the same command, on every node and build.
        let bytes = JSONWriter.encode(asAsked(command))
        return SHA256.hash(data: bytes).prefix(length / 2).map { String(format: "%02x", $0) }.joined()
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
