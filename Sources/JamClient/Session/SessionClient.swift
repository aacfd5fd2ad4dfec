import Foundation
import JamProtocol
import Logging

/// One member's live connection to a session: keeps the socket open (reconnecting with
/// capped, jittered back-off), mirrors the session from its events, resumes from the
/// last `seq` after a drop, and sends commands with ids so a retry after a reconnect
/// is answered, not applied twice.
public actor SessionClient {
    private struct PendingCommand {
        let frame: String
        var continuation: CheckedContinuation<Ack, any Error>?
        /// An answer that came before anyone waited for it.
        var result: Result<Ack, JamError>?
    }

    /// The session.
    public nonisolated let sessionId: SessionID
    /// The caller.
    public nonisolated let me: UserID
    private let api: JamAPI
    private let transport: any RealtimeTransport
    private let backoff: Backoff
    private var logger: Logger
    private var random: SeededRandom

    /// The session as last heard.
    public private(set) var mirror: SessionMirror
    /// The connection's state.
    public private(set) var phase: ConnectionPhase = .idle
    private var socket: (any RealtimeSocket)?
    private var pending: [String: PendingCommand] = [:]
    private var pendingOrder: [String] = []
    private var subscribers: [Int: AsyncStream<ClientUpdate>.Continuation] = [:]
    private var nextSubscriber = 0
    private var commandCounter = 0
    private var helloInFlight = false
    /// A `hello` without `lastSeq` is on its way (after an event type this client does not know).
    private var wholeStateInFlight = false
    private let clock: any MonotonicClock
    private var pongHandler: (@Sendable (Pong, Double) async -> Void)?
    /// The send time of the ping each new socket starts with, until its pong comes.
    private var attachPing: Double?

    /// Creates a client for `sessionId` as `me`; `api` must carry the member's token.
    public init(
        api: JamAPI, sessionId: SessionID, me: UserID, transport: any RealtimeTransport, backoff: Backoff = Backoff(),
        logger: Logger = Logger(label: "openjam.client"), seed: UInt64? = nil, clock: any MonotonicClock = SystemMonotonicClock()
    ) {
        self.clock = clock
        self.api = api
        self.sessionId = sessionId
        self.me = me
        self.transport = transport
        self.backoff = backoff
        self.logger = logger
        self.logger[metadataKey: "session.id"] = "\(sessionId)"
        self.random = SeededRandom(seed: seed)
        self.mirror = SessionMirror(me: me)
    }

    /// Updates from now on: every frame, the mirror after it, and connection changes.
    public func subscribe() -> AsyncStream<ClientUpdate> {
        let (stream, continuation) = AsyncStream.makeStream(of: ClientUpdate.self, bufferingPolicy: .bufferingNewest(1024))
        let key = nextSubscriber
        nextSubscriber += 1
        continuation.yield(.phase(phase))
        if mirror.view != nil { continuation.yield(.mirror(mirror)) }
        // Closed for good: nothing more will come.
        if case .failed = phase { continuation.finish() } else { subscribers[key] = continuation }
        return stream
    }

    // MARK: Connection

    /// Holds the realtime connection until cancelled; reconnects after drops and stops
    /// (throwing the reason) when the server says the session is gone for this member.
    ///
    /// However it ends, no `send` is left waiting on it: a reason that is for good fails them
    /// with it (the phase is then `.failed`); cancellation fails them as unanswered (the phase
    /// goes back to `.idle`, and a later `run()` carries on with the same mirror).
    public func run() async throws {
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

    private func holdConnection() async throws {
        var attempt = 0
        while !Task.isCancelled {
            attempt += 1
            setPhase(.connecting(attempt: attempt))
            let url = api.realtimeURL(sessionId, lastSeq: mirror.seq)
            var headers: [String: String] = [:]
            if let token = api.token { headers["Authorization"] = "Bearer \(token)" }
            var reason = "connection lost"
            do {
                let close = try await transport.withSocket(url: url, headers: headers) { socket in
                    await self.attached(socket)
                    while let text = try await socket.receive() {
                        await self.received(text)
                    }
                }
                if let failure = Self.permanentFailure(close) {
                    fail(failure)
                    throw failure
                }
                reason = close.reason.map { "closed (\(close.code.map(String.init) ?? "no code")): \($0)" } ?? "closed"
            } catch let error as JamError where error.code != .unavailable {
                detached()
                throw error
            } catch {
                reason = "\(error)"
            }
            let wasSynced = detached()
            // Cancelled: the owner is done with the connection, not a drop to retry.
            try Task.checkCancellation()
            if mirror.ended != nil {
                let failure = JamError(.gone, "the session has ended")
                fail(failure)
                throw failure
            }
            if wasSynced { attempt = 1 }
            let delay = backoff.delayMs(attempt: attempt, using: &random)
            setPhase(.retrying(attempt: attempt, afterMs: delay, reason: reason))
            logger.info("realtime connection dropped; retrying", metadata: ["retry.ms": "\(Int(delay))", "reason": "\(reason)"])
            try await Task.sleep(for: .milliseconds(Int64(delay)))
        }
    }

    /// Close codes that mean "do not come back": 4000 + the HTTP status of the refusal.
    static func permanentFailure(_ close: RealtimeClose) -> JamError? {
        CloseCode.permanentFailure(close.code, reason: close.reason)
    }

    private func attached(_ socket: any RealtimeSocket) async {
        self.socket = socket
        helloInFlight = false
        wholeStateInFlight = false
        // Commands that never got an answer go again with the same ids: the server
        // answers a repeated id without applying it twice.
        for id in pendingOrder {
            guard let command = pending[id], command.result == nil else { continue }
            do {
                try await socket.send(command.frame)
            } catch {
                logger.debug("resend failed; it goes again after the next reconnect", metadata: ["command.id": "\(id)"])
            }
        }
        // A resume with nothing missed brings no frame: the pong says the socket is answered.
        let ping = clock.now()
        attachPing = ping
        do {
            try await socket.send(ClientFrame(.ping(Ping(clientSendTime: ping))).jsonString())
        } catch {
            logger.debug("the socket's first ping failed", metadata: ["error": "\(error)"])
        }
    }

    /// Forgets the socket; true when it had been in sync.
    @discardableResult
    private func detached() -> Bool {
        let wasConnected = phase == .connected
        socket = nil
        return wasConnected
    }

    /// The owner stopped `run()`: commands waiting for an answer get none from this run.
    private func stopped() {
        detached()
        setPhase(.idle)
        let unanswered = JamError(.unavailable, "the connection stopped before the server answered")
        for id in pendingOrder {
            guard var command = pending[id] else { continue }
            if let continuation = command.continuation {
                continuation.resume(throwing: unanswered)
                pending[id] = nil
            } else if command.result == nil {
                // Its `send` is still handing the frame to the socket: it finds this when it waits.
                command.result = .failure(unanswered)
                pending[id] = command
            }
            // An answer that came before its `send` waited stays for it: the command was applied.
        }
        pendingOrder.removeAll { pending[$0] == nil }
    }

    private func fail(_ error: JamError) {
        setPhase(.failed(error))
        for id in pendingOrder {
            if let continuation = pending[id]?.continuation {
                continuation.resume(throwing: error)
                pending[id] = nil
            } else {
                pending[id]?.result = .failure(error)
            }
        }
        pendingOrder.removeAll { pending[$0] == nil }
        for continuation in subscribers.values { continuation.finish() }
        subscribers = [:]
    }

    private func setPhase(_ phase: ConnectionPhase) {
        guard self.phase != phase else { return }
        self.phase = phase
        broadcast(.phase(phase))
    }

    private func broadcast(_ update: ClientUpdate) {
        for (key, continuation) in subscribers {
            if case .terminated = continuation.yield(update) { subscribers[key] = nil }
        }
    }

    // MARK: Frames

    /// Routes every `pong` with its local receive instant (taken as the frame arrives) to `handler`,
    /// typically `ClockSync.record`.
    public func onPong(_ handler: @escaping @Sendable (Pong, Double) async -> Void) {
        pongHandler = handler
    }

    private func received(_ text: String) async {
        let receivedAt = clock.now()
        let envelope: ServerEnvelope
        do {
            envelope = try ServerEnvelope.decode(Data(text.utf8))
        } catch {
            if error.code != .unknownType {
                logger.warning("a server frame did not decode", metadata: ["error": "\(error)"])
            }
            // Either way the frame's change is missing here, and a resume would replay it.
            await unreadable(text)
            return
        }
        switch envelope.event {
        case .pong(let pong):
            answered()
            if pong.clientSendTime == attachPing {
                // The socket's own ping (below): not a clock sample anyone asked for.
                attachPing = nil
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
                // A refusal of a frame sent without an id: a hello among them (too many, say).
                // The resume it asked for is not coming, so the next gap asks again.
                helloInFlight = false
                wholeStateInFlight = false
                logger.info("the server reported an error", metadata: ["error.code": "\(error.code.rawValue)", "error": "\(error.message)"])
            }
            return
        case .stateSync, .memberJoined, .memberLeft, .memberUpdated, .queueItemAdded, .queueItemRemoved, .queueUpdate, .votesUpdate,
            .playPrepare, .playCommit, .pause, .resume, .seek, .stopped, .skipRequests, .sessionUpdated, .sessionEnded, .syncStatus,
            .deviceDelay, .calibration, .calibrationResult, .resync:
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
        case .gap:
            await resume()
        case .duplicate, .stale:
            break
        }
    }

    /// The server answers on this socket (an error is not an answer: a server that refuses and
    /// closes must not reset the back-off). It is open, and whatever it missed is on its way.
    private func answered() {
        if case .connecting = phase { setPhase(.connected) }
    }

    /// Asks for what was missed (or a full `stateSync`).
    private func resume() async {
        await sendHello(lastSeq: mirror.seq)
    }

    /// A frame this build cannot read: a newer server's event type, or a known one in a shape
    /// it cannot decode. One that took a `seq` this mirror lacks changed the session in a way
    /// only the whole state can show: asking to resume after the frame before it would replay
    /// the same frame. One that did not (a passing frame) is dropped.
    private func unreadable(_ text: String) async {
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

    private func sendHello(lastSeq: Int64?) async {
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

    private func settle(_ id: String, _ result: Result<Ack, JamError>) {
        guard var command = pending[id] else { return }
        guard let continuation = command.continuation else {
            command.result = result
            pending[id] = command
            return
        }
        pending[id] = nil
        pendingOrder.removeAll { $0 == id }
        continuation.resume(with: result.mapError { $0 as any Error })
    }

    // MARK: Commands

    /// Sends `command` and waits for the server's answer; while disconnected it waits for
    /// the next connection. A refusal throws the server's typed error.
    @discardableResult
    public func send(_ command: ClientCommand) async throws -> Ack {
        if case .failed(let error) = phase { throw error }
        commandCounter += 1
        let id = "\(me.rawValue.prefix(8))-\(commandCounter)-\(UInt32.random(in: 0...UInt32.max, using: &random))"
        let frame = ClientFrame(command, id: id).jsonString()
        let playing = mirror.view?.nowPlaying?.item.id
        pending[id] = PendingCommand(frame: frame)
        pendingOrder.append(id)
        if let socket {
            do {
                try await socket.send(frame)
            } catch {
                logger.debug("send failed; it goes again after the reconnect", metadata: ["command.id": "\(id)"])
            }
        }
        let ack: Ack = try await withCheckedThrowingContinuation { continuation in
            guard let entry = pending[id] else {
                continuation.resume(throwing: JamError(.unavailable, "the connection closed for good"))
                return
            }
            if let result = entry.result {
                pending[id] = nil
                pendingOrder.removeAll { $0 == id }
                continuation.resume(with: result.mapError { $0 as any Error })
            } else {
                pending[id]?.continuation = continuation
            }
        }
        switch command {
        case .vote(let vote):
            mirror.setMyVote(vote.itemId, vote.value)
            broadcast(.mirror(mirror))
        case .requestSkip:
            if let playing {
                mirror.requestSkipAnswered(for: playing)
                broadcast(.mirror(mirror))
            }
        case .hello, .ping, .addToQueue, .removeFromQueue, .skip, .play, .pause, .resume, .seek, .ready, .syncReport,
            .updateSettings, .promote, .kick, .leave, .setDeviceDelay, .calibrate, .calibrationReport, .resync:
            // The server's events carry everything else the mirror shows.
            break
        }
        return ack
    }

    /// Sends a frame that needs no answer (ping, ready, syncReport); false when not connected.
    @discardableResult
    public func post(_ command: ClientCommand) async -> Bool {
        guard let socket else { return false }
        do {
            try await socket.send(ClientFrame(command).jsonString())
            return true
        } catch {
            return false
        }
    }

    /// Asks the server to drop this socket (tests and "reconnect now" buttons).
    public func dropConnection() async {
        await socket?.close()
    }
}
