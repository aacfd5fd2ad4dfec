import JamCore
import JamProtocol
import NIOCore

/// The sync column and room calibration: passing measurements kept in memory on the node
/// the devices are connected to. Only the delays a calibration sets become session
/// history (`Command.setDeviceDelay`).
extension LiveSession {
    /// Handles a device-sync message, answering `replyId`.
    func receiveDeviceSync(_ request: DeviceSyncRequest, from connectionID: ConnectionID, user: UserID, replyId: String?) {
        let now = environment.clock.now()
        do throws(JamError) {
            switch request {
            case .report(let report):
                Metrics.syncReports.increment()
                schedulePublish(syncBoard.record(report, from: user, at: now))
                // The round trip also sets the start lead, which is session state.
                receiveCommand(.syncReport(report), from: connectionID, user: user, replyId: replyId, relay: nil)
                return
            case .calibrate(let request):
                try startCalibration(request, by: user, at: now)
            case .calibrationReport(let report):
                try finishCalibration(report, from: user)
            case .resync(let request):
                try requireHostControls(user, "ask a device to re-sync")
                guard state.member(request.userId) != nil else { throw JamError(.notFound, "no member \(request.userId) in this session") }
                sendPassing(.resync(request), to: connections.values.filter { $0.user == request.userId }.map(\.id))
            }
            if let replyId { answer(wire.ack(Ack(id: replyId), state: state, now: now), to: request, replyId, by: user, on: connectionID) }
        } catch {
            noteRefusal(error, by: user, what: request.logName)
            let refusal = wire.error(error, id: replyId, state: state, now: now)
            if let replyId { answer(refusal, to: request, replyId, by: user, on: connectionID) } else { reply(to: connectionID, refusal) }
        }
    }

    /// Sends a device-sync request its answer, kept (as a command's is, with the request's
    /// fingerprint) so that the same request sent again after a reconnect gets it back instead
    /// of a second calibration or re-sync, and a command under its id is refused.
    private func answer(_ payload: ByteBuffer?, to request: DeviceSyncRequest, _ replyId: String, by user: UserID, on connectionID: ConnectionID) {
        guard let payload else { return }
        let frame = WebSocketText.frame(payload)
        answers.remember(frame, for: Self.answerKey(user, replyId), lane: .change, command: RequestFingerprint.forSocket(request))
        replyFramed(to: connectionID, frame)
    }

    private func requireHostControls(_ user: UserID, _ action: String) throws(JamError) {
        guard let role = state.role(of: user) else { throw state.refusal(ofNonMember: user) }
        guard role.hasHostControls else { throw JamError(.forbidden, "only a host or co-host may \(action)") }
    }

    // MARK: The sync column

    /// Publishes now, or once the second since the last publish is over.
    func schedulePublish(_ decision: SyncBoard.Publish) {
        switch decision {
        case .none:
            return
        case .now:
            publishSyncStatus()
        case .at(let instant):
            guard syncPublishTimer == nil else { return }
            let delay = max(0, instant - environment.clock.now())
            syncPublishTimer = eventLoop.scheduleTask(in: .milliseconds(delay)) { [self] in
                self.assumeIsolated { session in
                    session.syncPublishTimer = nil
                    session.schedulePublish(session.syncBoard.due(at: session.environment.clock.now()))
                }
            }
        }
    }

    /// Sends the board to every host and co-host connection.
    func publishSyncStatus() {
        let now = environment.clock.now()
        for user in Set(syncBoard.entries.values.map(\.user)) where state.member(user) == nil { syncBoard.forget(user) }
        let update = syncBoard.publish(at: now)
        sendPassing(.syncStatus(update), to: hostConnections())
    }

    /// A host's new socket sees the board at once rather than at the next report.
    func sendSyncStatus(toNew connection: ConnectionID) {
        guard let user = connections[connection]?.user, state.role(of: user)?.hasHostControls == true,
            !syncBoard.entries.isEmpty
        else { return }
        sendPassing(.syncStatus(syncBoard.status(at: environment.clock.now())), to: [connection])
    }

    private func hostConnections() -> [ConnectionID] {
        connections.values.filter { state.role(of: $0.user)?.hasHostControls == true }.map(\.id)
    }

