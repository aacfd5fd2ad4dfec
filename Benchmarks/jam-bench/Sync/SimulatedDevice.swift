import Foundation
import JamClient
import JamProtocol

/// One simulated listener: a `SimulatedPlayer` driven by JamClient's `SyncEngine`, a
/// `ClockSync` on the device's own (offset) clock, and the delaying proxy in front of it.
struct SimulatedDevice: Sendable {
    let name: String
    let clock: DeviceClock
    let shape: PathShape
    let player: SimulatedPlayer
    let clockSync: ClockSync
    let proxy: DelayProxy
    /// Runs the device's connection, clock sync and engine until cancelled.
    let run: @Sendable () async throws -> Void
    /// `ClockSync.burstCount` and the instant when the first estimate appeared (set by the sampler).
    let firstBurst = FirstBurst()

    /// The clock-offset error now: estimate − truth, in ms, the bursts behind the estimate
    /// (0 while the first burst is still arriving) and the time since the first estimate, ms;
    /// nil before the first estimate.
    func offsetError() async -> (errorMs: Double, bursts: Int, sinceFirstMs: Double)? {
        guard let estimate = await clockSync.estimate else { return nil }
        let monotonic = TrueTime.monotonicNow()
        let truth = clock.trueOffset(atMonotonic: monotonic, serverMinusMonotonic: TrueTime.serverMinusMonotonic())
        let estimated = estimate.offset(atLocal: clock.local(atMonotonic: monotonic))
        let bursts = await clockSync.burstCount
        let first = await firstBurst.mark(bursts, at: monotonic)
        // Until the first burst's last ping has had time to come back, it is still arriving.
        let complete = monotonic - first.at < Self.firstBurstMs ? 0 : bursts - first.count + 1
        return (estimated - truth, complete, monotonic - first.at)
    }

    /// How long the first burst takes to send: 48 pings 30 ms apart.
    static let firstBurstMs: Double = {
        let configuration = ClockSync.Configuration()
        return Double(configuration.firstBurstSize) * configuration.burstSpacingMs
    }()

    /// Heard position (after the device's output latency) − where `timeline` says the track
    /// is, at system monotonic instant `monotonicMs`; nil when the device does not have that
    /// track loaded.
    func positionError(_ timeline: PlaybackTimeline, atMonotonic monotonicMs: Double, serverMinusMonotonic: Double) async -> Double? {
        guard await player.loadedTrackId == timeline.track.id,
              let position = await player.heardPosition(atLocal: clock.local(atMonotonic: monotonicMs))
        else { return nil }
        return position - timeline.position(atServer: monotonicMs + serverMinusMonotonic)
    }

    /// The system monotonic instant from which the first `play` after the last load of
    /// `trackId` is heard (the call plus the output latency), if there was one.
    func audibleFrom(_ trackId: String) async -> Double? {
        guard let call = await startCall(of: trackId) else { return nil }
        return call + (await player.configuration.outputLatencyMs)
    }

    /// The system monotonic instant of the first `play` after the last load of `trackId`, if any.
    func startCall(of trackId: String) async -> Double? {
        let calls = await player.calls
        guard let loadIndex = calls.lastIndex(where: { if case .load(let id, _) = $0 { id == trackId } else { false } }) else { return nil }
        for call in calls[loadIndex...] {
            if case .play(_, _, let at) = call { return clock.monotonic(atLocal: at) }
        }
        return nil
    }
}

/// Remembers the burst count and instant of a device's first estimate, so figures can say "after n bursts".
actor FirstBurst {
    private var value: (count: Int, at: Double)?

    /// The remembered count and instant, set on the first call.
    func mark(_ count: Int, at instant: Double) -> (count: Int, at: Double) {
        if let value { return value }
        value = (count, instant)
        return (count, instant)
    }
}
