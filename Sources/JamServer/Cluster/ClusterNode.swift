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
    let logger: Logger
    /// How often nodes try to take over sessions they follow.
    let leasePoll: Duration
    /// How often the node asks its database something on the lease connection, and how long
    /// it waits for an answer there before it lets its leases go and connects again.
    let leaseCheck: (every: Duration, limit: Duration)
    let lease = Mutex<PostgresConnection?>(nil)
    /// The sessions whose leases this node holds on `lease`.
    let held = Mutex<Set<SessionID>>([])
    /// Lease statements one at a time, so none asks for a lease another is taking.
    let leaseTurns = LeaseTurns()
    let events = Mutex<(any ClusterEvents)?>(nil)
    let outgoing = Mutex(Outgoing())
    let wakeForwarder: AsyncStream<Void>.Continuation
    let forwarderWakes: AsyncStream<Void>
    /// Releases go out on a loop of their own: they wait for a lease turn, which forwarded
    /// commands and answers must not wait behind.
    let wakeReleaser: AsyncStream<Void>.Continuation
    let releaserWakes: AsyncStream<Void>

    struct Outgoing {
        var commands: [(ForwardedCommand, @Sendable (JamError) -> Void)] = []
        var replies: [ForwardReply] = []
        var unlocks: [SessionID] = []
        /// Callers of `forwardsSent`, resumed once the commands queued before them are done.
        var waitingForSent: [CheckedContinuation<Void, Never>] = []
        /// The forwarder has stopped: nothing queued now will be sent.
        var stopped = false
    }

    /// Creates the node around the shared store.
    ///
    /// `leaseCheck.limit` outlasts the commit pipeline's hang limit (5 s, checked every 1.25 s):
    /// while the database hangs, commands waiting on their commits hear that first, and only a
    /// database silent for longer costs the node its sessions.
    public init(
        store: PostgresSessionStore, logger: Logger, leasePoll: Duration = .milliseconds(500),
        leaseCheck: (every: Duration, limit: Duration) = (.seconds(1), .seconds(8))
    ) {
        nodeID = UUID().uuidString.lowercased()
        self.store = store
        self.logger = logger
        self.leasePoll = leasePoll
        self.leaseCheck = leaseCheck
        (forwarderWakes, wakeForwarder) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        (releaserWakes, wakeReleaser) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    func setEvents(_ handler: any ClusterEvents) { events.withLock { $0 = handler } }

    /// Whether the node holds its lease connection: without it the database is unreachable
    /// and the node owns nothing, so requests are refused at once rather than left waiting.
    var isConnected: Bool { lease.withLock { $0 != nil } }

    /// The lease loop has tried to connect once, whether it did or not.
    let triedOnce = Atomic<Bool>(false)

    /// `isConnected`, once the node has tried its lease connection: a request that comes just
    /// as the server starts waits for that first try (up to 3 s) rather than be refused
    /// because the connection is still being opened.
    func isConnectedOnceTried() async -> Bool {
        let deadline = ContinuousClock.now + .seconds(3)
        while !triedOnce.load(ordering: .acquiring), ContinuousClock.now < deadline {
            do {
                try await Task.sleep(for: .milliseconds(5))
            } catch {
                break
            }
        }
        return isConnected
    }

    /// Fails with `unavailable` when the database does not answer within `limit` (a pool
    /// waiting for a connection to a database that is down would wait for ever).
    func withDatabase<T: Sendable>(limit: Duration = .seconds(3), _ body: @escaping @Sendable () async throws -> T) async throws(JamError) -> T {
        guard await isConnectedOnceTried() else { throw JamError(.unavailable, "the database is unreachable; try again") }
        do {
            guard let value = try await Self.within(limit, body) else {
                throw JamError(.unavailable, "the database did not answer in time; try again")
            }
            return value
        } catch let error as JamError {
            throw error
        } catch let damage as DamagedStoredSession {
            // The database answered: what it holds is wrong, and trying again will not help.
            throw damage.refusal
        } catch {
            logger.warning("a database read failed", metadata: ["error": .loggable(error)])
            throw JamError(.unavailable, "the database is unreachable; try again")
        }
    }
    var handler: (any ClusterEvents)? { events.withLock { $0 } }

    /// `body`'s result, or nil when it has not finished within `limit`. Then `timedOut` runs,
    /// `body` is cancelled, and both are waited for: a query in `body` must end on one or the
    /// other (`PostgresSessionStore.closingOnCancel`, or a `timedOut` that closes its connection).
    static func within<T: Sendable>(
        _ limit: Duration, timedOut: () -> Void = {}, _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T? {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: limit)
                return nil
            }
            defer { group.cancelAll() }
            if let first = try await group.next(), let value = first { return value }
            timedOut()
            return nil
        }
    }

    // MARK: Running

    /// Runs the node's forwarding, lease and polling loops until shut down (a `Service`).
    public func run() async throws {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.forwardLoop() }
            // Its last releases need not go: the lease connection's close lets every lock go.
            group.addTask { for await _ in self.releaserWakes { await self.sendReleases() } }
            group.addTask { await self.leaseLoop() }
            group.addTask { await self.pollLoop() }
            await withGracefulShutdownHandler {
                await group.next()
            } onGracefulShutdown: {
                self.wakeForwarder.finish()
                self.wakeReleaser.finish()
            }
            group.cancelAll()
            // A connection's close is what ends its listeners (waiting on it ignores cancellation).
            await self.closeLease()
        }
    }
}
