import Foundation
import JamClient
import JamProtocol

/// The host's side of a sync run, per protocol: starts, skips and observes the timeline.
protocol SyncDriver: Sendable {
    /// Holds the host's own connection until cancelled.
    func runConnection() async throws
    /// Starts `track` from silence; returns its committed timeline.
    func play(_ track: Track) async throws -> PlaybackTimeline
    /// Queues `track` behind the current one.
    func queue(_ track: Track) async throws
    /// Skips to the queued track `next`; returns its timeline.
    func skip(to next: Track) async throws -> PlaybackTimeline
    /// Waits for `track` to start by itself (auto-advance); returns its timeline.
    func waitForStart(of track: Track) async throws -> PlaybackTimeline
    /// Waits until nothing plays.
    func waitStopped() async throws
    /// The timeline now, while something plays.
    func current() async -> PlaybackTimeline?
    /// A new device in the session behind its own proxy, its output path taking `outputLatencyMs`.
    func makeDevice(
        name: String, shape: PathShape, clockOffsetMs: Double, clockDriftPpm: Double, outputLatencyMs: Double, seed: UInt64
    ) async throws -> SimulatedDevice
}

/// Failure of a scenario step (a wait that ran out, a refused command).
struct ScenarioFailure: Error, CustomStringConvertible {
    let description: String
}

/// Polls `condition` every 5 ms until it returns a value, for at most `timeout`.
func waitFor<T: Sendable>(_ what: String, timeout: Duration = .seconds(15), _ condition: @Sendable () async throws -> T?) async throws -> T {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if let value = try await condition() { return value }
        try await Task.sleep(for: .milliseconds(5))
    }
    throw ScenarioFailure(description: "timed out after \(timeout) waiting for \(what)")
}

/// Sleeps until system monotonic instant `monotonicMs` (as `SystemMonotonicClock` reads it).
func sleep(untilMonotonic monotonicMs: Double) async throws {
    let wait = monotonicMs - TrueTime.monotonicNow()
    if wait > 0 { try await Task.sleep(for: .nanoseconds(Int64(wait * 1_000_000))) }
}

/// The play / skip / auto-advance / mid-song-join rounds, measured on every device.
struct SyncScenario: Sendable {
    let driver: any SyncDriver
    let devices: [SimulatedDevice]
    let measurements: SyncMeasurements
    let rounds: Int
    let joiners: Int
    /// Length of the track that auto-advances (the next one is prepared 5 s before its end).
    let advancingTrackMs: Int64
    /// Length of the track joiners join.
    let joinedTrackMs: Int64
    let shapeForJoiner: @Sendable (Int) -> PathShape
    let outputLatencyForJoiner: @Sendable (Int) -> Double
    let driftForJoiner: @Sendable (Int) -> Double
    let offsetForJoiner: @Sendable (Int) -> Double
    /// Measure this long after a device starts: before the engine's first correction (250 ms),
    /// so the figure is the start itself.
    static let measureAfterMs = 100.0

    /// Runs every round.
    func run() async throws {
        for round in 0..<rounds {
            let first = track("r\(round)-play", durationMs: 4_000)
            let playing = try await driver.play(first)
            await measureStart("play", playing)

            let skipped = track("r\(round)-skip", durationMs: advancingTrackMs)
            try await driver.queue(skipped)
            try await Task.sleep(for: .milliseconds(300))
            let afterSkip = try await driver.skip(to: skipped)
            await measureStart("skip", afterSkip)

            let advanced = track("r\(round)-auto", durationMs: joinedTrackMs)
            try await driver.queue(advanced)
            let afterAdvance = try await driver.waitForStart(of: advanced)
            await measureStart("auto-advance", afterAdvance)

            try await Task.sleep(for: .milliseconds(300))
            try await join(round: round, timeline: afterAdvance)
            try await driver.waitStopped()
        }
    }

    /// A track unique to this run and step.
    private func track(_ id: String, durationMs: Int64) -> Track {
        Track(id: "bench-\(id)", name: "Bench \(id)", artist: "jam-bench", durationMs: durationMs, source: .external)
    }

