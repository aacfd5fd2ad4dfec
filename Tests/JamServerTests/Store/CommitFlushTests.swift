import JamProtocol
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization
import JamTestSupport
import Testing

@testable import JamServer

/// When `CommitPipeline.flush` returns: only once every write submitted before it is stored.
@Suite struct CommitFlushTests {
    /// An in-memory store that holds each commit until the test lets it through, as a slow
    /// fsync would.
    final class HeldStore: SessionStore {
        let stored = InMemorySessionStore()
        private let held = Mutex<[(writes: [StoreWrite], promise: EventLoopPromise<Void>)]>([])

        var heldCount: Int { held.withLock { $0.count } }

        func loadIndex() async throws -> [StoredSessionEntry] { try await stored.loadIndex() }
        func loadSession(_ id: SessionID) async throws -> StoredSession? { try await stored.loadSession(id) }
        var services: [any Service] { [] }
        func close() async throws {}
        func commit(_ writes: [StoreWrite], on loop: any EventLoop) -> EventLoopFuture<Void> {
            let promise = loop.makePromise(of: Void.self)
            held.withLock { $0.append((writes, promise)) }
            return promise.futureResult
        }

        /// Stores the oldest held commit and completes it.
        func releaseOldest() async throws {
            let (writes, promise) = held.withLock { $0.removeFirst() }
            try await stored.commit(writes, on: promise.futureResult.eventLoop).get()
            promise.succeed()
        }

        /// Waits until `count` commits are held.
        func waitUntilHolding(_ count: Int) async throws {
            try await eventually("\(count) commits never reached the store", every: .milliseconds(1)) { heldCount == count }
        }
    }

    final class Receiver: CommitReceiver {
        let eventLoop: any EventLoop = MultiThreadedEventLoopGroup.singleton.next()
        func stored(through lsn: Int64) {}
    }

    static func session(_ n: Int) -> SessionID { SessionID("00000000-0000-0000-0006-00000000000\(n)") }

    /// Record `lsn` of session `id`; the first comes with the snapshot the store loads it from.
    static func writes(_ id: SessionID, _ lsn: Int64) -> [StoreWrite] {
        let record = StoreWrite.record(id, LogRecord(lsn: lsn, firstSeq: lsn - 1, lastSeq: lsn, wakeAt: nil, inputs: Array("[\(lsn)]".utf8)))
        guard lsn == 1 else { return [record] }
        return [.snapshot(id, SessionSnapshot(lsn: 0, seq: 0, wakeAt: nil, state: Array("{}".utf8), answers: [])), record]
    }

    static func storedLsns(_ store: InMemorySessionStore, _ id: SessionID) async throws -> [Int64] {
        try await store.loadSession(id)?.records.map(\.lsn) ?? []
    }

    @Test(.timeLimit(.minutes(1))) func flushOnAQuietPipelineReturnsAtOnce() async {
        let pipeline = CommitPipeline(store: HeldStore(), logger: Logger(label: "test"), timing: .init(linger: .zero))
        // Nothing was submitted, so nothing is held: a flush that waited for a commit would hang.
        await pipeline.flush()
    }

    @Test(.timeLimit(.minutes(1))) func flushWaitsForWritesQueuedBehindTheBatchBeingWritten() async throws {
        let store = HeldStore()
        let pipeline = CommitPipeline(store: store, logger: Logger(label: "test"), timing: .init(linger: .zero))
        let receiver = Receiver()
        let id = Self.session(1)
        pipeline.submit(Self.writes(id, 1), receipt: (receiver, 1))
        try await store.waitUntilHolding(1)
        pipeline.submit(Self.writes(id, 2), receipt: (receiver, 2))
        let returned = Atomic<Bool>(false)
        let flushed = Task {
            await pipeline.flush()
            returned.store(true, ordering: .relaxed)
            return try await Self.storedLsns(store.stored, id)
        }
        try await store.releaseOldest()
        // The second batch is now being written (and held).
        try await store.waitUntilHolding(1)
        try await Task.sleep(for: .milliseconds(20))
        let returnedEarly = returned.load(ordering: .relaxed)
        #expect(!returnedEarly)
        try await store.releaseOldest()
        #expect(try await flushed.value == [1, 2])
    }

    /// Each flush follows its own submit at the moment the pipeline goes idle after the
    /// previous one, over and over from two tasks: a flush let go by a drain that found the
    /// queue empty just before the submit would return before its write is stored.
    @Test(.timeLimit(.minutes(1))) func aFlushJustAsThePipelineGoesIdleStillWaitsForItsOwnWrite() async throws {
        let store = InMemorySessionStore()
        let pipeline = CommitPipeline(store: store, logger: Logger(label: "test"), timing: .init(linger: .zero))
        let receiver = Receiver()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 1...2 {
                group.addTask {
                    let id = Self.session(writer)
                    for lsn in Int64(1)...400 {
                        pipeline.submit(Self.writes(id, lsn), receipt: (receiver, lsn))
                        await pipeline.flush()
                        let stored = try await Self.storedLsns(store, id)
                        try #require(stored.last == lsn, "flush returned before record \(lsn) of writer \(writer) was stored")
                    }
                }
            }
            try await group.waitForAll()
        }
    }
}
