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

    private enum Event: Sendable {
        case snapshot(StoreSnapshot)
        case input(TerminalInput)
        case searched(query: String, Result<[Track], JamError>)
        case tick
        /// The connection ended; `failed` when it ended on an error (refused, removed, lost).
        case ended(String, failed: Bool)
        /// The server took this member's leave; or why it did not.
        case left(Result<Void, JamError>)
        case passing(Passing)
    }

    /// The frames outside the store that the screen shows: the sync column and calibrations.
    private enum Passing: Sendable {
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
                .sessionEnded, .deviceDelay, .resync:
                return nil
            }
        }
    }

    /// How the screen ended: a person quit, after the connection failed (and why), or the
    /// terminal went away (closed, SIGHUP, SIGTERM) and nothing more can be shown on it.
    enum Ending: Sendable, Equatable { case quit, left, failed(String), hungUp }

    /// Shows the session until the person quits or the terminal goes away.
    func run() async throws -> Ending {
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
                    sink.yield(.ended("disconnected", failed: false))
                } catch {
                    // The host ending the session is an end, not a failure.
                    let jamError = error as? JamError
                    sink.yield(.ended(jamError?.message ?? "\(error)", failed: jamError?.code != .gone))
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
                    // The selection follows its item when votes reorder the queue.
                    let selectedId = model.selectedItem?.id
                    model.snapshot = snapshot
                    if let selectedId, let index = snapshot.queue.firstIndex(where: { $0.id == selectedId }) {
                        model.selection = index
                    }
                    model.selection = min(model.selection, max(0, snapshot.queue.count - 1))
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
                case .ended(let reason, let failed):
                    // A leave closes the socket too: its answer, not the close, says how it
                    // went; the close is kept in case the leave fails.
                    guard !model.leaving else {
                        endedWhileLeaving = (reason, failed)
                        break
                    }
                    model.message = "Connection closed: \(reason). Press q to quit."
                    if failed { ending = .failed(reason) }
                case .left(.success):
                    // Removed or refused before the leave: that stays how the process ends.
                    if case .failed = ending {} else { ending = .left }
                    break loop
                case .left(.failure(let error)):
                    model.leaving = false
                    model.message = "Couldn't leave: \(error.message)"
                    if let (reason, failed) = endedWhileLeaving {
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
            return ending
        }
    }

    private enum Outcome { case keepGoing, quit }

    private func show(_ event: Passing, _ model: inout ScreenModel) {
        switch event {
        case .syncStatus(let update):
            // The selection follows its device when rows come and go.
            let selected = model.selectedDevice.map { DeviceRef(userId: $0.userId, deviceId: $0.deviceId ?? "") }
            model.syncBoard = update
            if let selected, let index = update.devices.firstIndex(where: { $0.userId == selected.userId && ($0.deviceId ?? "") == selected.deviceId }) {
                model.syncSelection = index
            }
            model.syncSelection = min(model.syncSelection, max(0, update.devices.count - 1))
        case .calibration(let plan):
            model.message = "Calibrating: \(plan.probes.count) devices play a probe in turn; keep the room quiet…"
        case .calibrationResult(let outcome):
            model.message = (outcome.ok ? "Calibration: " : "Calibration failed: ") + outcome.message
        }
    }

    /// The host's keys on the sync column's chosen device.
    private func handleSync(_ key: Key, _ model: inout ScreenModel, group: inout ThrowingTaskGroup<Void, any Error>) -> Bool {
        guard model.hasHostControls, let count = model.syncBoard?.devices.count, count > 0 else { return false }
        let store = participant.store
        switch key {
        case .character("["):
            model.syncSelection = max(0, model.syncSelection - 1)
        case .character("]"):
            model.syncSelection = min(count - 1, model.syncSelection + 1)
        case .character("<"), .character(">"):
            guard let device = model.selectedDevice, let deviceId = device.deviceId else { return true }
            let step = key == .character(">") ? 5.0 : -5.0
            let delay = min(max((device.delayMs ?? 0) + step, -Validate.maxDeviceDelayMs), Validate.maxDeviceDelayMs)
            let command = ClientCommand.setDeviceDelay(SetDeviceDelay(userId: device.userId, deviceId: deviceId, delayMs: delay))
            group.addTask { await store.perform(command, as: "set the delay") }
        case .character("r"):
            guard let device = model.selectedDevice else { return true }
            group.addTask { await store.perform(.resync(Resync(userId: device.userId, deviceId: device.deviceId)), as: "re-sync") }
            model.message = "Asked the device to re-sync."
        case .character("c"):
            guard let device = model.selectedDevice, let deviceId = device.deviceId else { return true }
            group.addTask { await store.perform(.calibrate(Calibrate(userId: device.userId, deviceId: deviceId)), as: "calibrate") }
        default:
            return false
        }
        return true
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

    private func handle(_ key: Key, _ model: inout ScreenModel, group: inout ThrowingTaskGroup<Void, any Error>, sink: AsyncStream<Event>.Continuation) -> Outcome {
        let store = participant.store
        model.message = nil
        if model.mode == .confirmingLeave {
            model.mode = .normal
            switch key {
            case .character("y"), .character("Y"):
                guard !model.leaving else { break }
                model.leaving = true
                model.message = "Leaving…"
                let (api, id) = (self.api, sessionId)
                group.addTask {
                    do throws(JamError) {
                        try await api.leave(id)
                        sink.yield(.left(.success(())))
                    } catch {
                        // Gone already (ended, or removed): there is nothing left to leave.
                        sink.yield(.left(error.code == .gone || error.code == .notMember ? .success(()) : .failure(error)))
                    }
                }
            case .interrupt:
                return .quit
            default:
                break
            }
            return .keepGoing
        }
        if model.mode == .invite {
            if key == .interrupt { return .quit }
            model.mode = .normal
            return .keepGoing
        }
        if case .settings(let choice) = model.mode {
            let rows = SettingsRow.allCases
            switch key {
            case .up: model.mode = .settings(choice: max(0, choice - 1))
            case .down: model.mode = .settings(choice: min(rows.count - 1, choice + 1))
            case .left, .right, .enter, .character(" "):
                guard model.hasHostControls, let settings = model.snapshot.session?.settings,
                    let patch = rows[choice].patch(settings, step: key == .left ? -1 : 1)
                else { return .keepGoing }
                group.addTask { await store.perform(.updateSettings(patch), as: "change the settings") }
            case .escape, .character("o"), .character("q"):
                model.mode = .normal
            case .interrupt:
                return .quit
            default:
                break
            }
            return .keepGoing
        }
        if case .searching(let query, let results, let choice) = model.mode {
            switch key {
            case .enter:
                if results.indices.contains(choice) {
                    let track = results[choice]
                    model.mode = .normal
                    group.addTask { await store.add(track) }
                } else if !query.isEmpty {
                    let api = self.api
                    group.addTask {
                        do throws(JamError) {
                            sink.yield(.searched(query: query, .success(try await api.search(query))))
                        } catch {
                            sink.yield(.searched(query: query, .failure(error)))
                        }
                    }
                }
            case .up:
                model.mode = .searching(query: query, results: results, choice: max(0, choice - 1))
            case .down:
                // Only the results on screen can be chosen: Enter adds what the person sees.
                let last = min(ScreenRenderer.searchResultsShown, results.count) - 1
                model.mode = .searching(query: query, results: results, choice: min(max(0, last), choice + 1))
            case .escape, .interrupt:
                model.mode = .normal
            case .backspace:
                model.mode = .searching(query: String(query.dropLast()), results: [], choice: 0)
            case .character(let character):
                model.mode = .searching(query: query + String(character), results: [], choice: 0)
            default:
                break
            }
            return .keepGoing
        }
        if case .adding(let text) = model.mode {
            switch key {
            case .enter:
                model.mode = .normal
                // " - " parts title from artist; a hyphen inside either ("Anti-Hero") stays.
                let split = text.range(of: " - ")
                let title = String(split.map { text[..<$0.lowerBound] } ?? text[...]).trimmingCharacters(in: .whitespaces)
                guard !title.isEmpty else { return .keepGoing }
                let artist = split.map { text[$0.upperBound...].trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 } ?? "Unknown artist"
                let track = Track(id: "tui-\(UUID().uuidString.lowercased())", name: title, artist: artist, durationMs: 180_000, source: .external)
                group.addTask { await store.add(track) }
            case .escape, .interrupt:
                model.mode = .normal
            case .backspace:
                model.mode = .adding(String(text.dropLast()))
            case .character(let character):
                model.mode = .adding(text + String(character))
            default:
                break
            }
            return .keepGoing
        }
        if handleSync(key, &model, group: &group) { return .keepGoing }
        let selected = model.selectedItem
        switch key {
        case .interrupt, .character("q"):
            return .quit
        case .up, .character("k"):
            model.selection = max(0, model.selection - 1)
        case .down, .character("j"):
            model.selection = min(max(0, model.snapshot.queue.count - 1), model.selection + 1)
        case .character("+"), .character("="):
            if let selected, !selected.pending { group.addTask { await store.vote(selected.id, 1) } }
        case .character("-"):
            if let selected, !selected.pending { group.addTask { await store.vote(selected.id, -1) } }
        case .character("0"):
            if let selected, !selected.pending { group.addTask { await store.vote(selected.id, 0) } }
        case .character("a"):
            model.mode = .adding("")
        case .character("/"):
            model.mode = .searching(query: "", results: [], choice: 0)
        case .character("s"):
            group.addTask { await store.requestSkip() }
        case .character("L"):
            model.mode = .confirmingLeave
        case .character("i"):
            if model.invite != nil { model.mode = .invite }
        case .character("n") where model.hasHostControls:
            group.addTask { await store.skip() }
        case .character("p") where model.hasHostControls:
            let paused = model.snapshot.nowPlaying?.state == .paused
            group.addTask { await store.perform(paused ? .resume : .pause, as: paused ? "resume" : "pause") }
        case .character(",") where model.hasHostControls, .character(".") where model.hasHostControls:
            // Ten seconds back or ahead, from where the song is now; never to its very end.
            guard let now = model.snapshot.nowPlaying else { return .keepGoing }
            let position = model.serverNowMs.map { now.position(at: Millis($0)) } ?? now.positionMs
            let step: Int64 = key == .character(".") ? 10_000 : -10_000
            var target = max(0, position + step)
            if let duration = now.item.track.durationMs { target = min(target, max(0, duration - 1000)) }
            // For this song only: sent again after a reconnect, it must not move the next one.
            let command = ClientCommand.seek(Seek(positionMs: target, epoch: now.epoch))
            group.addTask { await store.perform(command, as: "seek") }
        case .character("o") where model.hasHostControls:
            model.mode = .settings(choice: 0)
        case .character("l") where model.hasHostControls:
            let locked = model.snapshot.session?.settings.locked == true
            group.addTask { await store.perform(.updateSettings(SettingsPatch(locked: !locked)), as: locked ? "unlock" : "lock") }
        case .character("d"):
            if let selected, !selected.pending { group.addTask { await store.perform(.removeFromQueue(ItemRef(itemId: selected.id)), as: "remove") } }
        default:
            break
        }
        return .keepGoing
    }
}
