import JamProtocol

/// What is heard, not what is played: the output path's latency and this device's delay
/// the engine schedules ahead by, and a host's request to start afresh.
extension SyncEngine {
    /// A host asked this device to re-sync: measure the clock afresh and start again on
    /// the timeline rather than nudging towards it.
    func resync(_ request: Resync) async -> Bool {
        guard let device, request.userId == device.userId, request.deviceId.map({ $0 == device.deviceId }) ?? true else { return false }
        status.resyncs += 1
        await clockSync.reset()
        // Started again on a full first burst, as a first start is, not on the roughest sample.
        clockWaitSince = nil
        clockWaitOver = false
        followed = nil
        restartsAsked += 1
        resetCorrection()
        return true
    }

    /// What the engine schedules ahead by: the output path's latency plus this device's delay.
    var compensationMs: Double { status.outputLatencyMs + status.deviceDelayMs }

    /// Reads the player's output latency (the player smooths it).
    func refreshOutputLatency() async {
        let latency = await player.outputLatencyMs
        if latency.isFinite, latency >= 0 { status.outputLatencyMs = latency }
    }
}
