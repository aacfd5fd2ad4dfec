/// What to do about one measured playback error (player position − timeline position,
/// ms; positive = ahead): the policy of `SyncEngine.correct()`, pure so that it can be
/// checked against the web client's `correction-policy.js correctionStep` on shared
/// cases (Tests/Fixtures/ClientParity/correction.json).
public enum CorrectionStep: Hashable, Sendable {
    /// Too large for the rate to fix unheard: jump to the right position. JamClient
    /// seeks; the browser restarts its cued start instead (an intended difference).
    case jump
    /// Inside the band: rate 1, no correction under way.
    case inBand
    /// Keep correcting until `deadline` (local ms) at `rate`; `rate` is nil when the
    /// change from the current rate is too small to send to the player.
    case steer(deadline: Double, rate: Double?)

    /// The step for `error` while the player runs at `rate`, with the deadline of the
    /// correction under way (nil when none), at local instant `now`. Errors inside the
    /// dead band are left alone; a correction under way continues until the tighter
    /// target band; small errors get a rate within ±`maxRateDeviation` sized to clear
    /// them by the deadline.
    public static func decide(
        error: Double, rate: Double, deadline: Double?, now: Double, configuration: SyncEngine.Configuration
    ) -> CorrectionStep {
        if abs(error) >= configuration.seekThresholdMs { return .jump }
        let band = deadline == nil ? configuration.deadBandMs : configuration.targetBandMs
        if abs(error) <= band { return .inBand }
        var until = deadline ?? now + configuration.correctionHorizonMs
        if until - now < configuration.correctionIntervalMs / 2 { until = now + configuration.correctionHorizonMs }
        let remaining = max(until - now, configuration.correctionIntervalMs)
        let limit = configuration.maxRateDeviation
        let wanted = min(1 + limit, max(1 - limit, 1 - error / remaining))
        return .steer(deadline: until, rate: abs(wanted - rate) >= configuration.minRateStep ? wanted : nil)
    }
}
