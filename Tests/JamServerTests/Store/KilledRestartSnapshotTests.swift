import Foundation
import JamProtocol
import JamTestSupport
import NIOCore
import ServiceLifecycle
import Synchronization
import Testing

@testable import JamServer

/// A server killed again and again still takes snapshots, so its log (and what every start
/// replays) stays short.
@Suite struct KilledRestartSnapshotTests {
    /// An in-memory store that stops keeping anything once "killed": what the process would
    /// have written after SIGKILL (the disconnects a stop logs) never arrives.
    final class KillableStore: SessionStore {
        let stored: InMemorySessionStore
        let killed = Mutex(false)

        init(_ stored: InMemorySessionStore) { self.stored = stored }

        func loadIndex() async throws -> [StoredSessionEntry] { try await stored.loadIndex() }
        func loadSession(_ id: SessionID) async throws -> StoredSession? { try await stored.loadSession(id) }
        var services: [any Service] { [] }
        func close() async throws {}
        func commit(_ writes: [StoreWrite], on loop: any EventLoop) -> EventLoopFuture<Void> {
            killed.withLock { $0 } ? loop.makeSucceededVoidFuture() : stored.commit(writes, on: loop)
        }
    }

    static let snapshotEvery = 6

    /// One life of a server on `disk`, ended as by SIGKILL: whatever it writes while
    /// shutting down is lost.
    static func life<T: Sendable>(on disk: InMemorySessionStore, _ body: @Sendable (TestServer) async throws -> T) async throws -> T {
        let store = KillableStore(disk)
        return try await TestServer.with(store: store, configure: { $0.snapshotEvery = Self.snapshotEvery }) { server in
            let result = try await body(server)
            store.killed.withLock { $0 = true }
            return result
        }
    }

    @Test func aSessionWhoseServerIsKilledBeforeEachSnapshotStillGetsThemAndItsLogStaysShort() async throws {
        let disk = InMemorySessionStore()
        // Created, then killed before anything more.
        let (session, token) = try await Self.life(on: disk) { server in
            let host = try await server.api.guest("Host")
            return (try await server.api.create(host.token).session.id, host.token)
        }
        let creationSnapshot = try #require(try await disk.loadSession(session)?.snapshots.last?.lsn)
        for round in 0..<5 {
            try await Self.life(on: disk) { server in
                // A few turns each life, fewer than a snapshot needs (each start adds two).
                for n in 0..<3 {
                    let added = try await server.api.add(token, session, testTrack(round * 10 + n))
                    #expect(added.status == 201, "\(added.text)")
                }
            }
        }
        let stored = try #require(try await disk.loadSession(session))
        let newest = try #require(stored.snapshots.last)
        #expect(newest.lsn > creationSnapshot, "only the creation snapshot: no life lasted long enough to write another")
        #expect(stored.records.count <= 2 * Self.snapshotEvery, "\(stored.records.count) records to replay")

        // And nothing acknowledged was lost on the way.
        try await TestServer.with(store: KillableStore(disk)) { server in
            let view = try await server.api.view(token, session)
            let tracks = Set(([view.nowPlaying?.item] + view.queue.map { $0 } + view.history.map(\.item)).compactMap { $0?.track.id })
            #expect(tracks.count == 15, "\(tracks.sorted())")
        }
    }
}
