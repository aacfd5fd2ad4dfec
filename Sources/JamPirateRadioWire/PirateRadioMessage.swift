import Foundation
import JamProtocol

extension PirateRadio {
    /// The `type` of a message a PirateRadio client sends.
    public enum ClientType: String, CaseIterable, Sendable {
        case playPrepare, playCommit, pause, resume, seek, skip, addToQueue, removeFromQueue, driftReport, ping

        /// Messages whose data other members receive as it was sent.
        package var isRelayed: Bool {
            switch self {
            case .playPrepare, .playCommit, .pause, .resume, .seek: true
            case .skip, .addToQueue, .removeFromQueue, .driftReport, .ping: false
            }
        }

        /// Messages only the DJ's count: PirateRadio's server drops anyone else's without a word.
        package var isDJOnly: Bool {
            switch self {
            case .playPrepare, .playCommit, .pause, .resume, .seek, .skip, .removeFromQueue: true
            case .addToQueue, .driftReport, .ping: false
            }
        }
    }

    /// The `type` of a frame PirateRadio's server sends: the DJ's moves and drift reports it
    /// relays under the names they were sent with, and what it says itself.
    public enum ServerType: String, CaseIterable, Sendable {
        case playPrepare, playCommit, pause, resume, seek, driftReport, queueUpdate, memberJoined, memberLeft, stateSync, pong, error
    }

    /// Largest track, as JSON text, the profile keeps to echo back as sent.
    package static let maxTrackBytes = 4096

