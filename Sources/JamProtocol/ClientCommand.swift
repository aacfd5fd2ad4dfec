/// `hello {lastSeq?}`: resume from the last `seq` the client applied.
public struct Hello: Codable, Hashable, Sendable {
    public var lastSeq: Int64?
    /// Creates the payload.
    public init(lastSeq: Int64?) { self.lastSeq = lastSeq }
}

/// `ping {clientSendTime}`: the client's send instant in its own clock (ms, fractional allowed).
public struct Ping: Codable, Hashable, Sendable {
    public var clientSendTime: Double
    /// Creates the payload.
    public init(clientSendTime: Double) { self.clientSendTime = clientSendTime }
}

/// `addToQueue {track, nonce}`; the same nonce twice is one add.
public struct AddToQueue: Codable, Hashable, Sendable {
    public var track: Track
    public var nonce: String
    /// Creates the payload.
    public init(track: Track, nonce: String) {
        self.track = track
        self.nonce = nonce
    }
}

/// Names a queue item.
public struct ItemRef: Codable, Hashable, Sendable {
    public var itemId: ItemID
    /// Creates the payload.
    public init(itemId: ItemID) { self.itemId = itemId }
}

/// `vote {itemId, value}` with value -1, 0 (clear) or +1.
public struct Vote: Codable, Hashable, Sendable {
    public var itemId: ItemID
    public var value: Int
    /// Creates the payload.
    public init(itemId: ItemID, value: Int) {
        self.itemId = itemId
        self.value = value
    }
}

/// `seek {positionMs, epoch?}`.
public struct Seek: Codable, Hashable, Sendable {
    public var positionMs: Int64
    /// The item the host meant, by its epoch: with it, the seek is refused (`conflict`) once
    /// another item is current, so one sent again after a reconnect does not move the next song.
    public var epoch: Int64?
    /// Creates the payload.
    public init(positionMs: Int64, epoch: Int64? = nil) {
        self.positionMs = positionMs
        self.epoch = epoch
    }
}

/// `skip {epoch?}`, `requestSkip {epoch?}` and `withdrawSkipRequest {epoch?}`.
public struct Skip: Codable, Hashable, Sendable {
    /// The item meant, by its epoch: with it, the skip (or a member's request to skip, or its
    /// withdrawal) is refused (`conflict`) once another item is current, so one sent again
    /// after a reconnect does not skip, or count against, the next song.
    public var epoch: Int64?
    /// Creates the payload.
    public init(epoch: Int64? = nil) { self.epoch = epoch }
}

/// `pause {epoch?}` and `resume {epoch?}`.
public struct Pause: Codable, Hashable, Sendable {
    /// The item the host meant, by its epoch: with it, the pause or resume is refused
    /// (`conflict`) once another item is current, so one pressed while offline and sent after
    /// the reconnect does not stop, or start, the next song.
    public var epoch: Int64?
    /// Creates the payload.
    public init(epoch: Int64? = nil) { self.epoch = epoch }
}

/// `ready {epoch}`: the device has loaded the prepared item.
public struct Ready: Codable, Hashable, Sendable {
    public var epoch: Int64
    /// Creates the payload.
    public init(epoch: Int64) { self.epoch = epoch }
}

/// `syncReport`: how well a device follows the timeline. `errorMs` is the clock's error
/// bound (half the best round trip), `driftMs` the playback error (player − timeline);
/// the optional fields name the device and what it accounts for.
public struct SyncReport: Codable, Hashable, Sendable {
    public var epoch: Int64
    public var offsetMs: Double
    public var errorMs: Double
    public var driftMs: Double
    /// The reporting device's stable id.
    public var deviceId: String?
    /// The output path's latency the device schedules for.
    public var outputLatencyMs: Double?
    /// The device's manual or calibrated delay.
    public var delayMs: Double?
    /// How fast the device's clock runs against the server's, in parts per million.
    public var clockDriftPpm: Double?
    /// True while the device plays the session's audio (it can then take part in a calibration).
    public var playing: Bool?
    /// Whether the device can record the room, and so be a calibration's listener. A device
    /// that says false is never made one; one that says nothing is taken at its host's word.
    public var canListen: Bool?
    /// Creates the payload.
    public init(
        epoch: Int64, offsetMs: Double, errorMs: Double, driftMs: Double, deviceId: String? = nil, outputLatencyMs: Double? = nil,
        delayMs: Double? = nil, clockDriftPpm: Double? = nil, playing: Bool? = nil, canListen: Bool? = nil
    ) {
        self.epoch = epoch
        self.offsetMs = offsetMs
        self.errorMs = errorMs
        self.driftMs = driftMs
        self.deviceId = deviceId
        self.outputLatencyMs = outputLatencyMs
        self.delayMs = delayMs
        self.clockDriftPpm = clockDriftPpm
        self.playing = playing
        self.canListen = canListen
    }

