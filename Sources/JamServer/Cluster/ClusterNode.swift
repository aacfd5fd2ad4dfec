import Foundation
import JamProtocol
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// What the node tells the sessions it runs (the registry).
protocol ClusterEvents: AnyObject, Sendable {
    /// These sessions' logs now reach these record numbers (another node committed them).
    func logMoved(_ positions: [(SessionID, Int64)]) async
    /// Commands for these sessions wait in the inbox.
    func inboxFilled(_ sessions: [SessionID]) async
    /// The owner answered a command this node forwarded.
    func replied(_ reply: ForwardReply) async
    /// Time to try to take over sessions whose owner may be gone.
    func pollLeases() async
    /// The connection holding this node's leases broke: it owns nothing any more.
    func leasesLost() async
    /// Notifications may have been missed (a reconnect): look at the log and inbox again.
    func resynchronize() async
}

/// One `jam serve` of several sharing a PostgreSQL database.
///
/// Each session has one owner node at a time, the one holding its advisory lock on this
/// node's lease connection: only the owner applies commands and runs the session's timers,
/// so a session's commands have one order and its auto-advance happens once. Other nodes
/// with members in the session follow its log (told by `NOTIFY jam_log`, reading the records)
/// and forward their members' commands through the `session_inbox` table (`NOTIFY
/// jam_inbox`); the owner applies a forwarded command and deletes its row in one transaction.
/// When a node dies PostgreSQL drops its connection and with it its locks, and a node
/// following the session takes it over within `leasePoll` (docs/SEVERAL_NODES.md).
public final class ClusterNode: Service, Sendable {
    /// The channels nodes notify on.
    enum Channel {
        static let log = PostgresSessionStore.logChannel
        static let inbox = "jam_inbox"
        static let reply = "jam_reply"
    }

    /// This node's name in the inbox and in replies.
    public let nodeID: String
    let store: PostgresSessionStore
    private let logger: Logger
    /// How often nodes try to take over sessions they follow.
    let leasePoll: Duration
    private let lease = Mutex<PostgresConnection?>(nil)
    /// The sessions whose leases this node holds on `lease`.
    private let held = Mutex<Set<SessionID>>([])
    private let events = Mutex<(any ClusterEvents)?>(nil)
    private let outgoing = Mutex(Outgoing())
    private let wakeForwarder: AsyncStream<Void>.Continuation
    private let forwarderWakes: AsyncStream<Void>

    private struct Outgoing {
        var commands: [(ForwardedCommand, @Sendable (JamError) -> Void)] = []
        var replies: [ForwardReply] = []
        var unlocks: [SessionID] = []
    }

