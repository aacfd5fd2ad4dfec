import JamProtocol

/// Device delays: what each member device adds to its output latency, kept with the
/// session so it survives reloads, reconnects and restarts.
extension SessionState {
    /// Most devices with a delay per member.
    public static let deviceDelaysPerMember = 8
    /// Most devices with a delay per session.
    public static let deviceDelaysPerSession = 512

    /// The delay of one device (zero when none is set).
    public func deviceDelay(of device: DeviceRef) -> Double {
        deviceDelays?.first { $0.device == device }?.delayMs ?? 0
    }

    mutating func setDeviceDelay(_ delay: DeviceDelay, by user: UserID, role: Role, at now: Millis, into outcome: inout Outcome) throws(JamError) {
        if delay.userId != user { try requireHostControls(role, "set another member's device delay") }
        guard member(delay.userId) != nil else { throw JamError(.notFound, "no member \(delay.userId) in this session") }
        try Validate.deviceId(delay.deviceId)
        try Validate.deviceDelay(delay.delayMs)
        // A tenth of a millisecond is far below what anyone hears; it keeps stored figures short.
        let rounded = (delay.delayMs * 10).rounded() / 10
        var delays = deviceDelays ?? []
        let index = delays.firstIndex { $0.device == delay.device }
        let old = index.map { delays[$0].delayMs } ?? 0
        guard rounded != old else { return }
        if let index {
            if rounded == 0 { delays.remove(at: index) } else { delays[index].delayMs = rounded }
        } else {
            if delays.count(where: { $0.userId == delay.userId }) >= Self.deviceDelaysPerMember {
                throw JamError(.queueLimit, "a member may keep delays for at most \(Self.deviceDelaysPerMember) devices; set one to 0 first")
            }
            if delays.count >= Self.deviceDelaysPerSession {
                throw JamError(.queueLimit, "this session keeps delays for at most \(Self.deviceDelaysPerSession) devices")
            }
            delays.append(DeviceDelay(userId: delay.userId, deviceId: delay.deviceId, delayMs: rounded))
        }
        deviceDelays = delays.isEmpty ? nil : delays
        emit(.deviceDelay(DeviceDelay(userId: delay.userId, deviceId: delay.deviceId, delayMs: rounded)), at: now, into: &outcome)
    }

    /// A member who leaves takes their devices' delays along.
    mutating func forgetDeviceDelays(of user: UserID) {
        guard let delays = deviceDelays else { return }
        let kept = delays.filter { $0.userId != user }
        deviceDelays = kept.isEmpty ? nil : kept
    }
}
