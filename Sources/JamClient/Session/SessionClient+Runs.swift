import JamProtocol

/// `run()`: the entry that holds the connection, one run at a time.
extension SessionClient {
    /// Holds the realtime connection until cancelled; reconnects after drops and stops
    /// (throwing the reason) when the server says the session is gone for this member. Once
    /// this member's `leave` is answered it returns when the server closes the socket.
    ///
    /// However it ends, no `send` is left waiting on it: a reason that is for good fails them
    /// with it (the phase is then `.failed`); cancellation fails them as unanswered (the phase
    /// goes back to `.idle`, and a later `run()` carries on with the same mirror).
    ///
    /// One connection at a time: a `run()` started while an earlier one is still closing its
    /// socket (a view's task restarted) waits for it to end, so the earlier one's ending does
    /// not take the newer one's socket, phase or commands with it.
    public func run() async throws {
        while isRunning {
            try await untilTheRunBeforeEnds()
        }
        isRunning = true
        defer {
            isRunning = false
            // The first of them takes the connection; the rest wait on again.
            let waiting = waitingRuns.withLock { runs in
                defer { runs.removeAll() }
                return Array(runs.values)
            }
            for run in waiting { run.resume() }
        }
        // A member who left and joined again is connected again.
        hasLeft = false
        do {
            try await holdConnection()
        } catch let error as JamError {
            if case .failed = phase {} else { fail(error) }
            throw error
        } catch {
            stopped()
            throw error
        }
        stopped()
    }

    /// Waits for the run holding the connection to end; throws `CancellationError` when the
    /// waiting task is cancelled first (it then never took the connection).
    private func untilTheRunBeforeEnds() async throws {
        let ticket = nextRunTicket
        nextRunTicket += 1
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                // Checked under the lock the handler takes: a cancellation either comes before
                // (seen here) or finds the waiter there.
                let cancelled = waitingRuns.withLock { waiting in
                    if !Task.isCancelled { waiting[ticket] = continuation }
                    return Task.isCancelled
                }
                if cancelled { continuation.resume() }
            }
        } onCancel: {
            waitingRuns.withLock { $0.removeValue(forKey: ticket) }?.resume()
        }
        try Task.checkCancellation()
    }
}
