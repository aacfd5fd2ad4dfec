import JamProtocol
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization
import JamTestSupport
import Testing

@testable import JamServer

/// What the commit pipeline does when the store refuses a batch.
@Suite struct CommitFailureTests {
    /// An in-memory store that refuses commits while `refusing`, as a full or vanished disk would.
    final class RefusingStore: SessionStore {
        let stored = InMemorySessionStore()
        let refusing = Mutex(true)
        let attempts = Mutex(0)

        struct DiskGone: Error {}

        func loadIndex() async throws -> [StoredSessionEntry] { try await stored.loadIndex() }
        func loadSession(_ id: SessionID) async throws -> StoredSession? { try await stored.loadSession(id) }
        var services: [any Service] { [] }
        func close() async throws {}
        func commit(_ writes: [StoreWrite], on loop: any EventLoop) -> EventLoopFuture<Void> {
            attempts.withLock { $0 += 1 }
            return refusing.withLock { $0 } ? loop.makeFailedFuture(DiskGone()) : stored.commit(writes, on: loop)
        }
    }

    final class Receiver: CommitReceiver {
        let eventLoop: any EventLoop = MultiThreadedEventLoopGroup.singleton.next()
        let storedLsn = Mutex<Int64>(0)
        func stored(through lsn: Int64) { storedLsn.withLock { $0 = max($0, lsn) } }
    }

    static let id: SessionID = "00000000-0000-0000-0005-000000000001"

    static func record(_ lsn: Int64) -> StoreWrite {
        .record(id, LogRecord(lsn: lsn, firstSeq: lsn - 1, lastSeq: lsn, wakeAt: nil, inputs: Array("[\(lsn)]".utf8)))
    }

    @Test func aRefusedBatchIsRetriedInOrderAndNothingIsAcknowledgedBeforeItIsStored() async throws {
        let store = RefusingStore()
        let pipeline = CommitPipeline(store: store, logger: Logger(label: "test"), timing: .init(linger: .zero))
        let receiver = Receiver()
        let snapshot = SessionSnapshot(lsn: 0, seq: 0, wakeAt: nil, state: Array("{}".utf8), answers: [])
        pipeline.submit([.snapshot(Self.id, snapshot), Self.record(1)], receipt: (receiver, 1))
        pipeline.submit([Self.record(2)], receipt: (receiver, 2))
        try await eventually("the refused batch was not tried again", every: .milliseconds(5)) { store.attempts.withLock { $0 } >= 2 }
        #expect(receiver.storedLsn.withLock { $0 } == 0)
        store.refusing.withLock { $0 = false }
        await pipeline.flush()
        // The pipeline told the receiver's loop before `flush` returned; a task queued there
        // now runs after that news, however busy the loop is.
        try await receiver.eventLoop.submit {}.get()
        #expect(receiver.storedLsn.withLock { $0 } == 2)
        let session = try #require(try await store.stored.loadSession(Self.id))
        #expect(session.records.map(\.lsn) == [1, 2])
        #expect(store.attempts.withLock { $0 } >= 3)
    }

    // A stop that hung would hold the run: the time limit ends the test and says so.
    @Test(.timeLimit(.minutes(1))) func aStoppingServerGivesUpOnAStoreThatKeepsRefusingInsteadOfHanging() async throws {
        let store = RefusingStore()
        let pipeline = CommitPipeline(store: store, logger: Logger(label: "test"), timing: .init(linger: .zero))
        let receiver = Receiver()
        pipeline.submit([Self.record(1)], receipt: (receiver, 1))
        await pipeline.stop()
        // At least that many: attempts made before the server began to stop count too.
        #expect(store.attempts.withLock { $0 } >= CommitPipeline.attemptsWhenStopping)
        #expect(receiver.storedLsn.withLock { $0 } == 0)
    }
}
