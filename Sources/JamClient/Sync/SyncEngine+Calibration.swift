import JamProtocol

/// A room calibration, this device's part: when a plan lists it, its probe sounds at the
/// announced server instants as heard, i.e. sent ahead by the output latency and delay,
/// as the music is.
extension SyncEngine {
    /// Schedules this device's probes of `plan`; false when the plan does not list it, or
    /// it cannot take part (no clock yet, a player that cannot sound the probe).
    func playProbes(_ plan: CalibrationPlan) async -> Bool {
        guard let device, let probe = plan.probes.first(where: { $0.device == device }) else { return false }
        guard lastCalibrationId != plan.id else { return false } // the same plan again (a resumed socket)
        lastCalibrationId = plan.id
        guard let prober = player as? any ProbePlayer else {
            logger.info("this player cannot sound the calibration probe; the listener will report it as not heard", metadata: ["calibration.id": "\(plan.id)"])
            return false
        }
        guard let estimate = await clockSync.estimate else {
            logger.info("no clock yet, so no calibration probe", metadata: ["calibration.id": "\(plan.id)"])
            return false
        }
        await refreshOutputLatency()
        let ahead = compensationMs
        let instants = (0..<max(0, plan.repeats)).map { turn in
            estimate.localTime(atServer: probe.atMs + Double(turn) * plan.repeatMs) - ahead
        }
        // The plan came late (a slow socket), or the output path is longer than its lead.
        guard let first = instants.first, first - clock.now() >= CalibrationRules.minimumProbeLeadMs else {
            logger.warning(
                "the calibration probe's moment is too near or past; this device plays none and keeps its delay",
                metadata: ["calibration.id": "\(plan.id)"])
            return false
        }
        await prober.playProbe(atLocal: instants)
        status.calibrationProbes += 1
        return true
    }
}
