import JamCore
import JamProtocol

/// What REST routes and profiles' views ask of a session: reads that show only what is
/// stored, and commands that answer once stored, each waiting behind the session's records.
extension LiveSession {
    // MARK: Reading

    /// The session as `user` sees it, answered once all of it is stored (`readStored`).
    package func view(for user: UserID) async throws(JamError) -> SessionView {
        guard state.member(user) != nil else { throw state.refusal(ofNonMember: user) }
        let view = state.view(for: user)
        try await untilStored()
        return view
    }

    /// What `body` reads from the state and wire, answered once all of it is stored, so a
    /// reader is never shown a change a crash could still take back (for profiles' views).
    package func readStored<T: Sendable>(_ body: @Sendable (SessionState, any SessionWire) -> T) async throws(JamError) -> T {
        let value = body(state, wire)
        try await untilStored()
        return value
    }

    /// Waits until every record made so far is stored; refuses at once while the store is
    /// failing (`waitUntilStored`), and as soon as it fails meanwhile (a read has nothing to
    /// lose by asking again). A replica's state comes from stored records only.
    private func untilStored(refusing refusal: JamError = unstoredRead) async throws(JamError) {
        guard role == .owner, nextLsn - 1 > outbox.storedLsn else { return }
        switch await waitUntilStored(throughOutage: false) {
        case .stored: return
        case .letGo: throw Self.letGo
        case .refused: throw refusal
        }
    }

    static let unstoredRead = JamError(
        .unavailable, "the database is not taking writes; what the session holds now may not be stored, try again")

    static let letGo = JamError(
        .unavailable, "the session moved to another server before this was confirmed; read the session again before repeating a change")

    /// What a socket or a call hears from a session this node let go before it did anything.
    static let letGoUntouched = JamError(.unavailable, "the session moved to another server; nothing was changed, try again")

    static let unconfirmed = JamError(
        .unavailable,
        "the database did not confirm the change: it is applied on this server and may still be stored; read the session before repeating it")

    /// What `body` reads now, answered once everything applied so far is stored, waiting
    /// through an outage rather than refusing: for a route's answer after a change of its own
    /// that others may have followed (a new session's first view).
    package func readAfterOwnChange<T: Sendable>(_ body: @Sendable (SessionState, any SessionWire) -> T) async throws(JamError) -> T {
        let value = body(state, wire)
        switch await waitUntilStored(throughOutage: true) {
        case .stored: return value
        case .letGo, .refused: throw Self.letGo
        }
    }

    /// The current state (for profile views built at the edge).
    package var snapshot: SessionState { state }

    /// Reads the state and wire together with the users who hold a socket to the session on
    /// this node (for a profile's monitoring view).
    package func inspectWithSockets<T: Sendable>(_ body: @Sendable (SessionState, any SessionWire, Set<UserID>) -> T) -> T {
        body(state, wire, Set(connections.values.map(\.user)))
    }

    /// Reads the state together with the session's wire (for a profile's own views).
    package func inspect<T: Sendable>(_ body: @Sendable (SessionState, any SessionWire) -> T) -> T {
        body(state, wire)
    }

    // MARK: Changing

    /// Applies `command` and returns once it is stored and its frames are out.
    @discardableResult
    package func perform(_ command: Command, by user: UserID, budgeted: Bool = true) async throws(JamError) -> Outcome {
        try await perform(command, by: user, budgeted: budgeted) { _, _ in () }.outcome
    }

    /// Applies `command`, reads `body` from the state it leaves, and returns both once the
    /// command is stored: the reading shows nothing applied after it (which may not be stored
    /// yet), and nothing before it that is not stored by then.
    ///
    /// - Parameter budgeted: whether the command draws from `user`'s command budget, as the
    ///   same command on a socket does; a profile whose original server limits its own routes
    ///   differently passes false.
    package func perform<T: Sendable>(
        _ command: Command, by user: UserID, budgeted: Bool = true, reading body: @Sendable (SessionState, any SessionWire) -> T
    ) async throws(JamError) -> (outcome: Outcome, read: T) {
        let performed = try await perform(command, by: user, key: nil, budgeted: budgeted, reading: body)
        return (performed.outcome, performed.read)
    }

