import JamCore
import JamProtocol
import NIOCore

/// The session's timers: its next timeline deadline, and the check on stalled sockets.
extension LiveSession {
    /// Keeps one timer at the session's next deadline.
    func rescheduleTimer() {
        // Only the owner moves the timeline, so it moves once however many nodes follow.
        let deadline = state.hasEnded || role == .replica ? nil : state.nextDeadline()
        guard deadline != timer?.deadline else { return }
        timer?.task.cancel()
        timer = nil
        guard let deadline else { return }
        let delay = max(0, deadline - environment.clock.now())
        let task = eventLoop.scheduleTask(in: .milliseconds(delay)) { [self] in
            self.assumeIsolated { $0.timerFired(deadline) }
        }
        timer = (deadline, task)
    }

    private func timerFired(_ deadline: Millis) {
        guard timer?.deadline == deadline else { return }
        timer = nil
        if environment.clock.now() < deadline {
            // The injected clock runs behind the loop's: look again when it gets there.
            rescheduleTimer()
            return
        }
        tick()
    }

    /// Moves the timeline to now.
    func tick() {
        do {
            let (outcome, _) = try take(.advance, cause: .tick)
            // A track the server starts counts as activity, as on PirateRadio's server: a
            // station playing through its queue to silent listeners is not idle.
            if outcome.events.contains(where: { $0.event.type == .playPrepare }) {
                lastMessageNanos.store(NIODeadline.now().uptimeNanoseconds, ordering: .relaxed)
            }
        } catch {
            logger.error("advancing the timeline failed", metadata: ["error": .loggable(error)])
        }
    }

    /// Checks stalled sockets once a second while there are any.
    func scheduleStallCheck() {
        guard stallTimer == nil, outbox.hasStalledConnections else { return }
        stallTimer = eventLoop.scheduleTask(in: .seconds(1)) { [self] in
            self.assumeIsolated { session in
                session.stallTimer = nil
                session.execute(session.outbox.tick(now: session.environment.clock.now()))
            }
        }
    }

    /// Stops the session's timers (the server is stopping).
    func stopTimers() {
        timer?.task.cancel()
        timer = nil
        stallTimer?.cancel()
        stallTimer = nil
        departureTimer?.cancel()
        departureTimer = nil
        stopDeviceSyncTimers()
    }
}
