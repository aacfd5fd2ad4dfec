import Foundation

extension ClockSync {
    /// Forgets pings unanswered for `pendingTimeoutMs`, once there are more than a few bursts of them.
    func prunePending(now: Double) {
        guard pending.count > 4 * configuration.burstSize else { return }
        pending = pending.filter { now - $0.key < configuration.pendingTimeoutMs }
    }

    /// Rebuilds the estimate from the bursts in the window, dropping the oldest while no line fits them.
    func recompute() {
        let searchRange = configuration.maxDriftMsPerSecond / 1000
        let prior = (low: (priorDrift - configuration.driftPriorUncertaintyMsPerSecond) / 1000,
                     high: (priorDrift + configuration.driftPriorUncertaintyMsPerSecond) / 1000)
        while true {
            guard let r = bursts.lazy.map(\.newest).max() else {
                cached = nil
                return
            }
            let window = LineFit(bursts: bursts, reference: r)
            guard let slopes = window.slopes(searchRange: searchRange, slack: configuration.consistencySlackMs) else {
                if bursts.count > 1 {
                    inconsistentBursts += 1
                    logger.warning(
                        "clock samples no longer fit one line (server clock stepped?); dropping the oldest burst",
                        metadata: ["sync.bursts": "\(bursts.count)"])
                    bursts.removeFirst()
                } else {
                    // Inconsistent within one burst (impossible from an honest server): keep its best sample.
                    bursts[0].keepOnlyBest()
                }
                continue
            }
            // The hard range of drifts: what the samples allow, narrowed by the prior.
            var low = max(slopes.feasible.lowerBound, prior.low)
            var high = min(slopes.feasible.upperBound, prior.high)
            if low > high {
                low = slopes.feasible.lowerBound // the data contradict the prior: believe the data
                high = slopes.feasible.upperBound
            }
            // The drift estimate: the slopes of the lines hugging the lowest delays of
            // each direction, once the window is long enough for them to mean something.
            var slope = priorDrift / 1000
            let span = r - bursts.lazy.map(\.start).min()!
            driftFitted = bursts.count >= configuration.minDriftBursts && span >= configuration.minDriftSpanMs
            if driftFitted { slope = slopes.widest }
            slope = min(high, max(low, slope))
            drift = slope * 1000
            driftUncertainty = max(configuration.minDriftUncertaintyMsPerSecond, max(slope - low, high - slope) * 1000)
            // The offset: the recent samples' constraints moved to r along the drift.
            let filterBursts = driftFitted ? configuration.filterBursts : min(configuration.filterBursts, configuration.filterBurstsBeforeDriftFit)
            let recent = bursts.suffix(max(1, filterBursts))
            let filter = LineFit(bursts: recent, reference: r, base: window.base)
            let offset = (filter.upper(slope) + filter.lower(slope)) / 2
            // The bound: every line the whole window allows within the drift range.
            let (lowest, highest) = window.offsetRange(slopes: low...high)
            let bound = max(0, offset - lowest, highest - offset)
            let best = recent.map(\.best).min { $0.delay < $1.delay }!
            let age = abs(r - (best.t0 + best.t3) / 2)
            cached = ClockEstimate(
                referenceLocal: r, offsetAtReference: offset + window.base, errorBoundAtReference: bound,
                halfRoundTripMs: best.delay / 2 + driftUncertainty / 1000 * age, driftMsPerSecond: drift,
                driftUncertaintyMsPerSecond: driftUncertainty)
            return
        }
    }
}
