import Foundation
import JamProtocol
import JamServer
import JamTestSupport
import Testing

/// A node that has just started, or has just come back to its database, takes requests for
/// shared sessions only once it hears what the other nodes announce.
@Suite(.enabled(if: TestPostgres.enabled, "needs PostgreSQL (JAM_TEST_DATABASE_URL)"))
struct NodeStartTests {
    @Test func aNodeNotYetListeningRefusesAtOnceRatherThanMissTheOwnersAnswer() async throws {
        let location = try await TestPostgres.freshDatabase()
        let direct = try URLComponents(string: location.url)!
        try await TestServer.with(configure: { $0.database = location }) { owner in
            let host = try await owner.api.guest("Host")
            let created = try await owner.api.create(host.token)
            try await SilentRelay.with(to: direct.port ?? 5432) { relay in
                var relayed = direct
                relayed.port = relay.port
                let through = try PostgresLocation(url: relayed.string!)
                // The second node's LISTENs wait in the relay: its connection is open, but it
                // would hear no record, and no answer to a command it forwards.
                relay.holdWhenClientSends("LISTEN")
                try await TestServer.with(configure: { $0.database = through }) { replica in
                    try await eventually("the node's LISTEN is held", timeout: .seconds(20)) { relay.isHolding }
                    let guest = try await replica.api.guest("Guest")
                    let join = JoinSessionRequest(code: created.session.joinCode)
                    let started = ContinuousClock.now
                    let early = try await replica.api.send("POST", "/api/v1/sessions/join", token: guest.token, json: join)
                    // Not the forward's 10 s limit, and not "may still be applied".
                    #expect(ContinuousClock.now - started < .seconds(5), "refused within the start's 3 s wait")
                    #expect(early.status == 503, "\(early.status) \(early.text)")
                    #expect(early.text.contains("the database is unreachable"), "\(early.text)")

                    relay.releaseHeld()
                    let joined = try await eventually("the node takes the join once it listens", timeout: .seconds(10)) {
                        let answer = try await replica.api.send("POST", "/api/v1/sessions/join", token: guest.token, json: join)
                        return answer.status == 200 ? answer : nil
                    }
                    let view = try joined.decode(SessionView.self)
                    #expect(view.members.contains { $0.userId == guest.userId })
                    // And the owner applied it once.
                    let seen = try await owner.api.view(host.token, created.session.id)
                    #expect(seen.members.filter { $0.userId == guest.userId }.count == 1)
                }
            }
        }
    }
}