    /// Measures every device just after the start `timeline` announces, once every device's
    /// sound can be heard (its start call plus its output latency).
    func measureStart(_ kind: String, _ timeline: PlaybackTimeline) async {
        let offset = TrueTime.serverMinusMonotonic()
        let anchor = timeline.anchorMs - offset
        var calls: [Double?] = Array(repeating: nil, count: devices.count)
        // Wait (bounded) for every device's start call: scheduled ones have it before the anchor.
        let deadline = max(TrueTime.monotonicNow(), anchor) + 3_000
        while TrueTime.monotonicNow() < deadline {
            for (index, device) in devices.enumerated() where calls[index] == nil {
                calls[index] = await device.audibleFrom(timeline.track.id)
            }
            if calls.allSatisfy({ $0 != nil }) { break }
            do {
                try await Task.sleep(for: .milliseconds(10))
            } catch {
                return
            }
        }
        let started = calls.compactMap { $0 }
        for (index, call) in calls.enumerated() where call == nil {
            await measurements.fail("\(kind): \(devices[index].name) never started \(timeline.track.id)")
        }
        guard !started.isEmpty else { return }
        let instant = max(anchor, started.max() ?? anchor) + Self.measureAfterMs
        do {
            try await sleep(untilMonotonic: instant + 5)
        } catch {
            return
        }
        var errors: [Double] = []
        for device in devices {
            if let error = await device.positionError(timeline, atMonotonic: instant, serverMinusMonotonic: offset) { errors.append(error) }
        }
        let late = started.map { max(0, $0 - anchor) }
        await measurements.recordStart(kind, errors: errors, late: late)
    }

    /// Brings `joiners` new devices into the playing track and measures each one's start
    /// against the timeline and against the devices already playing.
    private func join(round: Int, timeline: PlaybackTimeline) async throws {
        var newcomers: [SimulatedDevice] = []
        for index in 0..<joiners {
            let number = round * joiners + index
            newcomers.append(try await driver.makeDevice(
                name: "joiner \(number)", shape: shapeForJoiner(number), clockOffsetMs: offsetForJoiner(number), clockDriftPpm: driftForJoiner(number),
                outputLatencyMs: outputLatencyForJoiner(number), seed: UInt64(10_000 + number)))
        }
        await withTaskGroup(of: Void.self) { group in
            for device in newcomers {
                group.addTask {
                    do {
                        try await device.run()
                    } catch is CancellationError {
                        // Done with it.
                    } catch {
                        await measurements.fail("\(device.name): \(error)")
                    }
                }
            }
            for device in newcomers { await measureJoiner(device, timeline) }
            group.cancelAll()
        }
        for device in newcomers { await device.proxy.close() }
    }

    /// Measures one joiner 100 ms after its start, against the timeline and the room's median.
    private func measureJoiner(_ device: SimulatedDevice, _ timeline: PlaybackTimeline) async {
        let call: Double
        do {
            call = try await waitFor("\(device.name) to start", timeout: .seconds(5)) { await device.audibleFrom(timeline.track.id) }
        } catch {
            await measurements.fail("join: \(device.name) never started \(timeline.track.id)")
            return
        }
        let instant = call + Self.measureAfterMs
        do {
            try await sleep(untilMonotonic: instant + 5)
        } catch {
            return
        }
        let offset = TrueTime.serverMinusMonotonic()
        guard let error = await device.positionError(timeline, atMonotonic: instant, serverMinusMonotonic: offset) else {
            await measurements.fail("join: \(device.name) lost \(timeline.track.id)")
            return
        }
        var room: [Double] = []
        for established in devices {
            if let value = await established.positionError(timeline, atMonotonic: instant, serverMinusMonotonic: offset) { room.append(value) }
        }
        let median = room.sorted().dropFirst(room.count / 2).first
        await measurements.recordJoin(error: error, fromRoom: median.map { abs(error - $0) })
    }
}

/// The background samplers: clock-offset error every 250 ms, playback error every 500 ms.
struct SyncSamplers: Sendable {
    let driver: any SyncDriver
    let devices: [SimulatedDevice]
    let measurements: SyncMeasurements
    let asymmetric: Bool

    /// Samples every device's clock-offset error until cancelled.
    func sampleOffsets() async {
        while !Task.isCancelled {
            for device in devices {
                if let (error, bursts, since) = await device.offsetError() {
                    await measurements.recordOffset(
                        error, device: device.name, bursts: bursts, sinceFirstMs: since, asymmetryMs: device.shape.asymmetryMs, asymmetric: asymmetric)
                }
            }
            do {
                try await Task.sleep(for: .milliseconds(250))
            } catch {
                return
            }
        }
    }

    /// Samples every device's playback error while a track plays, away from its start and end.
    func samplePlayback() async {
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: .milliseconds(500))
            } catch {
                return
            }
            guard let timeline = await driver.current() else { continue }
            let offset = TrueTime.serverMinusMonotonic()
            let now = TrueTime.monotonicNow()
            let server = now + offset
            guard server > timeline.anchorMs + 1_000, server < (timeline.endsAtServer ?? .infinity) - 500 else { continue }
            var errors: [Double] = []
            for device in devices {
                if let error = await device.positionError(timeline, atMonotonic: now, serverMinusMonotonic: offset) { errors.append(error) }
            }
            await measurements.recordSteady(errors: errors)
        }
    }
}
