import Foundation
import JamProtocol
import Logging
import NIOCore
import NIOPosix
import PostgresNIO

/// Commands on their way to a session's owner, answers on their way back, and the inbox the
/// owner reads.
extension ClusterNode {
    /// Queues `command` for its session's owner; `failed` is called when it cannot be stored.
    func forward(_ command: ForwardedCommand, failed: @escaping @Sendable (JamError) -> Void) {
        outgoing.withLock { $0.commands.append((command, failed)) }
        wakeForwarder.yield()
    }

    /// Returns once every command forwarded before the call is stored in the inbox or has
    /// failed (at most the forwarder's time limit): a node taking a session over applies its
    /// own earlier forwards before anything its sockets send next.
    func forwardsSent() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let queued = outgoing.withLock { outgoing -> Bool in
                guard !outgoing.stopped else { return false }
                outgoing.waitingForSent.append(continuation)
                return true
            }
            if queued { wakeForwarder.yield() } else { continuation.resume() }
        }
    }

    /// Queues an answer for the node a forwarded command came from.
    func reply(_ reply: ForwardReply) {
        outgoing.withLock { $0.replies.append(reply) }
        wakeForwarder.yield()
    }

    /// The commands waiting for `session`, oldest first.
    func inbox(_ session: SessionID) async throws -> [ForwardedCommand] {
        try await inbox([session])[session] ?? []
    }

    /// The commands waiting for each of `sessions`, oldest first (one query for all).
    func inbox(_ sessions: [SessionID]) async throws -> [SessionID: [ForwardedCommand]] {
        try await store.closingOnCancel { connection in
            let rows = try await connection.send(
                """
                SELECT id, session_id, origin, connection, reply_id, input FROM session_inbox
                WHERE session_id = ANY(\(sessions.map(\.rawValue))) ORDER BY id
                """, logger: self.logger)
            var commands: [SessionID: [ForwardedCommand]] = [:]
            var unreadable: [Int64] = []
            for try await (id, session, origin, connection, replyId, input) in rows.decode((Int64, String, String, Int64?, String?, ByteBuffer).self) {
                do {
                    commands[JamID(session), default: []].append(
                        try ForwardedCommand.decode(
                            inboxId: id, session: JamID(session), origin: origin, connection: connection.map { Int($0) }, replyId: replyId,
                            input: Array(buffer: input)))
                } catch {
                    // Written by a node of another version, say: it can never apply, so it must not block the rest.
                    self.logger.error("a forwarded command does not read; dropping it", metadata: ["inbox.id": "\(id)", "error": .loggable(error)])
                    unreadable.append(id)
                }
            }
            if !unreadable.isEmpty {
                try await connection.send("DELETE FROM session_inbox WHERE id = ANY(\(unreadable))", logger: self.logger)
            }
            return commands
        }
    }

    /// Writes queued commands and replies, a batch at a time, until shutdown.
    func forwardLoop() async {
        for await _ in forwarderWakes {
            await sendOutgoing()
        }
        await sendOutgoing()
        let waiting = outgoing.withLock { outgoing in
            outgoing.stopped = true
            defer { outgoing.waitingForSent = [] }
            return outgoing.waitingForSent
        }
        for waiter in waiting { waiter.resume() }
    }

    private func sendOutgoing() async {
        let (commands, replies, waiting) = outgoing.withLock { outgoing in
            defer { (outgoing.commands, outgoing.replies, outgoing.waitingForSent) = ([], [], []) }
            return (outgoing.commands, outgoing.replies, outgoing.waitingForSent)
        }
        if !commands.isEmpty {
            do {
                let rows = commands.map(\.0)
                let now = Int64(Date().timeIntervalSince1970 * 1000)
                // One statement: the rows, and notifications naming their sessions (as many as
                // PostgreSQL's 8,000-byte payload limit needs), delivered when they are
                // committed. In a transaction of its own making: a statement's implicit commit
                // comes after its answer, so an error there (a full notification queue, a
                // connection lost meanwhile) would reach nobody.
                let sent: Void? = try await Self.within(leaseCheck.limit) { [store, logger] in
                    try await store.closingOnCancel { connection in
                        try await Self.inOwnTransaction(connection, logger: logger) { connection in
                            try await connection.send(
                    """
                    WITH added AS (
                        INSERT INTO session_inbox (session_id, origin, connection, reply_id, input, created_at)
                        SELECT session_id, origin, CASE WHEN connection >= 0 THEN connection END, NULLIF(reply_id, ''), input, \(now)
                        FROM unnest(\(rows.map(\.session.rawValue)), \(rows.map(\.origin)), \(rows.map { Int64($0.connection ?? -1) }),
                            \(rows.map { $0.replyId ?? "" }), \(rows.map { ByteBuffer(bytes: $0.encodedInput) }))
                            AS v(session_id, origin, connection, reply_id, input)
                        RETURNING session_id),
                    named AS (SELECT DISTINCT session_id FROM added),
                    cut AS (
                        SELECT session_id, sum(octet_length(session_id) + 1) OVER (ORDER BY session_id) / \(PostgresSessionStore.notificationCut) AS part
                        FROM named)
                    SELECT pg_notify(\(Channel.inbox), string_agg(session_id, E'\\n')) FROM cut GROUP BY part
                    """, logger: logger)
                        }
                    }
                }
                if sent == nil {
                    // Sent, and not answered: the database may still have stored them.
                    logger.warning("the database did not answer forwarded commands in time", metadata: ["commands": "\(commands.count)"])
                    let unconfirmed = JamError(
                        .unavailable, "the database did not answer in time; the command may still be applied, read the session before repeating it")
                    for (_, failed) in commands { failed(unconfirmed) }
                }
            } catch where Self.mayHaveCommitted(error) {
                logger.warning("forwarded commands' commit went unanswered", metadata: ["error": .loggable(error), "commands": "\(commands.count)"])
                let unconfirmed = JamError(
                    .unavailable, "the connection to the database broke; the command may still be applied, read the session before repeating it")
                for (_, failed) in commands { failed(unconfirmed) }
            } catch {
                logger.warning("forwarding commands to their owner failed", metadata: ["error": .loggable(error), "commands": "\(commands.count)"])
                let refusal = JamError(.unavailable, "the database did not store it; the command was not applied, try again")
                for (_, failed) in commands { failed(refusal) }
            }
        }
        // Every command queued before them is stored or failed now.
        for waiter in waiting { waiter.resume() }
        if !replies.isEmpty {
            do {
                let payloads = try replies.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
                let sent: Void? = try await Self.within(leaseCheck.limit) { [store, logger] in
                    try await store.closingOnCancel { connection in
                        // As above: the notifications' errors come with the COMMIT.
                        try await Self.inOwnTransaction(connection, logger: logger) { connection in
                            try await connection.send("SELECT pg_notify(\(Channel.reply), p) FROM unnest(\(payloads)) AS t(p)", logger: logger)
                        }
                    }
                }
                if sent == nil { logger.warning("the database did not answer forwarded commands' answers in time", metadata: ["replies": "\(replies.count)"]) }
            } catch {
                // The member's client retries its command after reconnecting; the answer cache keeps it once.
                logger.warning("answering forwarded commands failed", metadata: ["error": .loggable(error), "replies": "\(replies.count)"])
            }
        }
    }
}

