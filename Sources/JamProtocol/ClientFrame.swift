import Foundation

/// A client frame: `{"type", "data", "id"?}`. A command with an `id` is
/// answered with `ack {id}` or `error {id, code, message}`.
public struct ClientFrame: Hashable, Sendable {
    public var command: ClientCommand
    public var id: String?

    /// Creates a frame.
    public init(_ command: ClientCommand, id: String? = nil) {
        self.command = command
        self.id = id
    }

    /// Longest accepted command `id`, in bytes.
    public static let maxIdLength = 128
    /// What no command `id` may start with, nor hold after a space: the server keeps a REST
    /// call's `Idempotency-Key` under it, in the same memory of answers and read from the
    /// right of its answer key, so such an id could answer for a key or be read as one.
    public static let reservedIdPrefix = "key:"

    /// Whether `id` may name a command: 1 to `maxIdLength` bytes without control characters,
    /// neither starting with `reservedIdPrefix` nor holding it after a space. An id is stored
    /// with its answer (PostgreSQL's text refuses U+0000: one such id would hold up every later
    /// commit of its node) and logged.
    public static func accepts(id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= maxIdLength && !id.hasPrefix(reservedIdPrefix)
            && !id.utf8.contains { $0 < 0x20 || $0 == 0x7F }
            // Every command with an id passes here: a space is rare, the search after it costly.
            && !(id.utf8.contains(UInt8(ascii: " ")) && id.contains(reservedAfterSpace))
    }

    private static let reservedAfterSpace = " " + reservedIdPrefix

    /// Largest frame a server takes by default, in bytes; a larger one closes the socket with
    /// 1009.
    public static let maxBytes = 64 * 1024

    /// Decodes and validates a frame; every failure is a typed error naming the problem.
    public static func decode(_ data: Data) throws(JamError) -> ClientFrame {
        // Votes, removals and adds, the frames members send most, skip JSONDecoder when they can.
        let frame: ClientFrame
        if let quick = data.withUnsafeBytes({ quickRead($0) }) {
            frame = quick
        } else {
            frame = try WireCoding.decode(ClientFrame.self, from: data)
        }
        try frame.command.validate()
        return frame
    }

    /// Best effort to recover the `id` of a frame that failed to decode, so the error can name it:
    /// an id refused for its shape (a `key:` prefix, a control character) is named too, as the
    /// sender waits on it; only one too long to echo is not.
    public static func salvageId(_ data: Data) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let id = object["id"] as? String, !id.isEmpty, id.utf8.count <= maxIdLength else { return nil }
        return id
    }

    /// Encodes the frame as JSON text.
    public func jsonString() -> String {
        do {
            return String(decoding: try WireCoding.encoder.encode(self), as: UTF8.self)
        } catch {
            preconditionFailure("client frame failed to encode: \(error)")
        }
    }
}

extension ClientFrame: Codable {
    private enum Keys: String, CodingKey { case type, data, id }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        let rawType = try c.decode(String.self, forKey: .type)
        id = try c.decodeIfPresent(String.self, forKey: .id)
        if let id, !ClientFrame.accepts(id: id) {
            throw DecodingError.dataCorruptedError(
                forKey: .id, in: c,
                debugDescription: "id must be 1 to \(ClientFrame.maxIdLength) bytes without control characters, not starting with \"\(ClientFrame.reservedIdPrefix)\" nor holding \" \(ClientFrame.reservedIdPrefix)\" (the server's for REST idempotency keys)")
        }
        guard let type = ClientCommandType(rawValue: rawType) else {
            throw UnknownTypeError(type: rawType)
        }
        func data<T: Decodable>(_: T.Type) throws -> T { try c.decode(T.self, forKey: .data) }
        switch type {
        case .hello: command = .hello(try c.decodeIfPresent(Hello.self, forKey: .data) ?? Hello(lastSeq: nil))
        case .ping: command = .ping(try data(Ping.self))
        case .addToQueue: command = .addToQueue(try data(AddToQueue.self))
        case .removeFromQueue: command = .removeFromQueue(try data(ItemRef.self))
        case .vote: command = .vote(try data(Vote.self))
        case .skip: command = .skip(try c.decodeIfPresent(Skip.self, forKey: .data) ?? Skip())
        case .requestSkip: command = .requestSkip(try c.decodeIfPresent(Skip.self, forKey: .data) ?? Skip())
        case .withdrawSkipRequest: command = .withdrawSkipRequest(try c.decodeIfPresent(Skip.self, forKey: .data) ?? Skip())
        case .play: command = .play
        case .pause: command = .pause(try c.decodeIfPresent(Pause.self, forKey: .data) ?? Pause())
        case .resume: command = .resume(try c.decodeIfPresent(Pause.self, forKey: .data) ?? Pause())
        case .seek: command = .seek(try data(Seek.self))
        case .ready: command = .ready(try data(Ready.self))
        case .syncReport: command = .syncReport(try data(SyncReport.self))
        case .updateSettings: command = .updateSettings(try data(SettingsPatch.self))
        case .promote: command = .promote(try data(Promote.self))
        case .kick: command = .kick(try data(UserRef.self))
        case .leave: command = .leave
        case .setDeviceDelay: command = .setDeviceDelay(try data(SetDeviceDelay.self))
        case .calibrate: command = .calibrate(try data(Calibrate.self))
        case .calibrationReport: command = .calibrationReport(try data(CalibrationReport.self))
        case .resync: command = .resync(try data(Resync.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(command.type.rawValue, forKey: .type)
        try c.encodeIfPresent(id, forKey: .id)
        switch command {
        case .hello(let v): try c.encode(v, forKey: .data)
        case .ping(let v): try c.encode(v, forKey: .data)
        case .addToQueue(let v): try c.encode(v, forKey: .data)
        case .removeFromQueue(let v): try c.encode(v, forKey: .data)
        case .vote(let v): try c.encode(v, forKey: .data)
        case .seek(let v): try c.encode(v, forKey: .data)
        case .skip(let v), .requestSkip(let v), .withdrawSkipRequest(let v): if v.epoch != nil { try c.encode(v, forKey: .data) }
        case .pause(let v), .resume(let v): if v.epoch != nil { try c.encode(v, forKey: .data) }
        case .ready(let v): try c.encode(v, forKey: .data)
        case .syncReport(let v): try c.encode(v, forKey: .data)
        case .updateSettings(let v): try c.encode(v, forKey: .data)
        case .promote(let v): try c.encode(v, forKey: .data)
        case .kick(let v): try c.encode(v, forKey: .data)
        case .setDeviceDelay(let v): try c.encode(v, forKey: .data)
        case .calibrate(let v): try c.encode(v, forKey: .data)
        case .calibrationReport(let v): try c.encode(v, forKey: .data)
        case .resync(let v): try c.encode(v, forKey: .data)
        case .play, .leave: break
        }
    }
}
