import Foundation
import JamProtocol
import Logging

/// Drift correction and sync reports: measuring the player against the timeline and nudging it.
extension SyncEngine {
    /// One correction step: measures the error (player position − timeline position at
    /// the same local instant) and corrects it: nothing inside the dead band, a
    /// temporary rate change for small errors, a seek for large ones (then no
    /// measurement until the seek has landed and settled).
    public func correct() async {
        // A failed load is tried again once its wait is over, while its item is still current.
        if let loadRetry, loadRetry.epoch == timeline?.epoch, loadRetry.isDue(now: clock.now()), !driving,
            drivenGeneration == generation
        {
            generation &+= 1
        }
        if drivenGeneration != generation { await drive() }
        guard !driving, drivenGeneration == generation else { return }
        // Taken before the first wait: an event taken meanwhile makes `wanted` and `estimate` stale.
        let target = generation
        guard let wanted = timeline, wanted.state == .playing, let estimate = await clockSync.estimate else { return }
        // After a reconnect the clock starts again from one rough sample: steering the player
        // by it would move it off and back. It plays on untouched until the burst is in.
        guard await clockSettled(now: clock.now()), generation == target else { return }
        await refreshOutputLatency()
        let now = clock.now()
        // The timeline describes what is heard; the player runs `compensationMs` ahead of it.
        let lead = compensationMs
        let serverNow = estimate.serverTime(atLocal: now + lead)
        guard wanted.isAdvancing(atServer: serverNow) else { return }
        if let start = scheduledStartLocal, now >= start {
            scheduledStartLocal = nil
            status.phase = .playing
        }
        if let seek = pendingSeek {
            await checkLanding(of: seek, now: now)
            return
        }
        guard now >= measureNotBefore, await player.loadedTrackId == wanted.track.id else { return }
        guard await player.isPlaying else {
            // Silent while the timeline plays: without this the device would stay quiet, and
            // its status unchanged, until the next song.
            if now >= measureNotBefore + configuration.stalledStartRetryMs, generation == target, !driving {
                logger.info("the player is not playing the course it was started on: starting it again", metadata: ["sync.epoch": "\(wanted.epoch)"])
                await startCourse(wanted, estimate: estimate, now: now)
            }
            return
        }
        // A player without a valid position (AVPlayer's is NaN while its time is invalid) is not measured.
        guard let actual = await player.position(atLocal: now), actual.isFinite, generation == target, !driving else { return }
        let expected = wanted.position(atServer: serverNow)
        let error = actual - expected
        status.lastErrorMs = error
        status.lastMeasuredAt = now
        status.measurements += 1

        switch CorrectionStep.decide(error: error, rate: status.rate, deadline: correctionDeadline, now: now, configuration: configuration) {
        case .jump:
            correctionDeadline = nil
            if status.rate != 1 {
                await player.setRate(1)
                status.rate = 1
                guard generation == target, !driving else { return }
            }
            let seekTarget = wanted.position(atServer: estimate.serverTime(atLocal: now + seekLatencyEstimate + lead))
            status.seeks += 1
            pendingSeek = PendingSeek(issuedAt: now, target: seekTarget, actualAtIssue: actual, errorAtIssue: error)
            await player.seek(to: seekTarget)
            logger.info(
                "large playback error: seeking",
                metadata: ["sync.errorMs": "\(error)", "sync.targetMs": "\(seekTarget)", "sync.epoch": "\(wanted.epoch)"])
        case .inBand:
            correctionDeadline = nil
            if status.rate != 1 {
                await player.setRate(1)
                status.rate = 1
            }
        case .steer(let deadline, let rate):
            correctionDeadline = deadline
            if let rate {
                status.rate = rate
                status.rateCorrections += 1
                await player.setRate(rate)
            }
        }
    }

    func checkLanding(of seek: PendingSeek, now: Double) async {
        guard let actual = await player.position(atLocal: now) else { return }
        let oldCourse = seek.actualAtIssue + (now - seek.issuedAt)
        // An invalid position says nothing of the landing; the timeout below still ends the wait.
        let moved = actual.isFinite && abs(actual - oldCourse) > max(abs(seek.errorAtIssue) / 2, configuration.deadBandMs)
        if moved {
            let landedAt = now - (actual - seek.target)
            let observed = min(max(0, landedAt - seek.issuedAt), configuration.seekLandingTimeoutMs)
            seekLatencyEstimate = seekLatencyObserved ? (seekLatencyEstimate + observed) / 2 : observed
            seekLatencyObserved = true
            status.observedSeekLatencyMs = observed
            pendingSeek = nil
            measureNotBefore = now + configuration.settleAfterSeekMs
        } else if now - seek.issuedAt > configuration.seekLandingTimeoutMs {
            logger.warning("a correction seek never showed up", metadata: ["sync.targetMs": "\(seek.target)"])
            status.seekTimeouts += 1
            pendingSeek = nil
            measureNotBefore = now + configuration.settleAfterSeekMs
        }
    }

    // MARK: - Loop

    /// Corrects every `correctionIntervalMs` and sends a `syncReport` every
    /// `reportIntervalMs` (the first as soon as the clock is synchronised). Ends when
    /// the task is cancelled (the sleeper throws).
    public func run(sleeper: any Sleeper) async throws {
        var nextReport = -Double.infinity
        while true {
            try Task.checkCancellation()
            await correct()
            let now = clock.now()
            if now >= nextReport, await report() { nextReport = now + configuration.reportIntervalMs }
            try await sleeper.sleep(ms: configuration.correctionIntervalMs)
        }
    }

    /// Sends one `syncReport`; false when the clock is not synchronised yet.
    /// `offsetMs` is the clock offset, `errorMs` half the best round trip (the server reads
    /// `2 × errorMs` as the device's round trip) and `driftMs` the last measured playback
    /// error (player position − timeline position).
    @discardableResult
    public func report() async -> Bool {
        guard let estimate = await clockSync.estimate else { return false }
        // Before anything plays the server still needs the latency, to commit starts early enough.
        await refreshOutputLatency()
        let now = clock.now()
        // A route can report more than the protocol takes (AirPlay's ~2 s): the player still
        // runs ahead by all of it, and the report says the most the server reads, rather than
        // being refused and leaving this device out of the sync column and calibrations.
        let latency = min(status.outputLatencyMs, Validate.maxDeviceDelayMs)
        let report = SyncReport(
            epoch: max(0, epoch), offsetMs: estimate.offset(atLocal: now), errorMs: estimate.halfRoundTripBound(atLocal: now),
            driftMs: status.lastErrorMs ?? 0, deviceId: device?.deviceId, outputLatencyMs: latency,
            delayMs: status.deviceDelayMs, clockDriftPpm: estimate.driftMsPerSecond * 1_000, playing: await player.isPlaying,
            // Said either way: a device a host picks to listen that cannot could only time the run out.
            canListen: configuration.canListen)
        await send(.syncReport(report))
        status.reportsSent += 1
        return true
    }
}
