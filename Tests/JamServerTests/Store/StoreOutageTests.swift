import Foundation
import JamProtocol
import JamTestSupport
import NIOCore
import ServiceLifecycle
import Synchronization
import Testing

@testable import JamServer

/// A store that does not answer for a moment costs a request, not the session.
@Suite struct StoreOutageTests {
    /// An in-memory store whose session reads fail, as an unreachable database's do, while `down`.
    final class OutageStore: SessionStore {
        struct Unreachable: Error {}
        let stored: InMemorySessionStore
        let down = Mutex(true)

        init(_ stored: InMemorySessionStore) { self.stored = stored }

        func loadIndex() async throws -> [StoredSessionEntry] { try await stored.loadIndex() }
        func loadSession(_ id: SessionID) async throws -> StoredSession? {
            if down.withLock({ $0 }) { throw Unreachable() }
            return try await stored.loadSession(id)
        }
        var services: [any Service] { [] }
        func close() async throws {}
        func commit(_ writes: [StoreWrite], on loop: any EventLoop) -> EventLoopFuture<Void> { stored.commit(writes, on: loop) }
    }

    @Test func aSessionTheStoreCouldNotReadIsReadOnceTheStoreAnswersAgain() async throws {
        let disk = InMemorySessionStore()
        let (session, token) = try await TestServer.with(store: disk) { server in
            let host = try await server.api.guest("Host")
            let id = try await server.api.create(host.token).session.id
            _ = try await server.api.add(host.token, id, testTrack(1))
            return (id, host.token)
        }
        let store = OutageStore(disk)
        try await TestServer.with(store: store) { server in
            let first = try await server.api.request("GET", "/api/v1/sessions/\(session.rawValue)", token: token)
            #expect(first.status == 503)
            #expect(first.errorCode == .unavailable)
            store.down.withLock { $0 = false }
            let view = try await server.api.view(token, session)
            #expect([view.nowPlaying?.item.track.id].compactMap { $0 } + view.queue.map(\.track.id) == ["track-1"])
        }
    }
}
