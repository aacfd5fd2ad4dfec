import JamCore
import JamTestSupport
import JamProtocol
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization
import Testing

@testable import JamServer

/// A node that lets a session go (its lease lost) answers whoever waits on the session's
/// store, and the session takes nothing more.
@Suite struct ReleasedSessionTests {
    static let host: UserID = "00000000-0000-0000-0006-00000000000a"
    static let id: SessionID = "00000000-0000-0000-0006-000000000001"

    /// A store whose commits never finish until `finish` fails them.
    final class HoldingStore: SessionStore {
        let held = Mutex<[EventLoopPromise<Void>]>([])
        struct Gone: Error {}

        func loadIndex() async throws -> [StoredSessionEntry] { [] }
        func loadSession(_ id: SessionID) async throws -> StoredSession? { nil }
        var services: [any Service] { [] }
        func close() async throws {}
        func commit(_ writes: [StoreWrite], on loop: any EventLoop) -> EventLoopFuture<Void> {
            let promise = loop.makePromise(of: Void.self)
            held.withLock { $0.append(promise) }
            return promise.futureResult
        }
        func finish() {
            for promise in held.withLock({ $0 }) { promise.fail(Gone()) }
        }
    }

    @Test(.timeLimit(.minutes(1))) func aSessionLetGoAnswersThoseWaitingOnItsStoreAndTakesNothingMore() async throws {
        let store = HoldingStore()
        defer { store.finish() }
        // The store holds every commit: with the usual hang limit a slow machine would see the
        // waits refused as a hang before the test looks, which is another test's subject.
        let logger = Logger(label: "test")
        let environment = SessionEnvironment.forTests(
            logger: logger, pipeline: CommitPipeline(store: store, logger: logger, timing: .init(hangLimit: .seconds(600))))
        let state = SessionState(id: Self.id, joinCode: "ABCDEF", name: "Party", creator: Self.host, creatorName: "Host", now: SystemClock().now())
        let session = LiveSession(
            state: state, storedLsn: 0, wire: OpenJamWire(), environment: environment, eventLoop: MultiThreadedEventLoopGroup.singleton.next())
        let track = Track(id: "t1", name: "Track 1", artist: "Artist")
        let host = Self.host

        let add = Task { try await session.perform(.add(track: track, nonce: "n1", itemId: "00000000-0000-0000-0006-000000000101"), by: host) }
        try await eventually("the add is applied and waits for the store", timeout: .seconds(20)) { await session.waiters.count == 1 }
        let read = Task { try await session.view(for: host) }
        try await eventually("the read waits for the add's record", timeout: .seconds(20)) { await session.waiters.count == 2 }

        await session.release("a test lets it go")
        #expect(await Self.refusal(of: add) == .unavailable, "the add may never be stored here")
        #expect(await Self.refusal(of: read) == .unavailable, "the read would show what may never be stored")
        #expect(await session.waiters.isEmpty)

        // Afterwards: reads and changes are refused at once rather than left waiting.
        #expect(await Self.refusal(of: Task { try await session.view(for: host) }) == .unavailable)
        #expect(await Self.refusal(of: Task { try await session.perform(.skip, by: host) }) == .unavailable)
        #expect(await session.waiters.isEmpty)
    }

    /// A store that writes at once and keeps what it was given.
    final class RecordingStore: SessionStore {
        let writes = Mutex<[StoreWrite]>([])

        func loadIndex() async throws -> [StoredSessionEntry] { [] }
        func loadSession(_ id: SessionID) async throws -> StoredSession? { nil }
        var services: [any Service] { [] }
        func close() async throws {}
        func commit(_ writes: [StoreWrite], on loop: any EventLoop) -> EventLoopFuture<Void> {
            self.writes.withLock { $0 += writes }
            return loop.makeSucceededVoidFuture()
        }
        var snapshots: Int {
            writes.withLock { $0.count { if case .snapshot = $0 { true } else { false } } }
        }
    }

    @Test(.timeLimit(.minutes(1))) func noSessionWritesASnapshotWhenTheServerStopsLetGoOrNot() async throws {
        // One let go may hold a turn the log refused (another node wrote first): a snapshot of
        // it would replace the real one at that record and, once the log is pruned, lose what
        // the other node acknowledged. One still its own has nothing to add to its log, and a
        // snapshot would only shorten what clients can resume from after the restart.
        let store = RecordingStore()
        let logger = Logger(label: "test")
        let pipeline = CommitPipeline(store: store, logger: logger, timing: .init())
        let environment = SessionEnvironment.forTests(logger: logger, pipeline: pipeline)
        func session(_ n: Int) -> LiveSession {
            let id = SessionID("00000000-0000-0000-0006-00000000000\(n)")
            let state = SessionState(id: id, joinCode: "ABCDE\(n)", name: "Party", creator: Self.host, creatorName: "Host", now: SystemClock().now())
            return LiveSession(state: state, storedLsn: 0, wire: OpenJamWire(), environment: environment, eventLoop: MultiThreadedEventLoopGroup.singleton.next())
        }
        let track = Track(id: "t1", name: "Track 1", artist: "Artist")
        let (kept, letGo) = (session(2), session(3))
        for live in [kept, letGo] {
            _ = try await live.perform(.add(track: track, nonce: "n1", itemId: "00000000-0000-0000-0006-000000000101"), by: Self.host)
        }
        await pipeline.flush()
        #expect(store.snapshots == 0)
        await letGo.release("a test lets it go")
        await letGo.shutdown()
        await kept.shutdown()
        await pipeline.flush()
        #expect(store.snapshots == 0)
        #expect(store.writes.withLock { $0.isEmpty == false }, "the adds were stored")
    }

    /// The code `task` failed with, nil when it succeeded.
    static func refusal<T>(of task: Task<T, any Error>) async -> ErrorCode? {
        switch await task.result {
        case .success: nil
        case .failure(let error): (error as? JamError)?.code
        }
    }
}
