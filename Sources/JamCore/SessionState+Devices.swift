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

    /// A member who leaves takes their devices' delays, leads and round trips along.
    mutating func forgetDeviceDelays(of user: UserID) {
        if let delays = deviceDelays {
            let kept = delays.filter { $0.userId != user }
            deviceDelays = kept.isEmpty ? nil : kept
        }
        if let leads = deviceLeads {
            let kept = leads.filter { $0.userId != user }
            deviceLeads = kept.isEmpty ? nil : kept
        }
        if let trips = deviceRoundTrips {
            let kept = trips.filter { $0.userId != user }
            deviceRoundTrips = kept.isEmpty ? nil : kept
        }
    }

    /// How long a device's round trip counts without a new one: devices report every 5 s, so
    /// one that left (or stopped listening) stops setting its member's lead within 30 s.
    public static let roundTripFreshMs: Millis = 30_000

    /// Notes the reporting device's round trip (twice its clock error, within the longest
    /// lead); the member's is then that of their slowest device that reported lately. Whether
    /// it plays at the moment does not count: a paused or idle device still needs the lead of
    /// the resume or start to come (as its output latency does, `recordLead`).
    mutating func recordRoundTrip(of report: SyncReport, from user: UserID, at now: Millis) {
        let roundTrip = min(max(0, report.errorMs * 2), Double(timing.maxLeadMs))
        guard rules.roundTripsPerDevice else {
            roundTrips[user] = roundTrip
            return
        }
        let deviceId = report.deviceId ?? ""
        // The member's own entries that went stale go, and this device's old one.
        var trips = (deviceRoundTrips ?? []).filter { trip in
            trip.userId != user || (trip.deviceId != deviceId && now - trip.reportedAt < Self.roundTripFreshMs)
        }
        if trips.count(where: { $0.userId == user }) >= Self.deviceDelaysPerMember, let oldest = trips.firstIndex(where: { $0.userId == user }) {
            trips.remove(at: oldest)
        }
        trips.append(DeviceRoundTrip(userId: user, deviceId: deviceId, roundTripMs: roundTrip, reportedAt: now))
        deviceRoundTrips = trips
        var slowest = roundTrip
        for trip in trips where trip.userId == user { slowest = max(slowest, trip.roundTripMs) }
        roundTrips[user] = slowest
    }

    /// Notes how far ahead the reporting device plays. Rounded up to 5 ms, so a latency
    /// figure that wobbles by a fraction does not change the state (and the log) each report.
    mutating func recordLead(of report: SyncReport, from user: UserID) {
        let ahead = max(0, (report.outputLatencyMs ?? 0) + (report.delayMs ?? 0))
        let cap = Double(max(0, timing.maxLeadMs - timing.commitMarginMs))
        let lead = Int64((min(ahead, cap) / 5).rounded(.up)) * 5
        let deviceId = report.deviceId ?? ""
        var leads = deviceLeads ?? []
        if let index = leads.firstIndex(where: { $0.userId == user && $0.deviceId == deviceId }) {
            if lead == 0 { leads.remove(at: index) } else { leads[index].leadMs = lead }
        } else if lead > 0 {
            if leads.count(where: { $0.userId == user }) >= Self.deviceDelaysPerMember,
                let oldest = leads.firstIndex(where: { $0.userId == user })
            {
                leads.remove(at: oldest)
            }
            leads.append(DeviceLead(userId: user, deviceId: deviceId, leadMs: lead))
        }
        deviceLeads = leads.isEmpty ? nil : leads
    }

    /// The furthest any connected member's device plays ahead of the timeline.
    public func slowestDeviceLeadMs() -> Int64 {
        guard let leads = deviceLeads else { return 0 }
        var slowest: Int64 = 0
        for lead in leads where member(lead.userId)?.connected == true { slowest = max(slowest, lead.leadMs) }
        return slowest
    }

    /// How long before a start its commit goes out at the latest: the margin, plus however
    /// far ahead the slowest device has to start playing for it to be heard on time.
    public func commitLeadMs() -> Int64 {
        timing.commitMarginMs + slowestDeviceLeadMs()
    }
}
