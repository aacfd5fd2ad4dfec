import Foundation
import JamCore
import JamProtocol
import JamTestSupport
import Logging
import NIOPosix
import PostgresNIO
import Synchronization
import Testing

@testable import JamServer

/// A replica that read its log to the end after its node came back to the database (a
/// resynchronisation) stops reading there: the lease poll does not read it again and again.
@Suite(.serialized, .enabled(if: TestPostgres.enabled, "needs PostgreSQL (JAM_TEST_DATABASE_URL)"))
struct ReplicaCatchUpTests {
    static let host: UserID = "00000000-0000-0000-0016-00000000000a"
    static let id: SessionID = "00000000-0000-0000-0016-000000000001"
    static let readFailed = "reading the session's log failed"

    @Test(.timeLimit(.minutes(1))) func aReplicaCaughtUpToTheLogsEndIsNotReadAgainByTheLeasePoll() async throws {
        let location = try await TestPostgres.freshDatabase()
        let messages = LoggedMessages()
        let logger = Logger(label: "test") { _ in MessageCapture(messages: messages) }
        let store = try await PostgresSessionStore.open(location, logger: logger)
        let node = ClusterNode(store: store, logger: logger)
        let environment = SessionEnvironment.forTests(logger: logger, cluster: node)
        let state = SessionState(id: Self.id, joinCode: "ABCDEF", name: "Party", creator: Self.host, creatorName: "Host", now: SystemClock().now())
        let session = LiveSession(
            state: state, storedLsn: 0, wire: OpenJamWire(), environment: environment, eventLoop: MultiThreadedEventLoopGroup.singleton.next())
        await session.followTheOwner()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await node.run() }
            try await eventually("the node reached its database", timeout: .seconds(20)) { await node.isConnectedOnceTried() }
            // The node came back to its database: the replica reads its log to the end.
            await session.catchUpToEnd()
            #expect(!messages.all.contains(Self.readFailed))
            // From now on every read of the log fails, and says so.
            try await location.withTestConnection(id: 8) { sql in
                try await sql.query("ALTER TABLE session_log RENAME TO session_log_away", logger: logger)
            }
            // The lease poll's look at the replica finds nothing owed.
            _ = await session.retryFailedReads()
            _ = await session.retryFailedReads()
            #expect(!messages.all.contains(Self.readFailed), "the lease poll read the log again")
            // A read does fail now: the check above would have seen one.
            await session.catchUpToEnd()
            #expect(messages.all.contains(Self.readFailed))
            group.cancelAll()
        }
        try await store.close()
    }
}

/// Every message logged, in order.
private final class LoggedMessages: Sendable {
    private let list = Mutex<[String]>([])
    func append(_ message: String) { list.withLock { $0.append(message) } }
    var all: [String] { list.withLock { $0 } }
}

/// Keeps every message logged.
private struct MessageCapture: LogHandler {
    let messages: LoggedMessages
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        messages.append(event.message.description)
    }
}

extension LiveSession {
    /// Test access: the session follows another node's log.
    fileprivate func followTheOwner() { role = .replica }
}
