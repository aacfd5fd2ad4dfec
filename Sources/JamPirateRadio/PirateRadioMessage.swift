import Foundation
import JamProtocol

extension PirateRadio {
    /// The `type` of a message a PirateRadio client sends.
    public enum ClientType: String, CaseIterable, Sendable {
        case playPrepare, playCommit, pause, resume, seek, skip, addToQueue, removeFromQueue, driftReport, ping

        /// Messages whose data other members receive as it was sent.
        var isRelayed: Bool {
            switch self {
            case .playPrepare, .playCommit, .pause, .resume, .seek, .driftReport: true
            case .skip, .addToQueue, .removeFromQueue, .ping: false
            }
        }
    }

    /// A decoded client message, with its `data` kept as JSON text for relaying untouched.
    public struct ClientMessage: Sendable {
        /// What the client asks for.
        public enum Body: Sendable, Hashable {
            case playPrepare(PlayPrepare)
            case playCommit(TimelineData)
            case pause(TimelineData)
            case resume(TimelineData)
            case seek(TimelineData)
            case skip
            case addToQueue(AddToQueue)
            case removeFromQueue(RemoveFromQueue)
            case driftReport
            case ping(Ping)
        }

        public var body: Body
        /// The `data` object as JSON text (`{}` when absent).
        public var rawData: String

        /// Decodes a client frame; every failure is a typed error naming the problem.
        public static func decode(_ text: String) throws(JamError) -> ClientMessage {
            let bytes = Data(text.utf8)
            let object: Any
            do {
                object = try JSONSerialization.jsonObject(with: bytes)
            } catch {
                throw JamError(.malformed, "not valid JSON")
            }
            guard let frame = object as? [String: Any] else { throw JamError(.malformed, "a message must be a JSON object") }
            guard let rawType = frame["type"] as? String else { throw JamError(.malformed, "missing field type") }
            guard let type = ClientType(rawValue: rawType) else { throw JamError(.unknownType, "unknown type \"\(rawType.prefix(64))\"") }
            let data = frame["data"] ?? [String: Any]()
            guard data is [String: Any] else { throw JamError(.malformed, "field data must be an object") }
            // Relayed messages keep their data as text; the rest (the queue's adds and removes,
            // most of the traffic) decode it straight from the message.
            var rawData = "{}"
            let decodeData: (any Decodable.Type) throws(JamError) -> any Decodable
            if type.isRelayed {
                let dataBytes: Data
                do {
                    dataBytes = try JSONSerialization.data(withJSONObject: data, options: [.sortedKeys, .withoutEscapingSlashes])
                } catch {
                    throw JamError(.malformed, "field data could not be read")
                }
                rawData = String(decoding: dataBytes, as: UTF8.self)
                decodeData = { (kind) throws(JamError) in try Self.decodePayload(kind, from: dataBytes, path: "data.") }
            } else {
                let present = frame["data"] != nil
                decodeData = { (kind) throws(JamError) in
                    // An absent data reads as {}, so a missing field is named the same either way.
                    present ? try Self.decodeWrapped(kind, from: bytes) : try Self.decodePayload(kind, from: Data("{}".utf8), path: "data.")
                }
            }
            func payload<T: Decodable>(_: T.Type) throws(JamError) -> T {
                guard let value = try decodeData(T.self) as? T else { throw JamError(.internal, "data decoded as the wrong type") }
                return value
            }
            let body: Body
            switch type {
            case .playPrepare: body = .playPrepare(try payload(PlayPrepare.self))
            case .playCommit: body = .playCommit(try payload(TimelineData.self))
            case .pause: body = .pause(try payload(TimelineData.self))
            case .resume: body = .resume(try payload(TimelineData.self))
            case .seek: body = .seek(try payload(TimelineData.self))
            case .skip: body = .skip
            case .addToQueue: body = .addToQueue(try payload(AddToQueue.self))
            case .removeFromQueue: body = .removeFromQueue(try payload(RemoveFromQueue.self))
            case .driftReport: body = .driftReport
            case .ping: body = .ping(try payload(Ping.self))
            }
            return ClientMessage(body: body, rawData: rawData)
        }

        /// `data` decoded on its own; `path` prefixes the fields an error names.
        static func decodePayload(_ kind: any Decodable.Type, from bytes: Data, path: String) throws(JamError) -> any Decodable {
            do {
                return try JSONDecoder().decode(kind, from: bytes)
            } catch let error as DecodingError {
                var described = WireCoding.describe(error)
                described.message = described.message.replacingOccurrences(of: "field ", with: "field \(path)")
                    .replacingOccurrences(of: "missing field ", with: "missing field \(path)")
                throw described
            } catch {
                throw JamError(.malformed, "could not decode data: \(error)")
            }
        }

        /// `data` decoded from the whole message (its path names `data` already).
        static func decodeWrapped(_ kind: any Decodable.Type, from bytes: Data) throws(JamError) -> any Decodable {
            func decode<T: Decodable>(_: T.Type) throws -> any Decodable { try JSONDecoder().decode(Wrapped<T>.self, from: bytes).data }
            do {
                return try decode(kind)
            } catch let error as DecodingError {
                throw WireCoding.describe(error)
            } catch {
                throw JamError(.malformed, "could not decode data: \(error)")
            }
        }

        private struct Wrapped<T: Decodable>: Decodable {
            let data: T
        }
    }

    /// A server frame: `{"type", "data", "epoch", "seq", "timestamp"}`, with `data` given as JSON text.
    public static func frame(type: String, data: String, epoch: Int64, seq: Int64, timestamp: Int64) -> String {
        "{\"type\":\"\(type)\",\"data\":\(data),\"epoch\":\(epoch),\"seq\":\(seq),\"timestamp\":\(timestamp)}"
    }

}