    /// A decoded client message, read as leniently as PirateRadio's server reads it. Its `data`
    /// is kept whole for relaying and echoing.
    package struct ClientMessage: Sendable {
        /// What the client asks for.
        package enum Body: Sendable, Hashable {
            /// Not something PirateRadio's server acts on (not JSON, no or an unknown `type`): it
            /// stays silent, and so does the profile.
            case ignored
            case playPrepare(Prepared)
            case playCommit(Timeline)
            case pause(Timeline)
            case resume(Timeline)
            case seek(Timeline)
            case skip
            case addToQueue(Queued)
            case removeFromQueue(trackId: String)
            case driftReport
            case ping(clientSendTime: Value?)
        }

        /// A track the DJ makes current: the OpenJam track and what `currentTrack` shows.
        package struct Prepared: Sendable, Hashable {
            package var track: OpenJamTrack
            /// The client's track object as sent, or `{"id": trackId}` without one.
            package var shown: [String: Value]
        }

        /// A track to queue, with the client's object and nonce as sent.
        package struct Queued: Sendable, Hashable {
            package var track: OpenJamTrack
            package var nonce: String
            package var shown: [String: Value]
            package var rawNonce: Value
        }

        /// `playCommit`, `pause`, `resume` and `seek` data. A position is absent when it is not a
        /// number; a timestamp also when it is 0, since PirateRadio's server writes
        /// `ntpTimestamp || now` (a position of 0 means the same either way).
        package struct Timeline: Sendable, Hashable {
            package var positionMs: Int64?
            package var ntpTimestamp: Int64?
            package var executionTime: Int64?
        }

        /// The message's `type`, when it has a known one.
        package var type: ClientType?
        /// What it asks, or why the profile refuses it (answered only to a sender it applies to).
        package var body: Result<Body, JamError>
        /// The `data` object (empty when absent, null or not an object, as PirateRadio reads it).
        package var data: [String: Value]
        /// `data` as JSON text, for relayed messages (`{}` for the others).
        package var rawData: String

        /// Decodes a client frame. It never fails: what PirateRadio's server ignores is `.ignored`,
        /// and what the profile refuses carries its error.
        package static func decode(_ bytes: Data) -> ClientMessage {
            guard case .object(let frame)? = Value.parse(bytes), let rawType = frame["type"]?.string,
                  let type = ClientType(rawValue: rawType)
            else { return ClientMessage(type: nil, body: .success(.ignored), data: [:], rawData: "{}") }
            var data: [String: Value] = [:]
            if case .object(let object)? = frame["data"] { data = object }
            let body: Result<Body, JamError>
            do throws(JamError) {
                body = .success(try Self.body(type, data))
            } catch {
                body = .failure(error)
            }
            return ClientMessage(type: type, body: body, data: data, rawData: type.isRelayed ? PirateRadio.json(Value.object(data)) : "{}")
        }

        private static func body(_ type: ClientType, _ data: [String: Value]) throws(JamError) -> Body {
            switch type {
            case .playPrepare:
                guard let trackId = data["trackId"], trackId.isTruthy else { throw JamError(.invalidField, "playPrepare needs data.trackId") }
                let shown = try trackObject(data["track"]) ?? ["id": trackId]
                return .playPrepare(Prepared(track: openJamTrack(shown, id: trackId.idText), shown: shown))
            case .playCommit: return .playCommit(try timeline(data))
            case .pause: return .pause(try timeline(data))
            case .resume: return .resume(try timeline(data))
            case .seek: return .seek(try timeline(data))
            case .skip: return .skip
            case .addToQueue:
                guard let shown = try trackObject(data["track"]) else { throw JamError(.invalidField, "addToQueue needs data.track") }
                guard let nonce = data["nonce"], nonce.isTruthy else { throw JamError(.invalidField, "addToQueue needs data.nonce") }
                var track = shown
                // The server's own fields win over any the client sent, as in PirateRadio's entry.
                track["nonce"] = nil
                track["addedBy"] = nil
                return .addToQueue(Queued(track: openJamTrack(track, id: nil), nonce: nonce.idText, shown: track, rawNonce: nonce))
            case .removeFromQueue:
                guard let trackId = data["trackId"], trackId.isTruthy else { throw JamError(.invalidField, "removeFromQueue needs data.trackId") }
                return .removeFromQueue(trackId: trackId.idText)
            case .driftReport: return .driftReport
            case .ping: return .ping(clientSendTime: data["clientSendTime"])
            }
        }

        /// A `track` field: nil when absent or falsy, its object when it is one (at most
        /// `maxTrackBytes` of JSON, since it is kept and echoed), refused otherwise.
        private static func trackObject(_ value: Value?) throws(JamError) -> [String: Value]? {
            guard let value, value.isTruthy else { return nil }
            guard case .object(let object) = value else { throw JamError(.invalidField, "data.track must be an object") }
            let size = JSONWriter.encode(value).count
            guard size <= maxTrackBytes else {
                throw JamError(.invalidField, "data.track must be at most \(maxTrackBytes) bytes of JSON, got \(size)")
            }
            return object
        }

        /// The longest track PirateRadio's server auto-advances from (30 minutes, "for timer
        /// safety"): a longer one plays on until the DJ moves.
        package static let maxAutoAdvanceDurationMs: Int64 = 30 * 60_000

        /// The OpenJam track a PirateRadio track object stands for. Fields that are missing or
        /// not strings are empty for the session (the object is still shown as sent); a
        /// duration that is not a positive number up to `maxAutoAdvanceDurationMs` is unknown,
        /// so the track does not auto-advance, as its server skips auto-advance for it.
        ///
        /// Its server takes any text, and members see the object as sent, so the session's own
        /// copy of the name, artist and album is made fit (control characters as spaces, cut
        /// to OpenJam's length) rather than the add refused, and art that OpenJam would refuse
        /// is left out of it. The id stays as sent: `removeFromQueue` names it.
        package static func openJamTrack(_ object: [String: Value], id fallbackId: String?) -> OpenJamTrack {
            OpenJamTrack(
                id: object["id"].map(\.idText) ?? fallbackId ?? "", name: shownText(object["name"]) ?? "",
                artist: shownText(object["artist"]) ?? "", album: shownText(object["albumName"]),
                durationMs: duration(object["durationMs"]), artworkURL: artwork(object["albumArtURL"]), source: .spotify)
        }

        private static func shownText(_ value: Value?) -> String? {
            value?.string.map { Validate.displayable($0, max: OpenJamTrack.maxTextLength) }
        }

        private static func artwork(_ value: Value?) -> String? {
            guard let link = value?.string else { return nil }
            do {
                // The track's own rule for art, so the session's copy passes its check.
                try Validate.text(link, field: "track.artworkURL", max: OpenJamTrack.maxArtworkURLLength, allowEmpty: true)
                return link
            } catch {
                return nil // left out of the session's copy; members see the object as sent
            }
        }

        private static func duration(_ value: Value?) -> Int64? {
            let number: Double? = switch value {
            case .integer(let whole)?: Double(whole)
            case .number(let number)?: number
            // JavaScript's Number() reads numeric text too.
            case .string(let text)?: Double(text.trimmingCharacters(in: .whitespaces))
            case .null?, .bool?, .array?, .object?, nil: nil
            }
            guard let number, number.isFinite, number > 0, number <= Double(maxAutoAdvanceDurationMs) else { return nil }
            return max(1, Int64(number.rounded()))
        }

        /// Timeline fields. A position too large for a track is refused with the profile's
        /// limit; a timestamp that is zero, negative or absurd reads as absent (now), so no
        /// arithmetic on it can overflow.
        private static func timeline(_ data: [String: Value]) throws(JamError) -> Timeline {
            var timeline = Timeline()
            if let position = data["positionMs"]?.number {
                guard position.isFinite, abs(position) <= 24 * 3_600_000 else {
                    throw JamError(.invalidField, "data.positionMs must be between 0 and 24 hours")
                }
                timeline.positionMs = Int64(position.rounded())
            }
            timeline.ntpTimestamp = timestamp(data["ntpTimestamp"])
            timeline.executionTime = timestamp(data["executionTime"])
            return timeline
        }

        private static func timestamp(_ value: Value?) -> Int64? {
            guard let number = value?.number, number.isFinite, number > 0, number < 1e15 else { return nil }
            return Int64(number.rounded())
        }
    }

    /// A server frame: `{"type", "data", "epoch", "seq", "timestamp"}`, with `data` given as JSON text.
    public static func frame(type: ServerType, data: String, epoch: Int64, seq: Int64, timestamp: Int64) -> String {
        "{\"type\":\"\(type.rawValue)\",\"data\":\(data),\"epoch\":\(epoch),\"seq\":\(seq),\"timestamp\":\(timestamp)}"
    }

    /// A server frame with a `timestamp` but no `epoch` or `seq`, as its server relays a `driftReport`.
    public static func frame(type: ServerType, data: String, timestamp: Int64) -> String {
        "{\"type\":\"\(type.rawValue)\",\"data\":\(data),\"timestamp\":\(timestamp)}"
    }

    /// A server frame of `type` and `data` alone, as its server sends `pong` and a new DJ's `stateSync`.
    public static func frame(type: ServerType, data: String) -> String {
        "{\"type\":\"\(type.rawValue)\",\"data\":\(data)}"
    }

}
