import Foundation
import JamProtocol
import Logging

/// Frames from the server: answers settle waiting sends, events feed the mirror, and a
/// gap or an unreadable frame asks for a resume or the whole state.
extension SessionClient {
    /// Routes every `pong` with its local receive instant (taken as the frame arrives) to `handler`,
    /// typically `ClockSync.record`.
    public func onPong(_ handler: @escaping @Sendable (Pong, Double) async -> Void) {
        pongHandler = handler
    }

    func received(_ text: String) async throws(JamError) {
        let receivedAt = clock.now()
        lastHeardAt = receivedAt
        let envelope: ServerEnvelope
        do {
            envelope = try ServerEnvelope.decode(Data(text.utf8))
        } catch {
            if error.code != .unknownType {
                logger.warning("a server frame did not decode", metadata: ["error": "\(error)"])
            }
            // Either way the frame's change is missing here, and a resume would replay it.
            try await unreadable(text)
            return
        }
        switch envelope.event {
        case .pong(let pong):
            unansweredPings.removeValue(forKey: pong.clientSendTime)
            answered()
            if ownPings.remove(pong.clientSendTime) != nil {
                // The socket's first ping or the watch's probe: not a clock sample anyone asked for.
                return
            }
            broadcast(.envelope(envelope))
            await pongHandler?(pong, receivedAt)
            return
        case .ack(let ack):
            answered()
            broadcast(.envelope(envelope))
            settle(ack.id, .success(ack))
            return
        case .error(let error):
            broadcast(.envelope(envelope))
            if let id = error.id {
                settle(id, .failure(JamError(error.code, error.message, retryAfterMs: error.retryAfterMs)))
            } else {
                // A refusal of a frame sent without an id: a hello among them (too many, say),
                // or of the connection itself, just before its close.
                lastRefusal = JamError(error.code, error.message)
                // The resume it asked for is not coming, so the next gap asks again.
                helloInFlight = false
                wholeStateInFlight = false
                // Or a ping over its budget: it is answered, if not with a pong. The server
                // answers a socket's frames in order and pongs at once, so it is the oldest.
                if let oldest = unansweredPings.min(by: { $0.value < $1.value })?.key { unansweredPings.removeValue(forKey: oldest) }
                logger.info("the server reported an error", metadata: ["error.code": "\(error.code.rawValue)", "error": "\(error.message)"])
            }
            return
        case .stateSync, .memberJoined, .memberLeft, .memberUpdated, .queueItemAdded, .queueItemRemoved, .queueUpdate, .votesUpdate,
            .playPrepare, .playCommit, .pause, .resume, .seek, .stopped, .skipRequests, .sessionUpdated, .sessionEnded, .syncStatus,
            .deviceDelay, .calibration, .calibrationResult, .resync, .myChoices:
            answered()
        }
        // Subscribers get each event once and in order: not a frame a resume will bring again.
        switch mirror.apply(envelope) {
        case .applied:
            helloInFlight = false
            wholeStateInFlight = false
            broadcast(.envelope(envelope))
            broadcast(.mirror(mirror))
        case .direct:
            broadcast(.envelope(envelope))
        case .mine:
            broadcast(.envelope(envelope))
            broadcast(.mirror(mirror))
        case .gap:
            await resume()
        case .duplicate, .stale:
            break
        }
    }

    /// The server answers on this socket (an error is not an answer: a server that refuses and
    /// closes must not reset the back-off). It is open, and whatever it missed is on its way.
    func answered() {
        guard case .connecting = phase else { return }
        setPhase(.connected)
        // The member is in: a given-up command kept from the socket before (a `leave`) was not
        // applied, and a later refusal as not a member (away too long) is not its answer.
        for id in pendingOrder where pending[id]?.abandoned == true && pending[id]?.wentOutOn != socketGeneration {
            forget(id)
        }
    }

    /// Asks for what was missed (or a full `stateSync`).
    func resume() async {
        await sendHello(lastSeq: mirror.seq)
    }

