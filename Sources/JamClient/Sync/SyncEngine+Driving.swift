import JamProtocol
import Logging

/// Driving the player: loading the wanted item, waiting for the clock, and starting the
/// player on the timeline's course at the local instant its anchor falls on.
extension SyncEngine {
    /// Brings the player to the latest timeline; one driver at a time.
    func drive() async {
        guard !driving else { return }
        driving = true
        defer { driving = false }
        while drivenGeneration != generation {
            let target = generation
            guard await bringPlayer(to: target) else { return } // waits for the clock; `correct()` retries
            if target == generation { drivenGeneration = target }
        }
    }

    /// One attempt; false when it has to wait for the first clock sync.
    func bringPlayer(to target: Int) async -> Bool {
        guard let wanted = timeline else {
            followed = nil
            resetCorrection()
            await player.pause()
            if status.rate != 1 {
                await player.setRate(1)
                status.rate = 1
            }
            status.phase = .stopped
            return true
        }
        if await player.loadedTrackId != wanted.track.id {
            if failedLoadEpoch == wanted.epoch { return true }
            followed = nil
            resetCorrection()
            status.phase = .loading
            // A load leaves the current song playing until the next start; a paused timeline
            // wants silence now.
            if wanted.state == .paused { await player.pause() }
            do {
                try await player.load(wanted.track)
            } catch {
                // What played before would otherwise play on while everybody else hears this item.
                await player.pause()
                if generation == target {
                    failedLoadEpoch = wanted.epoch
                    status.loadFailures += 1
                    status.phase = .loadFailed
                }
                logger.error(
                    "loading the current item failed",
                    metadata: ["sync.epoch": "\(wanted.epoch)", "track.id": "\(wanted.track.id)", "sync.error": "\(error)"])
                return true
            }
        }
        if wanted.state == .preparing, readySentEpoch != wanted.epoch, timeline?.epoch == wanted.epoch {
            readySentEpoch = wanted.epoch
            await send(.ready(Ready(epoch: wanted.epoch)))
        }
        guard generation == target else { return true }
        guard let estimate = await clockSync.estimate, await clockSettled(now: clock.now()) else {
            status.phase = .waitingForClock
            return false
        }
        guard generation == target else { return true }
        await refreshOutputLatency()
        let now = clock.now()
        switch wanted.state {
        case .preparing where !startWhilePreparing:
            status.phase = .ready
        case .preparing, .playing:
            var course = wanted
            course.state = .playing
            await follow(course, estimate: estimate, now: now)
        case .paused:
            if let followed, followed.hasSameCourse(as: wanted) { return true }
            followed = wanted
            resetCorrection()
            scheduledStartLocal = nil
            await player.pause()
            if status.rate != 1 {
                await player.setRate(1)
                status.rate = 1
            }
            let position = await player.position(atLocal: now)
            if position.map({ abs($0 - wanted.positionMs) > 0.5 }) ?? true {
                await player.seek(to: wanted.positionMs)
            }
            status.phase = .paused
        }
        return true
    }

    /// True once the clock may time a start. The first start (and the first after a host's
    /// re-sync) waits for a full burst of pings, at most `firstStartWaitMs`: a device joining
    /// mid-song otherwise starts on its first, roughest sample and lands ~20 ms off
    /// (docs/PERFORMANCE.md). Later starts use whatever estimate there is. The web engine's
    /// `clockSettled` is the same rule.
    func clockSettled(now: Double) async -> Bool {
        if clockWaitOver { return true }
        let since = clockWaitSince ?? now
        clockWaitSince = since
        let configuration = clockSync.configuration
        if await clockSync.acceptedSamples < configuration.firstBurstSize, now - since < configuration.firstStartWaitMs { return false }
        clockWaitOver = true
        return true
    }

    func follow(_ course: PlaybackTimeline, estimate: ClockEstimate, now: Double) async {
        // What is heard now left the player `compensationMs` ago: schedule that much ahead.
        let serverNow = estimate.serverTime(atLocal: now + compensationMs)
        if let end = course.endsAtServer, serverNow >= end {
            // Over already: nothing to play until the server moves on.
            followed = course
            resetCorrection()
            await player.pause()
            status.phase = .stopped
            return
        }
        if let followed {
            if followed.hasSameCourse(as: course) { return }
            let restatement =
                followed.state == .playing && followed.epoch == course.epoch && course.anchorMs <= serverNow
                && abs((followed.positionMs - followed.anchorMs) - (course.positionMs - course.anchorMs))
                    < configuration.restateToleranceMs
            if restatement, await player.isPlaying {
                // The correction loop will absorb the difference smoothly.
                self.followed = course
                return
            }
        }
        await startCourse(course, estimate: estimate, now: now)
    }

    /// Starts the player on `course` at the local instant its anchor falls on.
    func startCourse(_ course: PlaybackTimeline, estimate: ClockEstimate, now: Double) async {
        resetCorrection()
        if status.rate != 1 {
            await player.setRate(1)
            status.rate = 1
        }
        let startLocal = estimate.localTime(atServer: course.anchorMs) - compensationMs
        await player.play(from: course.positionMs, atLocal: startLocal)
        followed = course
        status.starts += 1
        scheduledStartLocal = startLocal
        measureNotBefore = max(now, startLocal) + configuration.settleAfterStartMs
        status.phase = startLocal > now ? .scheduled : .playing
        logger.debug(
            "following the timeline",
            metadata: [
                "sync.epoch": "\(course.epoch)", "sync.positionMs": "\(course.positionMs)",
                "sync.startInMs": "\(startLocal - now)",
            ])
    }

    func resetCorrection() {
        pendingSeek = nil
        correctionDeadline = nil
    }
}