/// How a transaction of `ClusterNode.inOwnTransaction` failed.
enum OwnTransactionError: Error {
    /// Before `COMMIT` was sent: nothing of it is stored.
    case beforeCommit(any Error)
    /// Its `COMMIT` failed.
    case commit(any Error)
}

extension ClusterNode {
    /// Runs `body` in a transaction of its own making: a statement's implicit commit comes after
    /// its answer, so an error there (a full notification queue, a connection lost meanwhile)
    /// would reach nobody, where `COMMIT`'s own answer carries it. A failure closes the
    /// connection rather than send `ROLLBACK`: the database rolls back what it was doing with
    /// it, and a statement sent on a connection that broke may never be answered.
    static func inOwnTransaction(
        _ connection: PostgresConnection, logger: Logger, _ body: (PostgresConnection) async throws -> Void
    ) async throws {
        do {
            try await connection.send("BEGIN", logger: logger)
            try await body(connection)
        } catch {
            let _: EventLoopFuture<Void> = connection.close()
            throw OwnTransactionError.beforeCommit(error)
        }
        do {
            try await connection.send("COMMIT", logger: logger)
        } catch {
            let _: EventLoopFuture<Void> = connection.close()
            throw OwnTransactionError.commit(error)
        }
    }

    /// Whether a transaction that failed with `error` may still have been committed: only when
    /// its `COMMIT` was sent and not answered (the connection broke, was closed for a time
    /// limit, or the server ended it with `FATAL`, which may come after the commit). What failed
    /// before `COMMIT` was rolled back, and so was a `COMMIT` the database answered with `ERROR`.
    static func mayHaveCommitted(_ error: any Error) -> Bool {
        guard case .commit(let failure)? = error as? OwnTransactionError else { return false }
        // Never sent: the connection had closed before it.
        if failure is ConnectionClosed { return false }
        if let refusal = failure as? PSQLError, refusal.code == .server, refusal.serverInfo?[.severity] == "ERROR" { return false }
        return true
    }
}
