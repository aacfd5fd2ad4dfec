/// `calibrate {userId?, deviceId}`: a host starts a room calibration with this device
/// (the host's own when `userId` is absent) listening.
public struct Calibrate: Codable, Hashable, Sendable {
    public var userId: UserID?
    public var deviceId: String
    /// Creates the payload.
    public init(userId: UserID? = nil, deviceId: String) {
        self.userId = userId
        self.deviceId = deviceId
    }
}

/// One device's turn: it plays the probe so that it is heard at server instant `atMs`.
public struct CalibrationProbe: Codable, Hashable, Sendable {
    public var userId: UserID
    public var deviceId: String
    public var atMs: Double
    /// Creates the entry.
    public init(userId: UserID, deviceId: String, atMs: Double) {
        self.userId = userId
        self.deviceId = deviceId
        self.atMs = atMs
    }

    /// The device whose turn it is.
    public var device: DeviceRef { DeviceRef(userId: userId, deviceId: deviceId) }
}

/// `calibration {id, listener, probes, probeMs, windowMs, repeats, repeatMs}`: the
/// announced plan. The listener records from before the first probe to after the last;
/// each device in `probes` plays the probe `repeats` times, `repeatMs` apart, from its
/// instant on (its output latency and delay applied), and the listener keeps the median
/// arrival, so one glitch in a recording does not move a device. The listener's own turn
/// comes first, so its path cancels out of everyone else's.
public struct CalibrationPlan: Codable, Hashable, Sendable {
    public var id: String
    public var listener: DeviceRef
    public var probes: [CalibrationProbe]
    /// The probe's length.
    public var probeMs: Double
    /// How far from its instant a device's first probe is looked for, either way.
    public var windowMs: Double
    /// How many times each device plays the probe.
    public var repeats: Int
    /// From one of a device's probes to its next.
    public var repeatMs: Double
    /// Creates the plan.
    public init(
        id: String, listener: DeviceRef, probes: [CalibrationProbe], probeMs: Double, windowMs: Double,
        repeats: Int = CalibrationRules.repeats, repeatMs: Double = CalibrationRules.repeatMs
    ) {
        self.id = id
        self.listener = listener
        self.probes = probes
        self.probeMs = probeMs
        self.windowMs = windowMs
        self.repeats = repeats
        self.repeatMs = repeatMs
    }
}

/// Where the listener heard one device's probe: `offsetMs` after its announced instant
/// (negative: before), or null when it was not heard.
public struct ProbeArrival: Codable, Hashable, Sendable {
    public var userId: UserID
    public var deviceId: String
    public var offsetMs: Double?
    /// Creates the entry.
    public init(userId: UserID, deviceId: String, offsetMs: Double?) {
        self.userId = userId
        self.deviceId = deviceId
        self.offsetMs = offsetMs
    }

    /// The device it is about.
    public var device: DeviceRef { DeviceRef(userId: userId, deviceId: deviceId) }
}

/// Why a listener heard nothing, when it knows: the result then names the cause, not the volume.
public enum ListenerProblem: String, Codable, Hashable, Sendable, CaseIterable, WireEnum {
    /// The page or app has no microphone to use (a browser page on plain http is not let near one).
    case microphoneUnavailable
    /// The microphone was refused (the person said no, or the system did).
    case microphoneRefused
    /// The plan reached the listener too late to play its own probe, which every figure is
    /// measured against (`CalibrationRules.minimumProbeLeadMs`).
    case planTooLate

    /// What the calibration's result says.
    public var explanation: String {
        switch self {
        case .microphoneUnavailable:
            "the listening device could not use a microphone (a browser allows one only over https or on localhost); nothing was changed"
        case .microphoneRefused: "the listening device was not allowed its microphone; allow it and try again; nothing was changed"
        case .planTooLate:
            "the listening device got the calibration too late to play its own probe (a slow connection?); try again; nothing was changed"
        }
    }
}

/// `calibrationReport {calibrationId, arrivals, problem?}`: what the listener heard, and, when
/// it could not listen, why.
public struct CalibrationReport: Codable, Hashable, Sendable {
    public var calibrationId: String
    public var arrivals: [ProbeArrival]
    /// Set when the listener could not record at all (every arrival is then null).
    public var problem: ListenerProblem?
    /// Creates the payload.
    public init(calibrationId: String, arrivals: [ProbeArrival], problem: ListenerProblem? = nil) {
        self.calibrationId = calibrationId
        self.arrivals = arrivals
        self.problem = problem
    }

