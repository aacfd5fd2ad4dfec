import Foundation
import JamProtocol
import Logging

/// Commands to the server: sent with ids, kept until answered, sent again after a reconnect.
extension SessionClient {
    /// Sends `command` and waits for the server's answer; while disconnected it waits for
    /// the next connection. A refusal throws the server's typed error; a command the server
    /// would refuse for its values or its size throws at once, without being sent, and so does
    /// any command once this member's `leave` was answered (`notMember`).
    @discardableResult
    public func send(_ command: ClientCommand) async throws -> Ack {
        if case .failed(let error) = phase { throw error }
        // The server answered this member's leave: no connection of this run will take it, and
        // the next would be refused. A `run()` after joining again clears this.
        if hasLeft { throw JamError(.notMember, "this member left the session; join it again first") }
        // Refused here, with the server's words, rather than sent: a frame the server refuses
        // as too large closes the socket, and going again after the reconnect it would close
        // every socket after it.
        try command.validate()
        commandCounter += 1
        let id = "\(me.rawValue.prefix(8))-\(commandCounter)-\(UInt32.random(in: 0...UInt32.max, using: &random))"
        let frame = ClientFrame(command, id: id).jsonString()
        guard frame.utf8.count <= ClientFrame.maxBytes else {
            throw JamError(.tooLarge, "the command is \(frame.utf8.count) bytes; a frame holds at most \(ClientFrame.maxBytes)")
        }
        var entry = PendingCommand(frame: frame, sentAt: clock.now())
        let playing = mirror.view?.nowPlaying?.item.id
        switch command {
        case .leave: entry.leaves = true
        case .vote(let vote): entry.answerShows = .vote(vote.itemId, vote.value)
        case .requestSkip: entry.answerShows = playing.map { .skipRequest(for: $0, asking: true) }
        case .withdrawSkipRequest: entry.answerShows = playing.map { .skipRequest(for: $0, asking: false) }
        case .hello, .ping, .addToQueue, .removeFromQueue, .skip, .play, .pause, .resume, .seek, .ready, .syncReport,
            .updateSettings, .promote, .kick, .setDeviceDelay, .calibrate, .calibrationReport, .resync:
            // The server's events carry everything else the mirror shows.
            break
        }
        pending[id] = entry
        pendingOrder.append(id)
        if let socket {
            let generation = socketGeneration
            do {
                try await socket.send(frame)
                // A reconnect while this send was awaited may have sent it again on a later socket.
                if pending[id]?.wentOutOn ?? .min < generation { pending[id]?.wentOutOn = generation }
            } catch {
                logger.debug("send failed; it goes again after the reconnect", metadata: ["command.id": "\(id)"])
            }
        }
        // A caller that gives up (its task cancelled: a screen closed while disconnected)
        // stops waiting; the command is not sent again, but an answer to the frame already
        // out still counts (`giveUp`).
        let ack: Ack = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard let entry = pending[id] else {
                    continuation.resume(throwing: JamError(.unavailable, "the connection closed for good"))
                    return
                }
                if let result = entry.result {
                    forget(id)
                    continuation.resume(with: result.mapError { $0 as any Error })
                } else if Task.isCancelled {
                    giveUp(id)
                    continuation.resume(throwing: CancellationError())
                } else {
                    pending[id]?.continuation = continuation
                }
            }
        } onCancel: {
            Task { await self.giveUp(id) }
        }
        return ack
    }

    /// Stops waiting for the answer to command `id`. The command is not sent again; an answer
    /// that still comes for it settles what it shows (a vote as the member's own, a `leave` as
    /// left), as the server applied it all the same.
    func giveUp(_ id: String) {
        guard var entry = pending[id] else { return }
        entry.continuation?.resume(throwing: CancellationError())
        entry.continuation = nil
        guard entry.result == nil else {
            // Answered already, and its answer settled then: nothing more comes for it.
            forget(id)
            return
        }
        entry.abandoned = true
        pending[id] = entry
    }

    /// Drops command `id` from the commands waiting for an answer.
    func forget(_ id: String) {
        pending[id] = nil
        pendingOrder.removeAll { $0 == id }
    }

    /// Sends a frame that needs no answer (ping, ready, syncReport); false when not connected,
    /// or when the server would refuse its values (logged, not sent: a figure that is not a
    /// number cannot even be written as JSON).
    @discardableResult
    public func post(_ command: ClientCommand) async -> Bool {
        do {
            try command.validate()
        } catch {
            logger.warning("not sent: the server would refuse it", metadata: ["command.type": "\(command.type.rawValue)", "error": "\(error.message)"])
            return false
        }
        guard let socket else { return false }
        // A ping is noted before it goes: its pong can come while the send is still awaited.
        let generation = socketGeneration
        if case .ping(let ping) = command { unansweredPings[ping.clientSendTime] = clock.now() }
        do {
            try await socket.send(ClientFrame(command).jsonString())
            return true
        } catch {
            if case .ping(let ping) = command, generation == socketGeneration { unansweredPings.removeValue(forKey: ping.clientSendTime) }
            return false
        }
    }

    /// Asks the server to drop this socket (tests and "reconnect now" buttons).
    public func dropConnection() async {
        await socket?.close()
    }
}