    /// Applies `command` as `perform(_:by:budgeted:reading:)` does, unless `user` sent it
    /// before under `key`: then nothing is applied, and the first call's answer (its item, its
    /// score) comes back once that call's change is stored, with `body` read from the state now.
    /// A key is remembered with the session's recent command ids (`AnswerCache.limit`), across
    /// restarts and by every node.
    package func perform<T: Sendable>(
        _ command: Command, by user: UserID, key: IdempotencyKey?, budgeted: Bool = true,
        reading body: @Sendable (SessionState, any SessionWire) -> T
    ) async throws(JamError) -> Performed<T> {
        let replyId = key.map { Self.replyId(for: $0, command) }
        if let replyId {
            // Checked before the budget: a repeat changes nothing, so it costs nothing.
            switch answers.lookup(Self.answerKey(user, replyId)) {
            case .answered(let answer):
                let read = body(state, wire)
                try await untilStored(refusing: Self.unconfirmed)
                return Performed(outcome: outcome(fromAck: String(buffer: WebSocketText.payload(of: answer))), read: read, replayed: true)
            case .keyUsedForAnotherRequest:
                throw Self.keyReused
            case .none:
                break
            }
        }
        if budgeted, let refusal = spend(CommandBudget.Kind.of(command), by: user, on: nil, now: environment.clock.now()) {
            noteRefusal(refusal, by: user, what: command.logName)
            throw refusal
        }
        if role == .replica {
            let outcome = try await forwardAndWait(command, by: user, replyId: replyId)
            return Performed(outcome: outcome, read: body(state, wire), replayed: false)
        }
        let reply = replyId.map { TurnReply(connection: nil, user: user, id: $0, toRestCall: true) }
        let (outcome, _) = try take(.command(command, by: user), cause: .command(command, by: user, connection: nil, relay: nil), reply: reply)
        let read = body(state, wire)
        switch await waitUntilStored(throughOutage: false) {
        case .stored: return Performed(outcome: outcome, read: read, replayed: false)
        case .letGo: throw Self.letGo
        case .refused: throw Self.unconfirmed
        }
    }

    /// The command id an idempotency key stands for. Scoped by the kind of change, so a key
    /// sent again with another kind is a change of its own rather than a replay of the first,
    /// and ending in what was asked (`RequestFingerprint`), so the same key with another
    /// request of that kind is told apart (`AnswerCache.lookup`) and refused.
    static func replyId(for key: IdempotencyKey, _ command: Command) -> String {
        "\(keyPrefix)\(command.logName):\(key.value) \(RequestFingerprint.of(command))"
    }

    static let keyReused = JamError(
        .keyReused, "this \(IdempotencyKey.header) was already used for a different request; use a new key for a new change")

    static let keyPrefix = "key:"

    /// Whether the refusal `code` of a forwarded command is remembered under its answer key
    /// ("user id"): a socket's command id sent again hears the same refusal; a REST call's
    /// idempotency key is tried again, as its refusal applied nothing (and may have been an
    /// outage). An id refused as used for another command keeps that command's answer.
    static func remembersRefusal(_ code: ErrorCode, answerKey: String) -> Bool {
        code != .keyReused && isSocketId(answerKey: answerKey)
    }

    /// Whether `answerKey` ("user id") names a socket's command id rather than a REST call's
    /// idempotency key.
    static func isSocketId(answerKey: String) -> Bool {
        // Read from the right, as a user id may hold spaces: a key's id is its last word, or
        // the word before its fingerprint.
        if AnswerCache.keyedParts(answerKey) != nil { return false }
        return !(answerKey.split(separator: " ").last ?? "").hasPrefix(keyPrefix)
    }

