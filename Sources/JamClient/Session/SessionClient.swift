import Foundation
import JamProtocol
import Logging
import Synchronization

/// One member's live connection to a session: keeps the socket open (reconnecting with
/// capped, jittered back-off), mirrors the session from its events, resumes from the
/// last `seq` after a drop, and sends commands with ids so a retry after a reconnect
/// is answered, not applied twice.
///
/// The connection loop is here; one `run()` at a time is in `SessionClient+Runs`, routing
/// the server's frames in `SessionClient+Frames`, sending commands in `SessionClient+Commands`.
public actor SessionClient {
    /// A member's own choice that a command's answer confirms.
    enum AnswerShows {
        case vote(ItemID, Int)
        case skipRequest(for: ItemID, asking: Bool)
    }

    struct PendingCommand {
        let frame: String
        /// When it was queued to go (local ms): a command waiting long makes the watch probe.
        let sentAt: Double
        /// A `leave`: once it is answered, the server closes this member's sockets for good.
        var leaves = false
        /// What its answer tells the mirror (the server broadcasts scores and counts, not whose).
        var answerShows: AnswerShows?
        var continuation: CheckedContinuation<Ack, any Error>?
        /// An answer that came before anyone waited for it.
        var result: Result<Ack, JamError>?
        /// Its caller stopped waiting: it is not sent again, but an answer that still comes
        /// (the frame may be out already) shows in the mirror, and a `leave`'s ends the run.
        var abandoned = false
        /// The latest socket (`socketGeneration`) its frame went out on.
        var wentOutOn: Int?
    }

    /// The session.
    public nonisolated let sessionId: SessionID
    /// The caller.
    public nonisolated let me: UserID
    /// The REST client with the member's token, which this client refreshes (`SessionClient+Token`).
    public internal(set) var api: JamAPI
    let transport: any RealtimeTransport
    let backoff: Backoff
    let connectionWatch: ConnectionWatch
    var logger: Logger
    var random: SeededRandom

    /// The session as last heard.
    public internal(set) var mirror: SessionMirror
    /// The connection's state.
    public internal(set) var phase: ConnectionPhase = .idle
    var socket: (any RealtimeSocket)?
    var pending: [String: PendingCommand] = [:]
    var pendingOrder: [String] = []
    var subscribers: [Int: AsyncStream<ClientUpdate>.Continuation] = [:]
    var nextSubscriber = 0
    var commandCounter = 0
    var helloInFlight = false
    /// The server's last refusal without an id on this socket: a refused connection's frame
    /// before its close names the failure more closely than the close code.
    var lastRefusal: JamError?
    /// A `hello` without `lastSeq` is on its way (after an event type this client does not know).
    var wholeStateInFlight = false
    let clock: any MonotonicClock
    /// Paces the watch and the waits between reconnects, on `clock`'s time.
    let sleeper: any Sleeper
    var pongHandler: (@Sendable (Pong, Double) async -> Void)?
    /// The send times of this client's own pings (each new socket's first, and the watch's
    /// probes) until their pongs come: they are not clock samples anyone asked for.
    var ownPings: Set<Double> = []
    /// When the current socket opened, and when the server was last heard on it (local ms).
    var openedAt: Double = 0
    var lastHeardAt: Double = 0
    /// Pings sent on the current socket that have no pong yet: their `clientSendTime`, and
    /// when they went (local ms).
    var unansweredPings: [Double: Double] = [:]
    /// Why the watch dropped the current socket, once it did.
    var silentDrop: String?
    /// Counts sockets, so a send that finishes after a reconnect knows it went on an older one.
    var socketGeneration = 0
    /// This member's `leave` was answered: the socket the server closes next is not a drop.
    var hasLeft = false
    /// A `run()` holds (or is closing) the connection.
    var isRunning = false
    /// Later `run()`s waiting for the one holding the connection to end, by ticket; behind a
    /// lock, so a waiter's cancellation (which runs outside the actor) can let it go.
    nonisolated let waitingRuns = Mutex<[Int: CheckedContinuation<Void, Never>]>([:])
    var nextRunTicket = 0

    /// Creates a client for `sessionId` as `me`; `api` must carry the member's token. `clock` and
    /// `sleeper` are its time: the watch and the waits between reconnects run on them.
    public init(
        api: JamAPI, sessionId: SessionID, me: UserID, transport: any RealtimeTransport, backoff: Backoff = Backoff(),
        watch: ConnectionWatch = ConnectionWatch(), logger: Logger = Logger(label: "openjam.client"), seed: UInt64? = nil,
        clock: any MonotonicClock = SystemMonotonicClock(), sleeper: any Sleeper = TaskSleeper()
    ) {
        self.clock = clock
        self.sleeper = sleeper
        self.api = api
        self.sessionId = sessionId
        self.me = me
        self.transport = transport
        self.backoff = backoff
        self.connectionWatch = watch
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

    func holdConnection() async throws {
        var attempt = 0
        while !Task.isCancelled {
            attempt += 1
            setPhase(.connecting(attempt: attempt))
            // After a long time away the token may be near its end: a fresh one first.
            await refreshTokenIfDue()
            let url = api.realtimeURL(sessionId, lastSeq: mirror.seq)
            var headers: [String: String] = [:]
            if let token = api.token { headers["Authorization"] = "Bearer \(token)" }
            var reason = "connection lost"
            do {
                let keepsToken = api.token != nil
                let close = try await transport.withSocket(url: url, headers: headers) { socket in
                    await self.attached(socket)
                    // Whichever ends first ends the socket: the server closing it, or the
                    // watch finding it silent (then abandoned: a close would wait for an answer
                    // that will not come).
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask {
                            while let text = try await socket.receive() {
                                try await self.received(text)
                            }
                        }
                        if keepsToken {
                            group.addTask {
                                // Never ends by itself: it refreshes the token while the socket
                                // is open, so the next reconnect still signs in.
                                try await self.keepTokenFresh()
                            }
                        }
                        // The watch's pings go from a task of their own: a send can wait on a
                        // dead path's full buffer, and the watch must go on looking meanwhile.
                        let (probes, probe) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
                        group.addTask {
                            for await _ in probes { await self.probe() }
                        }
                        group.addTask {
                            // Some transports' receive ignores cancellation (URLSession's): the
                            // close is what ends it, also when the caller cancelled the run.
                            do {
                                try await self.untilSilent(probe: { probe.yield() })
                            } catch {
                                await socket.close()
                                throw error
                            }
                            await socket.abandon()
                        }
                        try await group.next()
                        group.cancelAll()
                    }
                }
                if let failure = CloseCode.permanentFailure(close.code, reason: close.reason, refusal: lastRefusal) {
                    if leftWithoutAnAnswer(refused: failure) {
                        detached()
                        return
                    }
                    fail(failure)
                    throw failure
                }
                reason = close.reason.map { "closed (\(close.code.map(String.init) ?? "no code")): \($0)" } ?? "closed"
                if let silentDrop { reason = silentDrop }
            } catch let error as JamError where error.code != .unavailable {
                detached()
                throw error
            } catch {
                reason = silentDrop ?? "\(error)"
            }
            silentDrop = nil
            let wasSynced = detached()
            // Cancelled: the owner is done with the connection, not a drop to retry.
            try Task.checkCancellation()
            // Left: the server closed the socket because this member asked it to. Coming back
            // would only be refused as not a member.
            if hasLeft { return }
            if mirror.ended != nil {
                let failure = JamError(.gone, "the session has ended")
                fail(failure)
                throw failure
            }
            if wasSynced { attempt = 1 }
            let delay = backoff.delayMs(attempt: attempt, using: &random)
            setPhase(.retrying(attempt: attempt, afterMs: delay, reason: reason))
            logger.info("realtime connection dropped; retrying", metadata: ["retry.ms": "\(Int(delay))", "reason": "\(reason)"])
            try await sleeper.sleep(ms: delay)
        }
    }

    func attached(_ socket: any RealtimeSocket) async {
        self.socket = socket
        helloInFlight = false
        lastRefusal = nil
        wholeStateInFlight = false
        socketGeneration += 1
        openedAt = clock.now()
        lastHeardAt = openedAt
        unansweredPings.removeAll()
        silentDrop = nil
        // Commands that never got an answer go again with the same ids: the server
        // answers a repeated id without applying it twice.
        for id in pendingOrder {
            guard let command = pending[id], command.result == nil else { continue }
            // Its answer, if any, went with the old socket; nobody waits for it on this one. A
            // `leave` that went out stays until this socket says whether it was applied: a
            // refusal as not a member then ends the run as left (`leftWithoutAnAnswer`), an
            // answer as a member drops it (`answered`).
            if command.abandoned {
                if !(command.leaves && command.wentOutOn != nil) { pending[id] = nil }
                continue
            }
            do {
                try await socket.send(command.frame)
                pending[id]?.wentOutOn = socketGeneration
            } catch {
                logger.debug("resend failed; it goes again after the next reconnect", metadata: ["command.id": "\(id)"])
            }
        }
        pendingOrder.removeAll { pending[$0] == nil }
        // A resume with nothing missed brings no frame: the pong says the socket is answered.
        let ping = clock.now()
        ownPings = [ping]
        // Noted before it goes: its pong can come while the send is still being awaited.
        unansweredPings[ping] = ping
        do {
            try await socket.send(ClientFrame(.ping(Ping(clientSendTime: ping))).jsonString())
        } catch {
            unansweredPings.removeValue(forKey: ping)
            ownPings.remove(ping)
            logger.debug("the socket's first ping failed", metadata: ["error": "\(error)"])
        }
    }

    /// Looks at the socket every `ConnectionWatch.checkEveryMs` and returns once the watch
    /// takes it for dead, with the reason kept for the retry; asks `probe` for a ping when
    /// the watch wants to hear from the server.
    func untilSilent(probe: @Sendable () -> Void) async throws {
        let watch = connectionWatch
        while true {
            try await sleeper.sleep(ms: watch.checkEveryMs)
            let now = clock.now()
            let oldestPing = unansweredPings.values.min().map { now - $0 }
            let answered = phase == .connected
            guard watch.isDead(answered: answered, sinceOpenedMs: now - openedAt, oldestUnansweredPingMs: oldestPing, sinceHeardMs: now - lastHeardAt) else {
                let oldestCommand = pending.values.lazy.filter { $0.result == nil }.map(\.sentAt).min().map { now - $0 }
                if watch.shouldProbe(answered: answered, oldestUnansweredPingMs: oldestPing, oldestWaitingCommandMs: oldestCommand, sinceHeardMs: now - lastHeardAt) {
                    probe()
                }
                continue
            }
            let silence = Int(now - lastHeardAt)
            silentDrop = phase == .connected
                ? "the server stopped answering (nothing heard for \(silence) ms)"
                : "the server did not answer on the new connection (nothing heard for \(silence) ms)"
            logger.info("dropping a connection the server no longer answers on", metadata: ["silence.ms": "\(silence)"])
            return
        }
    }

    /// Pings the server on a socket the watch wants to hear from; the watch then judges it
    /// by its pong or its silence. Skipped when a ping already waits (asked twice before
    /// the first went).
    func probe() async {
        guard unansweredPings.isEmpty else { return }
        let ping = clock.now()
        ownPings.insert(ping)
        if await !post(.ping(Ping(clientSendTime: ping))) { ownPings.remove(ping) }
    }

    /// Whether a refusal as not a member answers this member's `leave`: sent, and its answer
    /// lost with the socket that dropped, it was applied, and the member is out as they asked.
    /// The leave then succeeds.
    func leftWithoutAnAnswer(refused failure: JamError) -> Bool {
        let leaves = pendingOrder.filter { pending[$0]?.leaves == true && pending[$0]?.result == nil }
        guard failure.code == .notMember, !leaves.isEmpty else { return false }
        // Every one: a leave given up on and one tapped again while away both asked for this.
        for id in leaves { settle(id, .success(Ack(id: id))) }
        return true
    }

    /// Forgets the socket; true when it had been in sync.
    @discardableResult
    func detached() -> Bool {
        let wasConnected = phase == .connected
        socket = nil
        return wasConnected
    }

    /// The owner stopped `run()`: commands waiting for an answer get none from this run.
    func stopped() {
        detached()
        setPhase(.idle)
        let unanswered = JamError(.unavailable, "the connection stopped before the server answered")
        for id in pendingOrder {
            guard var command = pending[id] else { continue }
            if let continuation = command.continuation {
                continuation.resume(throwing: unanswered)
                pending[id] = nil
            } else if command.abandoned {
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

    func fail(_ error: JamError) {
        setPhase(.failed(error))
        for id in pendingOrder {
            if let continuation = pending[id]?.continuation {
                continuation.resume(throwing: error)
                pending[id] = nil
            } else if pending[id]?.abandoned == true {
                pending[id] = nil
            } else if pending[id]?.result == nil {
                // An answer that came before its `send` waited stays for it: the command was applied.
                pending[id]?.result = .failure(error)
            }
        }
        pendingOrder.removeAll { pending[$0] == nil }
        for continuation in subscribers.values { continuation.finish() }
        subscribers = [:]
    }

    func setPhase(_ phase: ConnectionPhase) {
        guard self.phase != phase else { return }
        self.phase = phase
        broadcast(.phase(phase))
    }

    func broadcast(_ update: ClientUpdate) {
        for (key, continuation) in subscribers {
            if case .terminated = continuation.yield(update) { subscribers[key] = nil }
        }
    }
}