    /// Queues a passing frame for `targets`, behind everything applied so far.
    func sendPassing(_ event: ServerEvent, to targets: [ConnectionID]) {
        guard let frame = wire.passing(event, state: state, now: environment.clock.now()) else { return }
        let framed = WebSocketText.frame(frame)
        for target in targets { replyFramed(to: target, framed) }
    }

    // MARK: Calibration

    func startCalibration(_ request: Calibrate, by user: UserID, at now: Millis) throws(JamError) {
        try requireHostControls(user, "start a calibration")
        if calibration != nil { throw JamError(.conflict, "a calibration is already running; wait for its result") }
        let listener = DeviceRef(userId: request.userId ?? user, deviceId: request.deviceId)
        guard state.member(listener.userId) != nil else { throw JamError(.notFound, "no member \(listener.userId) in this session") }
        let devices = syncBoard.playingDevices(at: now).filter { state.member($0.userId) != nil }
        let run = try CalibrationRun.start(
            id: environment.ids.next().rawValue, listener: listener, listenerCanListen: syncBoard.canListen(listener), devices: devices,
            by: user, at: now)
        calibration = run
        logger.info("calibration started", metadata: ["calibration.id": "\(run.plan.id)", "calibration.devices": "\(run.plan.probes.count)"])
        sendPassing(.calibration(run.plan), to: Array(connections.keys))
        let id = run.plan.id
        calibrationTimer = eventLoop.scheduleTask(in: .milliseconds(max(0, run.deadline - now))) { [self] in
            self.assumeIsolated { $0.calibrationTimedOut(id) }
        }
    }

    private func calibrationTimedOut(_ id: String) {
        guard let run = calibration, run.plan.id == id else { return }
        endCalibration()
        sendPassing(.calibrationResult(run.timedOut(delays: state.deviceDelay(of:))), to: Array(connections.keys))
    }

    func finishCalibration(_ report: CalibrationReport, from user: UserID) throws(JamError) {
        guard let run = calibration else { throw JamError(.notFound, "no calibration is running") }
        try run.check(report, from: user)
        endCalibration()
        var (outcome, changes) = run.outcome(of: report, delays: state.deviceDelay(of:))
        // Members who left meanwhile took their delays with them: nothing to correct.
        changes.removeAll { state.member($0.userId) == nil }
        if !changes.isEmpty {
            // On the host's authority, which the start was checked against: the starter leaving
            // or losing the role meanwhile does not void the run.
            let authority = state.member(state.hostId) != nil ? state.hostId : run.startedBy
            if role == .replica {
                // One forward each, as the owner would apply them: one refused does not void the rest.
                for change in changes { forwardFromSocket(.setDeviceDelay(change), by: authority, connection: nil, replyId: nil) }
            } else {
                // One by one: a device one member may not keep a delay for more does not void the others'.
                var refused: [String] = []
                for change in changes {
                    let command = Command.setDeviceDelay(change)
                    do throws(JamError) {
                        try take(.command(command, by: authority), cause: .command(command, by: authority, connection: nil, relay: nil))
                    } catch {
                        refused.append("\(change.deviceId) (\(error.message))")
                    }
                }
                if !refused.isEmpty {
                    outcome.ok = refused.count < changes.count
                    outcome.message += "; not applied to \(refused.joined(separator: ", "))"
                }
            }
        }
        // What each device's delay is now, whatever could not be applied (a replica's
        // forward is not applied yet: its results say what was sent).
        for index in outcome.results.indices where role != .replica {
            let result = outcome.results[index]
            outcome.results[index].delayMs = state.deviceDelay(of: DeviceRef(userId: result.userId, deviceId: result.deviceId))
        }
        logger.info("calibration finished", metadata: ["calibration.id": "\(run.plan.id)", "calibration.ok": "\(outcome.ok)"])
        sendPassing(.calibrationResult(outcome), to: Array(connections.keys))
    }

    private func endCalibration() {
        calibration = nil
        calibrationTimer?.cancel()
        calibrationTimer = nil
    }

    /// Stops the device-sync timers (the server is stopping).
    func stopDeviceSyncTimers() {
        syncPublishTimer?.cancel()
        syncPublishTimer = nil
        endCalibration()
    }
}
