import Foundation
import JamClient
import JamProtocol

/// The live screen's keys: each mode's, the member's and the host's, acting through the
/// optimistic store.
extension LiveScreen {
    /// Whether the screen goes on after a key.
    enum Outcome { case keepGoing, quit }

    /// Acts on `key` in the screen's current mode.
    func handle(_ key: Key, _ model: inout ScreenModel, group: inout ThrowingTaskGroup<Void, any Error>, sink: AsyncStream<Event>.Continuation) -> Outcome {
        let store = participant.store
        // Closed for good: an add or a vote would go nowhere and show nothing. `q` quits from
        // any mode (a prompt would take it as a letter), and leaving (a removed member's
        // leave still ends as a leave) goes on as ever.
        if let closed = model.closed, model.mode != .confirmingLeave {
            if key == .interrupt || key == .character("q") { return .quit }
            if !(key == .character("L") && model.mode == .normal) {
                model.mode = .normal
                model.message = "Connection closed: \(closed). Press q to quit."
                return .keepGoing
            }
        }
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
            case .deleteWord:
                model.mode = .searching(query: TerminalText.droppingLastWord(query), results: [], choice: 0)
            case .character(let character):
                model.mode = .searching(query: query + String(character), results: [], choice: 0)
            case .paste(let text):
                model.mode = .searching(query: query + TerminalText.pastedLine(text), results: [], choice: 0)
            default:
                break
            }
            return .keepGoing
        }
        if case .adding(let text) = model.mode {
            switch key {
            case .enter:
                guard let track = TypedTrack.track(from: text) else {
                    model.message = "Type a title first (Title - Artist)."
                    return .keepGoing
                }
                model.mode = .normal
                group.addTask { await store.add(track) }
            case .escape, .interrupt:
                model.mode = .normal
            case .backspace:
                model.mode = .adding(String(text.dropLast()))
            case .deleteWord:
                model.mode = .adding(TerminalText.droppingLastWord(text))
            case .character(let character):
                model.mode = .adding(text + String(character))
            case .paste(let pasted):
                model.mode = .adding(text + TerminalText.pastedLine(pasted))
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
            // A second press takes the request back, as the web client's button does.
            if model.snapshot.skipRequests.mine {
                group.addTask { await store.withdrawSkipRequest() }
            } else {
                group.addTask { await store.requestSkip() }
            }
        case .character("L"):
            model.mode = .confirmingLeave
        case .character("i"):
            if model.invite != nil { model.mode = .invite }
        case .character("n") where model.hasHostControls:
            group.addTask { await store.skip() }
        case .character("p") where model.hasHostControls:
            // Nothing playing: start the queue (or, with the music kept going, the library), as
            // the web client's "Play the queue" does.
            guard let now = model.snapshot.nowPlaying else {
                // A skip on its way hides the song it skips: nothing to start or pause then.
                if !model.snapshot.skipping { group.addTask { await store.perform(.play, as: "play") } }
                return .keepGoing
            }
            let paused = now.state == .paused
            // For the song shown: pressed while offline, it must not stop or start the next one.
            let meant = Pause(epoch: now.epoch)
            group.addTask { await store.perform(paused ? .resume(meant) : .pause(meant), as: paused ? "resume" : "pause") }
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
        case .paste:
            // Pasted letters are not keys: "skip" pasted here must not skip.
            model.message = "To paste a song, press a (add) or / (search) first."
        default:
            break
        }
        return .keepGoing
    }

    /// What a refused delay is called on the screen, and how the screen knows it.
    static let setDelayAction = "set the delay"

    /// The host's keys on the sync column's chosen device.
    func handleSync(_ key: Key, _ model: inout ScreenModel, group: inout ThrowingTaskGroup<Void, any Error>) -> Bool {
        guard model.hasHostControls, let count = model.syncBoard?.devices.count, count > 0 else { return false }
        let store = participant.store
        switch key {
        case .character("["):
            model.syncSelection = max(0, model.syncSelection - 1)
        case .character("]"):
            model.syncSelection = min(count - 1, model.syncSelection + 1)
        case .character("<"), .character(">"):
            guard let device = model.selectedDevice, let deviceId = device.deviceId,
                let delay = model.stepDelay(of: device, by: key == .character(">") ? 5.0 : -5.0)
            else { return true }
            let command = ClientCommand.setDeviceDelay(SetDeviceDelay(userId: device.userId, deviceId: deviceId, delayMs: delay))
            group.addTask { await store.perform(command, as: LiveScreen.setDelayAction) }
        case .character("r"):
            guard let device = model.selectedDevice else { return true }
            group.addTask { await store.perform(.resync(Resync(userId: device.userId, deviceId: device.deviceId)), as: "re-sync") }
            model.message = "Asked the device to re-sync."
        case .character("c"):
            guard let device = model.selectedDevice, let deviceId = device.deviceId else { return true }
            if device.canListen == false {
                model.message = "That device cannot record the room; choose one that can listen (a browser allowed to use a microphone)."
                return true
            }
            group.addTask { await store.perform(.calibrate(Calibrate(userId: device.userId, deviceId: deviceId)), as: "calibrate") }
        default:
            return false
        }
        return true
    }
}
