import Foundation
import JamClient

/// Everything the sync benchmark measures, gathered from the samplers and the scenario.
actor SyncMeasurements {
    /// Offset error (estimate − truth): while the first burst is still arriving (its length
    /// after the first pong), then by the ping bursts behind the estimate: 1, 2, 3+,
    /// and, from `steadyAfterMs` after the first estimate, steady (the drift is fitted). By
    /// time, as the bursts come quicker while the window is young.
    private(set) var offsetByBursts: [Distribution] = Array(repeating: Distribution(), count: 5)
    /// The steady errors once the drift window is full (`ClockSync.Configuration.windowMs`
    /// after the first estimate, 4 minutes): where a device spends a listening session.
    private(set) var offsetWindowFull = Distribution()
    /// The steady offset error of each device, by name: tells a per-device bias (the means
    /// differ) from noise every device shares (they agree).
    private(set) var steadyOffsetByDevice: [String: Distribution] = [:]
    /// Offset error beyond half the device's path asymmetry (only with asymmetric paths).
    private(set) var offsetBeyondAsymmetry = Distribution()
    /// Position error vs the server timeline right after each start, per kind.
    private(set) var startError: [String: Distribution] = [:]
    /// Spread (max − min) of the devices' position errors after each start, per kind.
    private(set) var startSkew: [String: Distribution] = [:]
    /// How late after the announced instant a device was told to start (a jump into a
    /// running track, audible as a gap), per kind.
    private(set) var lateStart: [String: Distribution] = [:]
    /// Position error and spread while playing, away from starts (after the engine's corrections).
    private(set) var steadyError = Distribution()
    private(set) var steadySkew = Distribution()
    /// Broken behaviour seen during the run.
    private(set) var failures: [String] = []
    private var finished = false

    /// When the offset counts as steady: 90 s after the first estimate (7 bursts 15 s apart,
    /// as this figure has always been taken).
    static let steadyAfterMs = 90_000.0
    /// When the drift window is full.
    static let windowMs = ClockSync.Configuration().windowMs

    /// Records one offset error for an estimate behind `bursts` bursts (0: the first one is
    /// still arriving), `sinceFirstMs` after the device's first estimate.
    func recordOffset(_ errorMs: Double, device: String, bursts: Int, sinceFirstMs: Double, asymmetryMs: Double, asymmetric: Bool) {
        let steady = sinceFirstMs >= Self.steadyAfterMs
        offsetByBursts[steady ? 4 : min(max(bursts, 0), 3)].record(errorMs)
        if steady { steadyOffsetByDevice[device, default: Distribution()].record(errorMs) }
        if sinceFirstMs >= Self.windowMs { offsetWindowFull.record(errorMs) }
        if asymmetric, bursts >= 3 { offsetBeyondAsymmetry.record(max(0, abs(errorMs) - abs(asymmetryMs) / 2)) }
    }

    /// Records the devices' errors right after one start of `kind`.
    func recordStart(_ kind: String, errors: [Double], late: [Double]) {
        for error in errors { startError[kind, default: Distribution()].record(error) }
        if let low = errors.min(), let high = errors.max(), errors.count > 1 { startSkew[kind, default: Distribution()].record(high - low) }
        for value in late { lateStart[kind, default: Distribution()].record(value) }
    }

    /// Records a joiner's error and its distance from the room's median error.
    func recordJoin(error: Double, fromRoom: Double?) {
        startError["join", default: Distribution()].record(error)
        if let fromRoom { startSkew["join", default: Distribution()].record(fromRoom) }
    }

    /// Records one steady-state sample of every device.
    func recordSteady(errors: [Double]) {
        for error in errors { steadyError.record(error) }
        if let low = errors.min(), let high = errors.max(), errors.count > 1 { steadySkew.record(high - low) }
    }

    /// Records broken behaviour.
    func fail(_ message: String) {
        failures.append(message)
    }

    /// A device's task ended; before the end of the run that is a failure.
    func deviceEnded(_ name: String, _ error: (any Error)?) {
        guard !finished else { return }
        failures.append("\(name) stopped during the run: \(error.map { "\($0)" } ?? "its connection ended")")
    }

    /// The scenario is over: tasks ending now are being cancelled, not failing.
    func finish() {
        finished = true
    }

    /// Start skew over every kind together (each start's spread, each joiner's distance).
    var allStartSkew: Distribution {
        var all = Distribution()
        for distribution in startSkew.values { all.merge(distribution) }
        return all
    }
}
