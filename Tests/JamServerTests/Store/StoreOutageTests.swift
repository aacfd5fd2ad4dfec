import Foundation
import JamProtocol
import JamTestSupport
import NIOCore
import ServiceLifecycle
import Synchronization
import Testing

@testable import JamServer

/// A store that does not answer for a moment costs a request, not the session, and loses no
/// socket's departure.
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

    /// Makes `store` refuse, sends an add (id "stuck") it cannot store, and waits until the
    /// pipeline has failed it and tried again: from then on the server knows the store is down.
    /// (A request sent sooner would be applied, then answered 503 as not yet stored.)
    static func stall(_ store: CommitFailureTests.RefusingStore, with socket: TestSocket) async throws {
        let before = store.attempts.withLock { $0 }
        store.refusing.withLock { $0 = true }
        socket.send(.addToQueue(AddToQueue(track: testTrack(1), nonce: "stuck")), id: "stuck")
        try await eventually("the store was tried twice", timeout: .seconds(10)) { store.attempts.withLock { $0 } >= before + 2 }
    }

    @Test func aSocketThatClosesDuringAnOutageDisconnectsItsMemberOnceTheStoreIsBack() async throws {
        let store = CommitFailureTests.RefusingStore()
        store.refusing.withLock { $0 = false }
        try await TestServer.with(store: store) { server in
            let party = try await Party.start(server, guests: ["Eli"])
            let eli = party.guests[0]
            #expect(try await server.api.view(party.host.token, party.id).members.first { $0.displayName == "Eli" }?.connected == true)

            try await Self.stall(store, with: party.host.socket)
            #expect(try await server.api.add(party.host.token, party.id, testTrack(2)).status == 503, "refused at once while the store is down")
            await eli.socket.close()
            // The close reaches the server while the store is still down (nothing to wait on: it is refused quietly).
            try await Task.sleep(for: .milliseconds(300))

            store.refusing.withLock { $0 = false }
            _ = try await party.host.socket.next("the stuck add's ack", timeout: .seconds(10)) { $0.ack?.id == "stuck" }
            try await eventually("Eli shows as away once the store is back", timeout: .seconds(10)) {
                try await server.api.view(party.host.token, party.id).members.first { $0.displayName == "Eli" }?.connected == false
            }
            await party.close()
        }
    }

    @Test func aReadShowsOnlyWhatIsStored() async throws {
        let store = CommitFailureTests.RefusingStore()
        store.refusing.withLock { $0 = false }
        try await TestServer.with(store: store) { server in
            let party = try await Party.start(server, guests: [])
            try await Self.stall(store, with: party.host.socket)
            // The add is applied in memory, not stored: a crash now would lose it, so no read shows it.
            let refused = try await server.api.request("GET", "/api/v1/sessions/\(party.id)", token: party.host.token)
            #expect(refused.status == 503)
            #expect(refused.errorCode == .unavailable)
            store.refusing.withLock { $0 = false }
            _ = try await party.host.socket.next("the add's ack", timeout: .seconds(10)) { $0.ack?.id == "stuck" }
            let view = try await server.api.view(party.host.token, party.id)
            #expect(view.nowPlaying?.item.track.id == "track-1")
            await party.close()
        }
    }
}
