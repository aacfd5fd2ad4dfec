import Foundation

/// Every server frame: `{"type", "data", "epoch", "seq", "timestamp"}`.
///
/// `seq` increases with every event broadcast in a session and never resets;
/// direct replies (`stateSync`, `pong`, `ack`, `error`) and the passing device-sync
/// frames (`syncStatus`, `calibration`, `calibrationResult`, `resync`) and a member's own
/// `myChoices` carry the session's current `seq` without advancing it
/// (`ServerEventType.advancesSeq`).
public struct ServerEnvelope: Hashable, Sendable {
    public var event: ServerEvent
    public var epoch: Int64
    public var seq: Int64
    public var timestamp: Millis

    /// Creates an envelope.
    public init(event: ServerEvent, epoch: Int64, seq: Int64, timestamp: Millis) {
        self.event = event
        self.epoch = epoch
        self.seq = seq
        self.timestamp = timestamp
    }

    /// Encodes the envelope as JSON text (the same bytes as `WireCoding.encoder` gives).
    public func jsonString() -> String {
        String(decoding: jsonBytes(), as: UTF8.self)
    }

    /// Decodes a server frame, mapping every failure to a typed error.
    public static func decode(_ data: Data) throws(JamError) -> ServerEnvelope {
        try WireCoding.decode(ServerEnvelope.self, from: data)
    }
}

extension ServerEnvelope: Codable {
    private enum Keys: String, CodingKey { case type, data, epoch, seq, timestamp }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        let rawType = try c.decode(String.self, forKey: .type)
        guard let type = ServerEventType(rawValue: rawType) else {
            throw UnknownTypeError(type: rawType)
        }
        epoch = try c.decode(Int64.self, forKey: .epoch)
        seq = try c.decode(Int64.self, forKey: .seq)
        timestamp = try c.decode(Millis.self, forKey: .timestamp)
        func data<T: Decodable>(_: T.Type) throws -> T { try c.decode(T.self, forKey: .data) }
        switch type {
        case .stateSync: event = .stateSync(try data(SessionView.self))
        case .memberJoined: event = .memberJoined(try data(Member.self))
        case .memberLeft: event = .memberLeft(try data(MemberLeft.self))
        case .memberUpdated: event = .memberUpdated(try data(Member.self))
        case .queueUpdate: event = .queueUpdate(try data(QueueUpdate.self))
        case .queueItemAdded: event = .queueItemAdded(try data(QueueItemAdded.self))
        case .queueItemRemoved: event = .queueItemRemoved(try data(QueueItemRemoved.self))
        case .votesUpdate: event = .votesUpdate(try data(VotesUpdate.self))
        case .playPrepare: event = .playPrepare(try data(PlayPrepare.self))
        case .playCommit: event = .playCommit(try data(PlayCommit.self))
        case .pause: event = .pause(try data(TimelineChange.self))
        case .resume: event = .resume(try data(TimelineChange.self))
        case .seek: event = .seek(try data(TimelineChange.self))
        case .stopped: event = .stopped(try data(PlaybackStopped.self))
        case .skipRequests: event = .skipRequests(try data(SkipRequestsUpdate.self))
        case .sessionUpdated: event = .sessionUpdated(try data(SessionUpdated.self))
        case .pong: event = .pong(try data(Pong.self))
        case .ack: event = .ack(try data(Ack.self))
        case .error: event = .error(try data(ErrorEvent.self))
        case .sessionEnded: event = .sessionEnded(try data(SessionEnded.self))
        case .deviceDelay: event = .deviceDelay(try data(DeviceDelay.self))
        case .syncStatus: event = .syncStatus(try data(SyncStatusUpdate.self))
        case .calibration: event = .calibration(try data(CalibrationPlan.self))
        case .calibrationResult: event = .calibrationResult(try data(CalibrationOutcome.self))
        case .resync: event = .resync(try data(Resync.self))
        case .myChoices: event = .myChoices(try data(MyChoices.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(event.type.rawValue, forKey: .type)
        try c.encode(epoch, forKey: .epoch)
        try c.encode(seq, forKey: .seq)
        try c.encode(timestamp, forKey: .timestamp)
        switch event {
        case .stateSync(let v): try c.encode(v, forKey: .data)
        case .memberJoined(let v): try c.encode(v, forKey: .data)
        case .memberLeft(let v): try c.encode(v, forKey: .data)
        case .memberUpdated(let v): try c.encode(v, forKey: .data)
        case .queueUpdate(let v): try c.encode(v, forKey: .data)
        case .queueItemAdded(let v): try c.encode(v, forKey: .data)
        case .queueItemRemoved(let v): try c.encode(v, forKey: .data)
        case .votesUpdate(let v): try c.encode(v, forKey: .data)
        case .playPrepare(let v): try c.encode(v, forKey: .data)
        case .playCommit(let v): try c.encode(v, forKey: .data)
        case .pause(let v): try c.encode(v, forKey: .data)
        case .resume(let v): try c.encode(v, forKey: .data)
        case .seek(let v): try c.encode(v, forKey: .data)
        case .stopped(let v): try c.encode(v, forKey: .data)
        case .skipRequests(let v): try c.encode(v, forKey: .data)
        case .sessionUpdated(let v): try c.encode(v, forKey: .data)
        case .pong(let v): try c.encode(v, forKey: .data)
        case .ack(let v): try c.encode(v, forKey: .data)
        case .error(let v): try c.encode(v, forKey: .data)
        case .sessionEnded(let v): try c.encode(v, forKey: .data)
        case .deviceDelay(let v): try c.encode(v, forKey: .data)
        case .syncStatus(let v): try c.encode(v, forKey: .data)
        case .calibration(let v): try c.encode(v, forKey: .data)
        case .calibrationResult(let v): try c.encode(v, forKey: .data)
        case .resync(let v): try c.encode(v, forKey: .data)
        case .myChoices(let v): try c.encode(v, forKey: .data)
        }
    }
}