    /// Checks every figure.
    public func validate() throws(JamError) {
        let figures = [offsetMs, errorMs, driftMs] + [outputLatencyMs, delayMs, clockDriftPpm].compactMap { $0 }
        if !figures.allSatisfy(\.isFinite) { throw JamError(.invalidField, "syncReport values must be finite numbers") }
        // Hosts' screens show these figures: beyond what any clock or player can be off by,
        // they are garbage that would not even fit a whole number.
        if !figures.allSatisfy({ abs($0) <= Validate.maxSyncFigure }) {
            throw JamError(.invalidField, "syncReport values must be within ±\(Int64(Validate.maxSyncFigure))")
        }
        if errorMs < 0 { throw JamError(.invalidField, "errorMs must not be negative") }
        if let deviceId { try Validate.deviceId(deviceId) }
        if let outputLatencyMs, outputLatencyMs < 0 || outputLatencyMs > Validate.maxDeviceDelayMs {
            throw JamError(.invalidField, "outputLatencyMs must be from 0 to \(Int(Validate.maxDeviceDelayMs))")
        }
        if let delayMs { try Validate.deviceDelay(delayMs) }
    }
}

/// Names a member.
public struct UserRef: Codable, Hashable, Sendable {
    public var userId: UserID
    /// Creates the payload.
    public init(userId: UserID) { self.userId = userId }
}

/// `promote {userId, role?}`: make a member co-host (default) or back to member.
public struct Promote: Codable, Hashable, Sendable {
    public var userId: UserID
    public var role: Role?
    /// Creates the payload.
    public init(userId: UserID, role: Role? = nil) {
        self.userId = userId
        self.role = role
    }
}

/// Every command a client may send on the realtime socket.
public enum ClientCommand: Hashable, Sendable {
    case hello(Hello)
    case ping(Ping)
    case addToQueue(AddToQueue)
    case removeFromQueue(ItemRef)
    case vote(Vote)
    case skip(Skip)
    case requestSkip(Skip)
    case withdrawSkipRequest(Skip)
    case play
    case pause(Pause)
    case resume(Pause)
    case seek(Seek)
    case ready(Ready)
    case syncReport(SyncReport)
    case updateSettings(SettingsPatch)
    case promote(Promote)
    case kick(UserRef)
    case leave
    case setDeviceDelay(SetDeviceDelay)
    case calibrate(Calibrate)
    case calibrationReport(CalibrationReport)
    case resync(Resync)

    /// The `type` string of the frame.
    public var type: ClientCommandType {
        switch self {
        case .hello: .hello
        case .ping: .ping
        case .addToQueue: .addToQueue
        case .removeFromQueue: .removeFromQueue
        case .vote: .vote
        case .skip: .skip
        case .requestSkip: .requestSkip
        case .withdrawSkipRequest: .withdrawSkipRequest
        case .play: .play
        case .pause: .pause
        case .resume: .resume
        case .seek: .seek
        case .ready: .ready
        case .syncReport: .syncReport
        case .updateSettings: .updateSettings
        case .promote: .promote
        case .kick: .kick
        case .leave: .leave
        case .setDeviceDelay: .setDeviceDelay
        case .calibrate: .calibrate
        case .calibrationReport: .calibrationReport
        case .resync: .resync
        }
    }

    /// Checks value ranges a well-formed frame may still violate.
    public func validate() throws(JamError) {
        switch self {
        case .hello(let h):
            if let s = h.lastSeq, s < 0 { throw JamError(.invalidField, "lastSeq must not be negative, got \(s)") }
        case .ping(let p):
            if !p.clientSendTime.isFinite { throw JamError(.invalidField, "clientSendTime must be a finite number") }
        case .addToQueue(let a):
            try a.track.validate()
            try Validate.nonce(a.nonce)
        case .vote(let v): try Validate.vote(v.value)
        case .seek(let s):
            try Validate.position(s.positionMs)
            try Validate.epoch(s.epoch)
        case .skip(let s), .requestSkip(let s), .withdrawSkipRequest(let s): try Validate.epoch(s.epoch)
        case .pause(let p), .resume(let p): try Validate.epoch(p.epoch)
        case .ready(let r): try Validate.epoch(r.epoch)
        case .syncReport(let r): try r.validate()
        case .setDeviceDelay(let d):
            try Validate.deviceId(d.deviceId)
            try Validate.deviceDelay(d.delayMs)
        case .calibrate(let c): try Validate.deviceId(c.deviceId)
        case .calibrationReport(let r): try r.validate()
        case .resync(let r): if let deviceId = r.deviceId { try Validate.deviceId(deviceId) }
        case .updateSettings(let patch):
            if patch.isEmpty { throw JamError(.invalidField, "updateSettings must change at least one setting") }
            try patch.validate()
        case .removeFromQueue, .play, .promote, .kick, .leave:
            break
        }
    }
}

/// The `type` of a client frame.
public enum ClientCommandType: String, Codable, Sendable, CaseIterable {
    case hello, ping, addToQueue, removeFromQueue, vote, skip, requestSkip, withdrawSkipRequest, play, pause, resume, seek
    case ready, syncReport, updateSettings, promote, kick, leave
    case setDeviceDelay, calibrate, calibrationReport, resync
}