    /// Checks every figure; a probe appears at most once.
    public func validate() throws(JamError) {
        if calibrationId.isEmpty || calibrationId.utf8.count > 64 {
            throw JamError(.invalidField, "calibrationId must be 1 to 64 characters")
        }
        if arrivals.count > CalibrationRules.maxDevices {
            throw JamError(.invalidField, "at most \(CalibrationRules.maxDevices) arrivals, got \(arrivals.count)")
        }
        var seen = Set<DeviceRef>()
        for arrival in arrivals {
            try Validate.deviceId(arrival.deviceId)
            if let offset = arrival.offsetMs, !offset.isFinite || abs(offset) > CalibrationRules.windowMs {
                throw JamError(.invalidField, "offsetMs must be a number within ±\(Int(CalibrationRules.windowMs)) ms")
            }
            if !seen.insert(arrival.device).inserted {
                throw JamError(.invalidField, "device \(arrival.deviceId) of \(arrival.userId) appears twice")
            }
            if problem != nil, arrival.offsetMs != nil {
                throw JamError(.invalidField, "a report with a problem heard nothing: every offsetMs must be null")
            }
        }
    }
}

/// One device's outcome: heard or not, its offset from the listener's own probe and
/// the delay it now carries.
public struct CalibrationDeviceResult: Codable, Hashable, Sendable {
    public var userId: UserID
    public var deviceId: String
    public var heard: Bool
    /// Arrival after the listener's own probe's, both measured against their instants.
    public var correctionMs: Double?
    /// The device's delay after the calibration.
    public var delayMs: Double?
    /// Creates the entry.
    public init(userId: UserID, deviceId: String, heard: Bool, correctionMs: Double?, delayMs: Double?) {
        self.userId = userId
        self.deviceId = deviceId
        self.heard = heard
        self.correctionMs = correctionMs
        self.delayMs = delayMs
    }
}

/// `calibrationResult {id, ok, message, results}`: how a calibration ended, to everyone.
public struct CalibrationOutcome: Codable, Hashable, Sendable {
    public var id: String
    public var ok: Bool
    /// For people: what happened, or why it failed.
    public var message: String
    public var results: [CalibrationDeviceResult]
    /// Creates the payload.
    public init(id: String, ok: Bool, message: String, results: [CalibrationDeviceResult]) {
        self.id = id
        self.ok = ok
        self.message = message
        self.results = results
    }
}

/// The calibration's fixed figures, shared by the server's plan and the listener's search.
public enum CalibrationRules {
    /// Most devices in one calibration.
    public static let maxDevices = 32
    /// From the announcement to the first probe: every device has to get the plan, and the
    /// listener's microphone has to settle (its first seconds can still skip a few ms).
    public static let leadMs = 3_000.0
    /// From one device's turn to the next: its repeats plus a search window either side.
    public static let slotMs = 1_400.0
    /// Each device plays the probe this often: the median of three survives one glitch.
    public static let repeats = 3
    /// From one of a device's probes to its next: a reverberant tail is 20 dB down by then.
    public static let repeatMs = 200.0
    /// How far from its instant a probe is looked for (a Bluetooth path nobody accounted for).
    public static let windowMs = 400.0
    /// The probe's length.
    public static let probeMs = 80.0
    /// The probe is a linear chirp from here…
    public static let probeLowHz = 1_500.0
    /// …to here, Hz: the band every phone speaker and microphone reproduce.
    public static let probeHighHz = 7_000.0
    /// The chirp fades in and out over this long, so it does not click.
    public static let probeFadeMs = 5.0
    /// The chirp's peak amplitude before the player's gain.
    public static let probePeak = 0.9
    /// How long after the last probe the listener has to report.
    public static let reportWithinMs = 15_000.0
    /// A device plays no probe when its first would have to leave the player sooner than
    /// this: a probe sounded late is heard late, and its lateness would be stored as the
    /// device's delay. Not heard, the device keeps the delay it has.
    public static let minimumProbeLeadMs = 50.0
}