    /// The answer to a socket command whose id answered another command before.
    static let idReused = JamError(.keyReused, "this id was already used for a different command; send a new command with a new id")

    /// Applies `command` and returns the session as `user` sees it right after, once stored.
    package func performViewing(_ command: Command, by user: UserID) async throws(JamError) -> (outcome: Outcome, view: SessionView) {
        let performed = try await performViewing(command, by: user, key: nil)
        return (performed.outcome, performed.read)
    }

    /// Applies `command` once per idempotency key (`perform(_:by:key:budgeted:reading:)`) and
    /// returns the session as `user` sees it right after, once stored.
    package func performViewing(_ command: Command, by user: UserID, key: IdempotencyKey?) async throws(JamError) -> Performed<SessionView> {
        let performed = try await perform(command, by: user, key: key) { state, _ in state.member(user).map { _ in state.view(for: user) } }
        guard let view = performed.read else { throw SessionState.notAMember }
        return Performed(outcome: performed.outcome, read: view, replayed: performed.replayed)
    }

    /// Returns once everything applied so far is stored and sent, or the node let the session
    /// go first, or (unless `throughOutage`) the store refused or hung on it meanwhile.
    func waitUntilStored(throughOutage: Bool) async -> StoreWait {
        // Let go, its records may never be stored here: nothing would resume the wait.
        guard !releasedFlag.load(ordering: .relaxed) else { return .letGo }
        let lsn = nextLsn - 1
        // Records submitted after the pipeline told its sessions of a failure or a hang would
        // not be told again (a hang is told once): the flag it set first says so here.
        if !throughOutage, lsn > outbox.storedLsn, environment.pipeline.isStalled { return .refused }
        let id = nextWaiter
        nextWaiter += 1
        return await withCheckedContinuation { continuation in
            waiters[id] = StoreWaiter(continuation: continuation, lsn: lsn, throughOutage: throughOutage)
            execute(outbox.enqueue(.waiter(id), after: lsn, now: environment.clock.now()))
        }
    }

    /// The node let the session go: whoever waits for its store hears so now (what it applied
    /// may never be stored by this node).
    func releaseWaiters() {
        let waiting = waiters
        waiters = [:]
        for waiter in waiting.values { waiter.continuation.resume(returning: .letGo) }
    }

    /// The store refused or hung on the session's writes up to `lsn`: requests waiting on them
    /// hear so now rather than wait for it with no end; the writes stay queued and are stored
    /// once it answers. Those that wait through an outage (a new session's first answer) go on
    /// waiting, and so do those waiting on later records (the news may come after those of a
    /// commit that stored `lsn` after all).
    func refuseWaiters(through lsn: Int64) {
        for (id, waiter) in waiters where !waiter.throughOutage && waiter.lsn <= lsn {
            waiters[id] = nil
            waiter.continuation.resume(returning: .refused)
        }
    }
}

/// What a REST call's change came to (`LiveSession.perform(_:by:key:budgeted:reading:)`).
package struct Performed<T: Sendable>: Sendable {
    /// What the command did; for a repeated key, the item and score the first call's answer named.
    package let outcome: Outcome
    /// What the call read from the state after it.
    package let read: T
    /// Whether an earlier call with the same idempotency key answered it, and nothing was applied.
    package let replayed: Bool
}

/// How a wait for the session's store ended.
enum StoreWait: Sendable {
    /// Everything applied before the wait is stored.
    case stored
    /// The node let the session go first.
    case letGo
    /// The store refused or hung; what was applied stays queued.
    case refused
}

/// A request waiting for the session's store (`LiveSession.waitUntilStored`).
struct StoreWaiter {
    let continuation: CheckedContinuation<StoreWait, Never>
    /// The last record it waits for.
    let lsn: Int64
    /// Waits through a refusing store (nothing but being let go ends it early).
    let throughOutage: Bool
}
