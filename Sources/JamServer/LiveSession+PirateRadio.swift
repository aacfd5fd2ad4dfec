import JamCore
import JamProtocol

/// PirateRadio messages, mapped onto the same commands as OpenJam's.
extension LiveSession {
    /// Handles one PirateRadio message from `connection`.
    func handle(pirate message: PirateRadio.ClientMessage, from connection: Connection, receivedAt: Double) {
        guard attached[connection.id] != nil else { return }
        let now = environment.clock.now()
        let command: Command
        switch message.body {
        case .ping(let ping):
            let pong = wire.pong(clientSendTime: ping.clientSendTime, receivedAt: receivedAt, sentAt: environment.clock.nowPrecise(), state: state, now: now)
            deliver(pong, to: connection.id)
            settleUndeliverable()
            return
        case .driftReport:
            relayDriftReport(message.rawData, from: connection)
            return
        case .playPrepare(let prepare):
            command = .djPrepare(track: prepare.track.openJam, itemId: environment.ids.next())
        case .playCommit(let data):
            command = .djTimeline(.commit(positionMs: Self.millis(data.positionMs), at: Self.millis(data.ntpTimestamp) ?? now))
        case .pause(let data):
            command = .djTimeline(.pause(positionMs: Self.millis(data.positionMs), at: Self.millis(data.ntpTimestamp) ?? now))
        case .resume(let data):
            let at = Self.millis(data.executionTime) ?? Self.millis(data.ntpTimestamp) ?? now
            command = .djTimeline(.resume(positionMs: Self.millis(data.positionMs), at: at))
        case .seek(let data):
            command = .djTimeline(.seek(positionMs: Self.millis(data.positionMs), at: Self.millis(data.ntpTimestamp) ?? now))
        case .skip:
            // PirateRadio's skip with nothing queued is a no-op, not an error.
            guard !state.queue.isEmpty || connection.userId != state.hostId else { return }
            command = .skip
        case .addToQueue(let add):
            command = .add(track: add.track.openJam, nonce: add.nonce, itemId: environment.ids.next())
        case .removeFromQueue(let remove):
            guard let item = state.rankedQueue().first(where: { $0.item.track.id == remove.trackId }) else {
                reply(to: connection.id, wire.error(JamError(.notFound, "no queued track \(remove.trackId)"), id: nil, state: state, now: now))
                return
            }
            command = .remove(itemId: item.item.id)
        }
        if case .remove = command, connection.userId != state.hostId {
            // PirateRadio lets only the DJ remove, even the adder.
            reply(to: connection.id, wire.error(JamError(.forbidden, "only the DJ may remove tracks"), id: nil, state: state, now: now))
            return
        }
        execute(command, from: connection, replyId: nil, relay: message.rawData)
    }

    /// Sends a member's drift report to the DJ only, naming the member.
    private func relayDriftReport(_ rawData: String, from connection: Connection) {
        guard let pirate = wire as? PirateRadioWire else { return }
        var data = rawData
        if data.hasPrefix("{") && !data.contains("\"userId\"") {
            let member = PirateRadio.json(connection.userId.rawValue)
            data = data == "{}" ? "{\"userId\":\(member)}" : "{\"userId\":\(member)," + data.dropFirst()
        }
        let frame = pirate.direct("driftReport", data, state: state, now: environment.clock.now())
        for (key, entry) in attached where entry.connection.userId == state.hostId && entry.connection.id != connection.id {
            deliver(frame, to: key)
        }
        settleUndeliverable()
    }

    /// The session as PirateRadio's snapshot.
    func pirateSnapshot() -> PirateRadio.Snapshot {
        let pirate = (wire as? PirateRadioWire) ?? PirateRadioWire(epoch: state.epoch)
        var copy = pirate
        return copy.snapshot(state)
    }

    static func millis(_ value: Double) -> Int64 {
        guard value.isFinite else { return 0 }
        return Int64(value.rounded())
    }

    static func millis(_ value: Double?) -> Int64? {
        value.map(millis)
    }
}