    /// Creates the node around the shared store.
    public init(store: PostgresSessionStore, logger: Logger, leasePoll: Duration = .milliseconds(500)) {
        nodeID = UUID().uuidString.lowercased()
        self.store = store
        self.logger = logger
        self.leasePoll = leasePoll
        (forwarderWakes, wakeForwarder) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    func setEvents(_ handler: any ClusterEvents) { events.withLock { $0 = handler } }

    /// Whether the node holds its lease connection: without it the database is unreachable
    /// and the node owns nothing, so requests are refused at once rather than left waiting.
    var isConnected: Bool { lease.withLock { $0 != nil } }

    /// Fails with `unavailable` when the database does not answer within `limit` (a pool
    /// waiting for a connection to a database that is down would wait for ever).
    func withDatabase<T: Sendable>(limit: Duration = .seconds(3), _ body: @escaping @Sendable () async throws -> T) async throws(JamError) -> T {
        guard isConnected else { throw JamError(.unavailable, "the database is unreachable; try again") }
        do {
            return try await withThrowingTaskGroup(of: T?.self) { group in
                group.addTask { try await body() }
                group.addTask {
                    try await Task.sleep(for: limit)
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let value = first else {
                    throw JamError(.unavailable, "the database did not answer in time; try again")
                }
                return value
            }
        } catch let error as JamError {
            throw error
        } catch {
            logger.warning("a database read failed", metadata: ["error": "\(error)"])
            throw JamError(.unavailable, "the database is unreachable; try again")
        }
    }
    private var handler: (any ClusterEvents)? { events.withLock { $0 } }

    // MARK: Leases

    /// Takes the leases of those of `ids` no node holds; returns the ones this node holds now.
    ///
    /// A lease is taken once (PostgreSQL counts a session-level advisory lock taken twice as
    /// two), so giving it up once frees it.
    func tryLock(_ ids: [SessionID]) async -> Set<SessionID> {
        guard !ids.isEmpty, let connection = lease.withLock({ $0 }) else { return [] }
        let already = held.withLock { held in Set(ids.filter { held.contains($0) }) }
        let wanted = ids.filter { !already.contains($0) }
        guard !wanted.isEmpty else { return already }
        do {
            let rows = try await connection.query(
                "SELECT id FROM unnest(\(wanted.map(\.rawValue))) AS t(id) WHERE pg_try_advisory_lock(hashtextextended(id, 0))", logger: logger)
            var taken = Set<SessionID>()
            for try await id in rows.decode(String.self) { taken.insert(JamID(id)) }
            held.withLock { $0.formUnion(taken) }
            return already.union(taken)
        } catch {
            logger.warning("taking session leases failed", metadata: ["error": "\(error)"])
            return already
        }
    }

    /// Gives up the lease of `id` (its session ended): each lease takes a slot of
    /// PostgreSQL's lock table for as long as it is held.
    func release(_ id: SessionID) {
        guard held.withLock({ $0.remove(id) }) != nil else { return }
        outgoing.withLock { $0.unlocks.append(id) }
        wakeForwarder.yield()
    }

    // MARK: Forwarding

    /// Queues `command` for its session's owner; `failed` is called when it cannot be stored.
    func forward(_ command: ForwardedCommand, failed: @escaping @Sendable (JamError) -> Void) {
        outgoing.withLock { $0.commands.append((command, failed)) }
        wakeForwarder.yield()
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
        let rows = try await store.client.query(
            """
            SELECT id, session_id, origin, connection, reply_id, input FROM session_inbox
            WHERE session_id = ANY(\(sessions.map(\.rawValue))) ORDER BY id
            """, logger: logger)
        var commands: [SessionID: [ForwardedCommand]] = [:]
        for try await (id, session, origin, connection, replyId, input) in rows.decode((Int64, String, String, Int64?, String?, ByteBuffer).self) {
            do {
                commands[JamID(session), default: []].append(
                    try ForwardedCommand.decode(
                        inboxId: id, session: JamID(session), origin: origin, connection: connection.map { Int($0) }, replyId: replyId,
                        input: Array(buffer: input)))
            } catch {
                // Written by a node of another version, say: it can never apply, so it must not block the rest.
                logger.error("a forwarded command does not read; dropping it", metadata: ["inbox.id": "\(id)", "error": "\(error)"])
                try await store.client.query("DELETE FROM session_inbox WHERE id = \(id)", logger: logger)
            }
        }
        return commands
    }

    /// Writes queued commands and replies, a batch at a time, until shutdown.
    private func forwardLoop() async {
        for await _ in forwarderWakes {
            await sendOutgoing()
        }
        await sendOutgoing()
    }

    private func sendOutgoing() async {
        let (commands, replies, unlocks) = outgoing.withLock { outgoing in
            defer { outgoing = Outgoing() }
            return (outgoing.commands, outgoing.replies, outgoing.unlocks)
        }
        if !unlocks.isEmpty, let connection = lease.withLock({ $0 }) {
            do {
                try await connection.query(
                    "SELECT pg_advisory_unlock(hashtextextended(id, 0)) FROM unnest(\(unlocks.map(\.rawValue))) AS t(id)", logger: logger)
            } catch {
                // The connection is going: its locks go with it.
                logger.debug("giving up session leases failed", metadata: ["error": "\(error)"])
            }
        }
        if !commands.isEmpty {
            do {
                let rows = commands.map(\.0)
                let now = Int64(Date().timeIntervalSince1970 * 1000)
                // One statement (its own transaction): the rows, and one notification naming
                // their sessions, delivered when they are committed.
                try await store.client.query(
                    """
                    WITH added AS (
                        INSERT INTO session_inbox (session_id, origin, connection, reply_id, input, created_at)
                        SELECT session_id, origin, CASE WHEN connection >= 0 THEN connection END, NULLIF(reply_id, ''), input, \(now)
                        FROM unnest(\(rows.map(\.session.rawValue)), \(rows.map(\.origin)), \(rows.map { Int64($0.connection ?? -1) }),
                            \(rows.map { $0.replyId ?? "" }), \(rows.map { ByteBuffer(bytes: $0.encodedInput) }))
                            AS v(session_id, origin, connection, reply_id, input)
                        RETURNING session_id)
                    SELECT pg_notify(\(Channel.inbox), string_agg(DISTINCT session_id, E'\\n')) FROM added
                    """, logger: logger)
            } catch {
                logger.warning("forwarding commands to their owner failed", metadata: ["error": "\(error)", "commands": "\(commands.count)"])
                let refusal = JamError(.unavailable, "the database is unreachable; the command was not applied, try again")
                for (_, failed) in commands { failed(refusal) }
            }
        }
        if !replies.isEmpty {
            do {
                let payloads = try replies.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
                try await store.client.query("SELECT pg_notify(\(Channel.reply), p) FROM unnest(\(payloads)) AS t(p)", logger: logger)
            } catch {
                // The member's client retries its command after reconnecting; the answer cache keeps it once.
                logger.warning("answering forwarded commands failed", metadata: ["error": "\(error)", "replies": "\(replies.count)"])
            }
        }
    }

    // MARK: The lease connection

    public func run() async throws {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.forwardLoop() }
            group.addTask { await self.leaseLoop() }
            group.addTask { await self.pollLoop() }
            await withGracefulShutdownHandler {
                await group.next()
            } onGracefulShutdown: {
                self.wakeForwarder.finish()
            }
            group.cancelAll()
            // A connection's close is what ends its listeners (waiting on it ignores cancellation).
            await self.closeLease()
        }
    }

