import Foundation
import JamClient
import JamProtocol

/// The live terminal screen of a session: redraws on every change, on resize and five
/// times a second for the progress bar; keys act through the optimistic store.
struct LiveScreen {
    let participant: Participant
    let api: JamAPI
    /// The session shown, which `L` leaves.
    let sessionId: SessionID
    /// Who is at this terminal ("skipped by you").
    let me: UserID
    var invite: ScreenModel.Invite?
    var startWithInvite = false
    /// Keeps a token the connection refreshed, with its refresh time.
    var keepToken: @Sendable (GuestAuthResponse, Millis?) -> Void = { _, _ in }

    enum Event: Sendable {
        case snapshot(StoreSnapshot)
        case input(TerminalInput)
        case searched(query: String, Result<[Track], JamError>)
        case tick
        /// The connection ended; `failed` when it ended on an error (refused, removed, lost).
        case ended(String, failed: Bool, sessionOver: Bool)
        /// The server took this member's leave; or why it did not.
        case left(Result<Void, JamError>)
        case passing(Passing)
    }

    /// The frames outside the store that the screen shows: the sync column and calibrations.
    enum Passing: Sendable {
        case syncStatus(SyncStatusUpdate)
        case calibration(CalibrationPlan)
        case calibrationResult(CalibrationOutcome)

        /// The frame as the screen shows it, or nil for the frames the store already follows
        /// and the replies to this device: every event is named, so a new one is decided on.
        init?(_ event: ServerEvent) {
            switch event {
            case .syncStatus(let update): self = .syncStatus(update)
            case .calibration(let plan): self = .calibration(plan)
            case .calibrationResult(let outcome): self = .calibrationResult(outcome)
            case .stateSync, .memberJoined, .memberLeft, .memberUpdated, .queueUpdate, .queueItemAdded, .queueItemRemoved, .votesUpdate,
                .playPrepare, .playCommit, .pause, .resume, .seek, .stopped, .skipRequests, .sessionUpdated, .pong, .ack, .error,
                .sessionEnded, .deviceDelay, .resync, .myChoices:
                return nil
            }
        }
    }

    /// How the screen ended: a person quit, after the connection failed (and why), or the
    /// terminal went away (closed, SIGHUP, SIGTERM) and nothing more can be shown on it.
    /// How the screen ended: the person quit, left, lost the connection for good, closed
    /// the terminal, or the session itself ended (`reason` from the server).
    enum Ending: Sendable, Equatable { case quit, left, failed(String), hungUp, sessionEnded(String) }

    /// Shows the session until the person quits or the terminal goes away; returns how it
    /// ended and the session's join code then (a host may have made a new one meanwhile).
    func run() async throws -> (ending: Ending, joinCode: String?) {
        let terminal = Terminal()
        terminal.enter()
        defer { terminal.restore() }
        let (events, sink) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(256))
        var model = ScreenModel()
        model.me = me
        model.invite = invite
        if startWithInvite, invite != nil { model.mode = .invite }
        return await withThrowingTaskGroup(of: Void.self) { group in
            var ending = Ending.quit
            var endedWhileLeaving: (reason: String, failed: Bool)?
            group.addTask {
                do {
                    try await participant.run()
                    sink.yield(.ended("disconnected", failed: false, sessionOver: false))
                } catch {
                    // The host ending the session is an end, not a failure.
                    let jamError = error as? JamError
                    let over = jamError?.code == .gone
                    sink.yield(.ended(jamError?.message ?? "\(error)", failed: !over, sessionOver: over))
                }
            }
            group.addTask {
                for await snapshot in await participant.store.snapshots() { sink.yield(.snapshot(snapshot)) }
            }
            group.addTask {
                for await input in TerminalInputs.stream() { sink.yield(.input(input)) }
            }
            group.addTask {
                // The sync column and calibrations come as passing frames, outside the store.
                for await update in await participant.client.subscribe() {
                    if case .token(let answer, let refreshAt) = update { keepToken(answer, refreshAt) }
                    guard case .envelope(let envelope) = update else { continue }
                    if let passing = Passing(envelope.event) { sink.yield(.passing(passing)) }
                }
            }
            group.addTask {
                while true {
                    try await Task.sleep(for: .milliseconds(200))
                    sink.yield(.tick)
                }
            }
            loop: for await event in events {
                switch event {
                case .snapshot(let snapshot):
                    model.take(snapshot)
                    // A new join code (the host made one): the invite shows it, not the old.
                    if let code = snapshot.session?.joinCode, let shown = model.invite, shown.code != code {
                        model.invite = ScreenModel.Invite(code: code, api: api)
                    }
                case .tick:
                    await refreshClock(&model)
                case .searched(let query, let result):
                    guard case .searching(let current, _, _) = model.mode, current == query else { break }
                    switch result {
                    case .success(let tracks):
                        model.mode = .searching(query: query, results: tracks, choice: 0)
                        if tracks.isEmpty { model.message = "Nothing in the library matches \"\(query)\"." }
                    case .failure(let error):
                        model.message = "Search failed: \(error.message)"
                    }
                case .ended(let reason, let failed, let over):
                    // A leave closes the socket too: its answer, not the close, says how it
                    // went; the close is kept in case the leave fails.
                    guard !model.leaving else {
                        endedWhileLeaving = (reason, failed)
                        break
                    }
                    model.closed = reason
                    model.message = "Connection closed: \(reason). Press q to quit."
                    if failed { ending = .failed(reason) } else if over { ending = .sessionEnded(reason) }
                case .left(.success):
                    // Removed or refused before the leave: that stays how the process ends.
                    if case .failed = ending {} else { ending = .left }
                    break loop
                case .left(.failure(let error)):
                    model.leaving = false
                    model.message = "Couldn't leave: \(error.message)"
                    if let (reason, failed) = endedWhileLeaving {
                        model.closed = reason
                        model.message = "Couldn't leave: \(error.message). Connection closed: \(reason). Press q to quit."
                        if failed { ending = .failed(reason) }
                    }
                case .passing(let event):
                    show(event, &model)
                case .input(.resized):
                    break
                case .input(.hangUp):
                    // A failure already shown stays the reason the process ends with.
                    if case .failed = ending {} else { ending = .hungUp }
                    break loop
                case .input(.key(let key)):
                    if handle(key, &model, group: &group, sink: sink) == .quit { break loop }
                }
                (model.rows, model.columns) = terminal.size
                terminal.draw(ScreenRenderer.render(model))
            }
            group.cancelAll()
            return (ending, model.snapshot.session?.joinCode ?? invite?.code)
        }
    }


    private func show(_ event: Passing, _ model: inout ScreenModel) {
        switch event {
        case .syncStatus(let update):
            model.take(update)
        case .calibration(let plan):
            model.message = "Calibrating: \(plan.probes.count) devices play a probe in turn; keep the room quiet…"
        case .calibrationResult(let outcome):
            model.message = (outcome.ok ? "Calibration: " : "Calibration failed: ") + outcome.message
        }
    }

    private func refreshClock(_ model: inout ScreenModel) async {
        let sync = participant.clockSync
        model.serverNowMs = await participant.serverNow()
        if let serverNow = model.serverNowMs, let error = await sync.errorBoundMs {
            // Shown against this machine's wall clock, the one a person can compare.
            let offset = serverNow - Date().timeIntervalSince1970 * 1000
            let drift = await sync.driftMsPerSecond
            model.syncText = String(format: "%+.1f ms ±%.1f ms, drift %.3f ms/s", offset, error, drift)
        } else {
            model.syncText = "measuring…"
        }
    }
}