    /// A frame this build cannot read: a newer server's event type, or a known one in a shape
    /// it cannot decode. One that took a `seq` this mirror lacks changed the session in a way
    /// only the whole state can show: asking to resume after the frame before it would replay
    /// the same frame. One that did not (a passing frame) is dropped. An unreadable whole
    /// state ends the connection with `malformed`.
    func unreadable(_ text: String) async throws(JamError) {
        // The whole state is what an unreadable event is mended with: one this build cannot
        // read (a newer server's value in it) would come the same when asked again, and the
        // session would stand still without a word. The connection ends, saying why.
        struct Typed: Decodable { let type: String }
        let type: String?
        do {
            type = try WireCoding.decode(Typed.self, from: Data(text.utf8)).type
        } catch {
            type = nil // no type to read: handled below as any other unreadable frame
        }
        if type == ServerEventType.stateSync.rawValue {
            logger.error("the server sent a session state this client cannot read", metadata: ["frame.bytes": "\(text.utf8.count)"])
            throw JamError(.malformed, "the server sent the session's state in a form this version of the app cannot read; update the app")
        }
        // An answer this build cannot read (a newer server's error code, say) still answers
        // its command: left waiting, the command would be sent again after every reconnect
        // and get the same answer.
        struct Answer: Decodable {
            struct Payload: Decodable { let id: String?, message: String? }
            let type: String
            let data: Payload?
        }
        do {
            let answer = try WireCoding.decode(Answer.self, from: Data(text.utf8))
            if let id = answer.data?.id, let type = ServerEventType(rawValue: answer.type) {
                switch type {
                case .ack:
                    // Applied: the parts this build cannot read (a newer item or score) are
                    // in the events the server sends as well.
                    settle(id, .success(Ack(id: id)))
                    return
                case .error:
                    let message = answer.data?.message ?? "the server refused this command for a reason this version of the app cannot read"
                    settle(id, .failure(JamError(.internal, message)))
                    return
                case .stateSync, .memberJoined, .memberLeft, .memberUpdated, .queueUpdate, .queueItemAdded, .queueItemRemoved, .votesUpdate,
                    .playPrepare, .playCommit, .pause, .resume, .seek, .stopped, .skipRequests, .sessionUpdated, .pong, .sessionEnded,
                    .deviceDelay, .syncStatus, .calibration, .calibrationResult, .resync, .myChoices:
                    break
                }
            }
        } catch {
            // Not an answer at all: handled below as any other frame.
        }
        struct Numbered: Decodable { let seq: Int64 }
        let numbered: Numbered
        do {
            numbered = try WireCoding.decode(Numbered.self, from: Data(text.utf8))
        } catch {
            logger.warning("a server frame this client cannot read has no seq", metadata: ["error": "\(error)"])
            return
        }
        guard let seq = mirror.seq, numbered.seq > seq else { return }
        logger.info("the server sent an event this client cannot read; taking the whole state", metadata: ["seq": "\(numbered.seq)"])
        await sendHello(lastSeq: nil)
    }

    func sendHello(lastSeq: Int64?) async {
        // A resume in flight may replay the very frame that needs the whole state, so only
        // another request for the whole state would be one too many.
        let wholeState = lastSeq == nil
        guard wholeState ? !wholeStateInFlight : !helloInFlight, let socket else { return }
        helloInFlight = true
        if wholeState { wholeStateInFlight = true }
        do {
            try await socket.send(ClientFrame(.hello(Hello(lastSeq: lastSeq))).jsonString())
        } catch {
            helloInFlight = false
            wholeStateInFlight = false
        }
    }

    func settle(_ id: String, _ result: Result<Ack, JamError>) {
        guard var command = pending[id] else { return }
        if command.leaves, case .success = result { hasLeft = true }
        // Shown as the answer is read, in frame order: a `myChoices` from another of the
        // member's devices that follows it must not be overwritten by it later.
        if case .success = result, let shows = command.answerShows {
            switch shows {
            case .vote(let itemId, let value): mirror.setMyVote(itemId, value)
            case .skipRequest(let itemId, asking: true): mirror.requestSkipAnswered(for: itemId)
            case .skipRequest(let itemId, asking: false): mirror.withdrawSkipAnswered(for: itemId)
            }
            broadcast(.mirror(mirror))
        }
        if command.abandoned {
            forget(id)
            return
        }
        guard let continuation = command.continuation else {
            command.result = result
            pending[id] = command
            return
        }
        forget(id)
        continuation.resume(with: result.mapError { $0 as any Error })
    }
}
