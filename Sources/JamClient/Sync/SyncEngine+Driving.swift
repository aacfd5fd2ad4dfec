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
            await silencePlayer()
            status.phase = .stopped
            return true
        }
        if await player.loadedTrackId != wanted.track.id {
            if let loadRetry, loadRetry.epoch == wanted.epoch, !loadRetry.isDue(now: clock.now()) { return true }
            followed = nil
            resetCorrection()
            status.phase = .loading
            // A load leaves the current song playing until the next start; a paused timeline
            // wants silence now.
            if wanted.state == .paused { await player.pause() }
            do {
                guard try await loadUnlessSuperseded(wanted.track) else { return true }
            } catch {
                // What played before would otherwise play on while everybody else hears this item.
                await player.pause()
                if generation == target {
                    loadRetry = LoadRetry.after(loadRetry, failedEpoch: wanted.epoch, now: clock.now(), configuration: configuration)
                    status.loadFailures += 1
                    status.phase = .loadFailed
                }
                logger.error(
                    "loading the current item failed",
                    metadata: ["sync.epoch": "\(wanted.epoch)", "track.id": "\(wanted.track.id)", "sync.error": "\(error)"])
                return true
            }
            if loadRetry?.epoch == wanted.epoch { loadRetry = nil }
        }
        if wanted.state == .preparing, readySentEpoch != wanted.epoch, timeline?.epoch == wanted.epoch {
            readySentEpoch = wanted.epoch
            await send(.ready(Ready(epoch: wanted.epoch)))
        }
        guard generation == target else { return true }
        // Holding still, and waiting for the start, need no clock: a pause missed while the
        // socket was down is applied at once, not after the new connection's first burst.
        switch wanted.state {
        case .paused:
            await hold(wanted)
            return true
        case .preparing where !startWhilePreparing:
            status.phase = .ready
            return true
        case .preparing, .playing:
            break
        }
        guard let estimate = await clockSync.estimate, await clockSettled(now: clock.now()) else {
            status.phase = .waitingForClock
            return false
        }
        guard generation == target else { return true }
        await refreshOutputLatency()
        // A resync taken meanwhile dropped the clock this estimate came from.
        guard generation == target else { return true }
        var course = wanted
        course.state = .playing
        await follow(course, estimate: estimate, now: clock.now())
        return true
    }

    /// Loads `track`; false, the load cancelled, once the schedule wants another track: a
    /// skip while a song still downloads goes to the new song at once, not after that
    /// download (a player whose load ignores cancellation still holds it up). The web
    /// engine's `loadUnlessSuperseded` is the same rule.
    func loadUnlessSuperseded(_ track: Track) async throws -> Bool {
        let (changes, changed) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        scheduleChanged = changed
        changed.yield() // the schedule may have moved on while the player was asked what it holds
        defer {
            scheduleChanged = nil
            changed.finish()
        }
        let player = self.player
        return try await withThrowingTaskGroup(of: LoadOutcome.self) { group in
            group.addTask {
                try await player.load(track)
                return .loaded
            }
            group.addTask {
                for await _ in changes {
                    if await self.timeline?.track.id != track.id { return .superseded }
                }
                return .unwatched // cancelled with the load: its own outcome stands
            }
            while let outcome = try await group.next() {
                switch outcome {
                case .loaded, .superseded:
                    group.cancelAll()
                    return outcome == .loaded
                case .unwatched:
                    continue
                }
            }
            throw CancellationError()
        }
    }

    /// Pauses the player at normal speed, with no correction under way.
    func silencePlayer() async {
        resetCorrection()
        await player.pause()
        if status.rate != 1 {
            await player.setRate(1)
            status.rate = 1
        }
    }

    /// Holds the player paused at the timeline's position.
    func hold(_ wanted: PlaybackTimeline) async {
        if let followed, followed.hasSameCourse(as: wanted) { return }
        followed = wanted
        scheduledStartLocal = nil
        await silencePlayer()
        let position = await player.position(atLocal: clock.now())
        if position.map({ abs($0 - wanted.positionMs) > 0.5 }) ?? true {
            await player.seek(to: wanted.positionMs)
        }
        status.phase = .paused
    }

    /// True once the clock may time a start or a correction. The first start (and the first
    /// after a host's re-sync or a reconnect, which drop the clock's samples) waits for a full
    /// burst of pings, at most `firstStartWaitMs`: a device joining mid-song otherwise starts
    /// on its first, roughest sample and lands ~20 ms off (docs/PERFORMANCE.md), and a playing
    /// one would be steered there. Later starts use whatever estimate there is. The web
    /// engine's `clockSettled` is the same rule.
    func clockSettled(now: Double) async -> Bool {
        let resets = await clockSync.resets
        if resets != clockResetsSeen {
            clockResetsSeen = resets
            clockWaitOver = false
            clockWaitSince = nil
        }
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
            let restarts = restartsAsked
            if restatement, await player.isPlaying {
                // A resync came meanwhile: the drive it asked for starts afresh on the new clock.
                guard restartsAsked == restarts else { return }
                // The correction loop will absorb the difference smoothly.
                self.followed = course
                return
            }
            guard restartsAsked == restarts else { return }
        }
        await startCourse(course, estimate: estimate, now: now)
    }

    /// Starts the player on `course` at the local instant its anchor falls on, or, when that
    /// instant has passed (a device joining mid-song), now at the position the server's clock
    /// gives for now. The player would count the time since a past instant in local ms, which
    /// the drift makes longer or shorter than the server's: 60 ms after 20 minutes at 50 ppm.
    func startCourse(_ course: PlaybackTimeline, estimate: ClockEstimate, now: Double) async {
        let restarts = restartsAsked
        resetCorrection()
        if status.rate != 1 {
            await player.setRate(1)
            status.rate = 1
        }
        var startLocal = estimate.localTime(atServer: course.anchorMs) - compensationMs
        var positionMs = course.positionMs
        if startLocal < now {
            positionMs = course.position(atServer: estimate.serverTime(atLocal: now + compensationMs))
            startLocal = now
        }
        await player.play(from: positionMs, atLocal: startLocal)
        // A resync that came while the player started asks for a start on the new clock: this
        // one, timed on the old, must not pass for it (the next drive starts again).
        followed = restartsAsked == restarts ? course : nil
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

/// How a load that may be superseded ended.
private enum LoadOutcome: Sendable {
    case loaded, superseded, unwatched
}
