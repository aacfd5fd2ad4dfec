import Foundation
import JamProtocol
import JamServer
import JamTestSupport
import Testing

/// A group commit whose `COMMIT` reached PostgreSQL while its answer was lost on the way back:
/// the server tries the batch again, finds its own records stored, and carries on.
@Suite(.enabled(if: TestPostgres.enabled, "needs PostgreSQL (JAM_TEST_DATABASE_URL)"))
struct LostCommitAnswerTests {
    @Test func aCommitWhoseAnswerWasLostIsNotTakenForAnotherNodesWrite() async throws {
        let location = try await TestPostgres.freshDatabase()
        let direct = try URLComponents(string: location.url)!
        try await SilentRelay.with(to: direct.port ?? 5432) { relay in
            var relayed = direct
            relayed.port = relay.port
            let through = try PostgresLocation(url: relayed.string!)
            try await TestServer.with(configure: { $0.database = through }) { server in
                let host = try await server.api.guest("Host")
                let id = try await server.api.create(host.token).session.id
                let socket = TestSocket(server: server, session: id, token: host.token)
                _ = try await socket.next(.stateSync)
                // Playing, so the adds below are queued.
                #expect(try await server.api.add(host.token, id, testTrack(0)).status == 201)
                // The track's start is committed in a timer turn some 50 ms on, with a COMMIT of its
                // own. Its frame goes out once that is stored: only then can the cut take the add's alone.
                _ = try await socket.next(.playCommit)

                // PostgreSQL's answer to COMMIT (its CommandComplete tag): it has committed.
                relay.cutWhenServerSends("COMMIT\u{0}")
                let add = try await server.api.add(host.token, id, testTrack(1))
                #expect(relay.hasCut, "the add's commit lost its answer")
                // Either answer is honest here: stored already, or applied and "may still be stored".
                #expect(add.status == 201 || (add.status == 503 && add.text.contains("may still be stored")), "\(add.status) \(add.text)")

                // The batch is tried again and found stored: the session carries on on this node,
                // its socket open, and the add is announced once.
                _ = try await socket.next("the add's event", timeout: .seconds(10)) { $0.queueItemAdded?.item.track.id == "track-1" }
                let view = try await server.api.view(host.token, id)
                #expect([view.nowPlaying?.item.track.id].compactMap { $0 } + view.queue.map(\.track.id) == ["track-0", "track-1"])
                let next = try await server.api.add(host.token, id, testTrack(2))
                #expect(next.status == 201, "the session still takes commands here: \(next.text)")
                _ = try await socket.next("the next add's event") { $0.queueItemAdded?.item.track.id == "track-2" }
                #expect(await socket.isOpen, "the session was not let go: its socket stayed open")
                await socket.close()
            }
        }
    }
}