    private func pollLoop() async {
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: leasePoll)
            } catch {
                return
            }
            await handler?.pollLeases()
        }
    }

    /// Holds the lease connection and listens on it; reconnects (and says the leases are lost)
    /// when it breaks.
    private func leaseLoop() async {
        var attempt = 0
        while !Task.isCancelled {
            do {
                let connection = try await PostgresConnection.connect(
                    on: MultiThreadedEventLoopGroup.singleton.next(), configuration: store.location.connectionConfiguration(), id: 0,
                    logger: logger
                ).get()
                lease.withLock { $0 = connection }
                if attempt > 0 { logger.notice("the database is back; this node takes sessions again") }
                attempt = 0
                await handler?.resynchronize()
                try await listen(on: connection)
            } catch {
                if Task.isCancelled { return }
                if attempt == 0 { logger.error("lost the database connection holding this node's leases", metadata: ["error": "\(error)"]) }
            }
            let held = lease.withLock { connection -> PostgresConnection? in
                defer { connection = nil }
                return connection
            }
            if let held {
                _ = try? await held.close()
                self.held.withLock { $0.removeAll() }
                await handler?.leasesLost()
            }
            attempt += 1
            do {
                try await Task.sleep(for: .milliseconds(min(2_000, 100 * attempt)))
            } catch {
                return
            }
        }
    }

    /// Listens on the three channels until the connection breaks.
    private func listen(on connection: PostgresConnection) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await connection.listen(on: Channel.log) { notifications in
                    for try await notification in notifications { await self.logNotified(notification.payload) }
                }
            }
            group.addTask {
                try await connection.listen(on: Channel.inbox) { notifications in
                    for try await notification in notifications {
                        await self.handler?.inboxFilled(notification.payload.split(separator: "\n").map { JamID(String($0)) })
                    }
                }
            }
            group.addTask {
                try await connection.listen(on: Channel.reply) { notifications in
                    for try await notification in notifications { await self.replyNotified(notification.payload) }
                }
            }
            group.addTask {
                // The listeners see nothing of a connection that dies quietly; its close does.
                try await connection.closeFuture.get()
                throw JamError(.unavailable, "the lease connection closed")
            }
            try await group.next()
            group.cancelAll()
        }
    }

    private func logNotified(_ payload: String) async {
        var positions: [(SessionID, Int64)] = []
        for line in payload.split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count == 2, let lsn = Int64(parts[1]) else {
                logger.warning("a log notification does not read", metadata: ["payload": "\(line)"])
                continue
            }
            positions.append((JamID(String(parts[0])), lsn))
        }
        if !positions.isEmpty { await handler?.logMoved(positions) }
    }

    private func replyNotified(_ payload: String) async {
        do {
            let reply = try JSONDecoder().decode(ForwardReply.self, from: Data(payload.utf8))
            guard reply.node == nodeID else { return }
            await handler?.replied(reply)
        } catch {
            logger.warning("a reply notification does not read", metadata: ["error": "\(error)"])
        }
    }

    private func closeLease() async {
        let held = lease.withLock { connection -> PostgresConnection? in
            defer { connection = nil }
            return connection
        }
        do {
            try await held?.close()
        } catch {
            logger.debug("closing the lease connection failed", metadata: ["error": "\(error)"])
        }
    }
}
