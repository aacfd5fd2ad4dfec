import Foundation
import JamProtocol

extension PirateRadio {
    /// The `type` of a message a PirateRadio client sends.
    public enum ClientType: String, CaseIterable, Sendable {
        case playPrepare, playCommit, pause, resume, seek, skip, addToQueue, removeFromQueue, driftReport, ping
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
            let dataBytes: Data
            do {
                dataBytes = try JSONSerialization.data(withJSONObject: data, options: [.sortedKeys, .withoutEscapingSlashes])
            } catch {
                throw JamError(.malformed, "field data could not be read")
            }
            func payload<T: Decodable>(_: T.Type) throws(JamError) -> T {
                do {
                    return try JSONDecoder().decode(T.self, from: dataBytes)
                } catch let error as DecodingError {
                    var described = WireCoding.describe(error)
                    described.message = described.message.replacingOccurrences(of: "field ", with: "field data.")
                        .replacingOccurrences(of: "missing field ", with: "missing field data.")
                    throw described
                } catch {
                    throw JamError(.malformed, "could not decode data: \(error)")
                }
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
            return ClientMessage(body: body, rawData: String(decoding: dataBytes, as: UTF8.self))
        }
    }

    /// A server frame: `{"type", "data", "epoch", "seq", "timestamp"}`, with `data` given as JSON text.
    public static func frame(type: String, data: String, epoch: Int64, seq: Int64, timestamp: Int64) -> String {
        "{\"type\":\"\(type)\",\"data\":\(data),\"epoch\":\(epoch),\"seq\":\(seq),\"timestamp\":\(timestamp)}"
    }

    /// Encodes a payload as JSON text for `frame(type:data:...)`.
    public static func json<T: Encodable>(_ value: T) -> String {
        do {
            return String(decoding: try WireCoding.encoder.encode(value), as: UTF8.self)
        } catch {
            preconditionFailure("PirateRadio payload failed to encode: \(error)")
        }
    }
}
