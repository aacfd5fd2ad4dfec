/// One device of one member. `deviceId` is the device's own stable id (a browser keeps
/// it in local storage), so a delay set for it survives reloads and reconnects.
public struct DeviceRef: Codable, Hashable, Sendable {
    public var userId: UserID
    public var deviceId: String
    /// Creates the reference.
    public init(userId: UserID, deviceId: String) {
        self.userId = userId
        self.deviceId = deviceId
    }
}

/// `deviceDelay {userId, deviceId, delayMs}`: how much later than its reported output
/// latency a device is heard. The device starts that much earlier; negative values
/// start it later. Zero removes the entry.
public struct DeviceDelay: Codable, Hashable, Sendable {
    public var userId: UserID
    public var deviceId: String
    public var delayMs: Double
    /// Creates the payload.
    public init(userId: UserID, deviceId: String, delayMs: Double) {
        self.userId = userId
        self.deviceId = deviceId
        self.delayMs = delayMs
    }

    /// The device it belongs to.
    public var device: DeviceRef { DeviceRef(userId: userId, deviceId: deviceId) }
}

/// `setDeviceDelay {userId?, deviceId, delayMs}`: a member sets their own device's delay
/// (no `userId`); a host or co-host may set any member's.
public struct SetDeviceDelay: Codable, Hashable, Sendable {
    public var userId: UserID?
    public var deviceId: String
    public var delayMs: Double
    /// Creates the payload.
    public init(userId: UserID? = nil, deviceId: String, delayMs: Double) {
        self.userId = userId
        self.deviceId = deviceId
        self.delayMs = delayMs
    }
}

/// `resync {userId, deviceId?}`: a host asks a member's device (or all of theirs) to
/// measure its clock again and restart on the timeline; the same shape reaches the device.
public struct Resync: Codable, Hashable, Sendable {
    public var userId: UserID
    public var deviceId: String?
    /// Creates the payload.
    public init(userId: UserID, deviceId: String? = nil) {
        self.userId = userId
        self.deviceId = deviceId
    }
}

/// How well a device follows, as the sync column shows it.
public enum SyncGrade: String, Codable, Hashable, Sendable, CaseIterable, WireEnum {
    /// Within what people can hear as one sound.
    case good
    /// Audible as a slight echo, or not measured for a while.
    case fair
    /// Clearly apart, or silent for long.
    case poor

    /// Worst of the clock error bound and the playback error; a report older than
    /// `staleMs` is at best fair, older than `lostMs` poor. A device not playing has no
    /// playback error to speak of: what it reports is from its last song, so only its clock counts.
    public static func of(clockErrorMs: Double, playbackErrorMs: Double, playing: Bool = true, ageMs: Double) -> SyncGrade {
        let error = max(abs(clockErrorMs), playing ? abs(playbackErrorMs) : 0)
        var grade: SyncGrade = error <= goodWithinMs ? .good : error <= fairWithinMs ? .fair : .poor
        if ageMs > lostMs { grade = .poor } else if ageMs > staleMs, grade == .good { grade = .fair }
        return grade
    }

    /// Clicks stop fusing past a few milliseconds.
    public static let goodWithinMs = 5.0
    /// Music starts to echo past ~20–40 ms.
    public static let fairWithinMs = 20.0
    /// Devices report every few seconds; two missed reports read as stale.
    public static let staleMs = 12_000.0
    /// Gone quiet.
    public static let lostMs = 30_000.0
}

/// One device's latest `syncReport`, as hosts see it.
public struct DeviceSyncStatus: Codable, Hashable, Sendable {
    public var userId: UserID
    public var deviceId: String?
    /// Half the best round trip: how far the device's clock may be off.
    public var clockErrorMs: Double
    /// Player position − timeline position at the last measurement.
    public var playbackErrorMs: Double
    /// How fast the device's clock runs against the server's, in parts per million.
    public var clockDriftPpm: Double?
    /// The output path's latency the device accounts for.
    public var outputLatencyMs: Double?
    /// The manual or calibrated delay the device applies.
    public var delayMs: Double?
    /// True while the device plays the session's audio.
    public var playing: Bool
    /// Whether the device can record the room (a calibration's listener); nil when its
    /// client does not say.
    public var canListen: Bool?
    /// How long ago the report arrived.
    public var ageMs: Double
    public var grade: SyncGrade
    /// Creates an entry.
    public init(
        userId: UserID, deviceId: String?, clockErrorMs: Double, playbackErrorMs: Double, clockDriftPpm: Double?,
        outputLatencyMs: Double?, delayMs: Double?, playing: Bool, canListen: Bool? = nil, ageMs: Double, grade: SyncGrade
    ) {
        self.userId = userId
        self.deviceId = deviceId
        self.clockErrorMs = clockErrorMs
        self.playbackErrorMs = playbackErrorMs
        self.clockDriftPpm = clockDriftPpm
        self.outputLatencyMs = outputLatencyMs
        self.delayMs = delayMs
        self.playing = playing
        self.canListen = canListen
        self.ageMs = ageMs
        self.grade = grade
    }
}

/// `syncStatus {devices}`: every reporting device's sync, to hosts and co-hosts, at most
/// once a second.
public struct SyncStatusUpdate: Codable, Hashable, Sendable {
    public var devices: [DeviceSyncStatus]
    /// Creates the payload.
    public init(devices: [DeviceSyncStatus]) { self.devices = devices }
}

extension Validate {
    /// Longest device id, in bytes.
    public static let maxDeviceId = 64
    /// Largest manual or calibrated delay either way, in milliseconds.
    public static let maxDeviceDelayMs = 2_000.0
    /// Largest figure of a sync report either way: a clock set to 1970 is off by ~5.6e13 ms.
    public static let maxSyncFigure = 1e15

    /// Rejects an empty, over-long or oddly spelled device id (letters, digits, `-`, `_`).
    public static func deviceId(_ value: String) throws(JamError) {
        if value.isEmpty || value.utf8.count > maxDeviceId {
            throw JamError(.invalidField, "deviceId must be 1 to \(maxDeviceId) characters")
        }
        let allowed = value.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x2D
                || byte == 0x5F
        }
        if !allowed { throw JamError(.invalidField, "deviceId may hold only letters, digits, '-' and '_'") }
    }

    /// Rejects a delay that is not a finite number within ±`maxDeviceDelayMs`.
    public static func deviceDelay(_ value: Double) throws(JamError) {
        if !value.isFinite || abs(value) > maxDeviceDelayMs {
            throw JamError(.invalidField, "delayMs must be a number from -\(Int(maxDeviceDelayMs)) to \(Int(maxDeviceDelayMs))")
        }
    }
}
