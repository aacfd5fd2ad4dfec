import JamTestSupport
import Foundation
import JamProtocol
import JamServer
import Testing

/// A signed-in member's API requests have a budget per user (`RateLimits.member`).
@Suite struct MemberRequestLimitTests {
    @Test func aMemberPastTheirBudgetGets429AndChangesNothingWhileOthersOfTheAddressAreServed() async throws {
        let (track, _) = try AudioStreamingTests.demoTrack()
        try await TestServer.with(configure: { $0.rateLimits = RateLimits(anonymous: (10, 60), member: (4, 60)) }) { server in
            let alice = try await server.api.guest("Alice")
            let bob = try await server.api.guest("Bob")
            let party = try await server.api.create(alice.token)  // Alice: 1 of 4
            _ = try await server.api.join(bob.token, code: party.session.joinCode)  // Bob: 1 of 4

            // Reads count as well as changes: a session polled or a search typed in a loop.
            var reads: [Int] = []
            reads.append(try await server.api.request("GET", "/api/v1/sessions/\(party.session.id)", token: alice.token).status)
            reads.append(try await server.api.request("GET", "/api/v1/search?q=night", token: alice.token).status)
            reads.append(try await server.api.request("GET", "//api/v1/sessions/\(party.session.id)", token: alice.token).status)
            #expect(reads == [200, 200, 200])

            let polled = try await server.api.request("GET", "/api/v1/sessions/\(party.session.id)", token: alice.token)
            #expect(polled.status == 429)
            #expect(polled.errorCode == .rateLimited)
            #expect(Int(polled.headers["retry-after"] ?? "") ?? 0 >= 1)
            let add = try await server.api.add(alice.token, party.session.id, testTrack(1))
            #expect(add.status == 429, "\(add.text)")

            // Per user, not per address: Bob behind the same router still reads, and Alice's
            // refused add is not in the queue.
            let seen = try await server.api.view(bob.token, party.session.id)
            #expect(seen.queue.isEmpty)
            // Requests without a token and media keep budgets of their own.
            #expect(try await server.api.request("GET", "/api/v1/time").status == 200)
            #expect(try await server.api.request("GET", "/api/v1/tracks/\(track)/audio", token: alice.token).status == 200)
        }
    }

    @Test func socketsAMemberOpensCountAgainstTheirBudgetAsAnUpgradeSkipsTheRouter() async throws {
        try await TestServer.with(configure: { $0.rateLimits = RateLimits(member: (3, 60)) }) { server in
            let host = try await server.api.guest("Host")
            let id = try await server.api.create(host.token).session.id  // 1 of 3
            for _ in 0..<2 {  // 2 and 3 of 3: each opening sends the whole session
                let socket = TestSocket(server: server, session: id, token: host.token)
                try await socket.next(.stateSync)
                await socket.close()
            }
            let refused = TestSocket(server: server, session: id, token: host.token)
            let error = try #require(try await refused.next(.error).error)
            #expect(error.code == .rateLimited, "\(error)")
            #expect(error.message.hasPrefix("too many requests"), "\(error.message)")
            #expect(try await refused.closedByServer()?.closeCode == .init(codeNumber: 4429))
            #expect(try await server.api.request("GET", "/api/v1/sessions/\(id)", token: host.token).status == 429, "the same budget")
        }
    }

    @Test func aMembersCoversAndSongsCountInTheAddressMediaBudgetWithOrWithoutAToken() async throws {
        let (track, _) = try AudioStreamingTests.demoTrack()
        try await TestServer.with(configure: { $0.rateLimits = RateLimits(member: (100, 60), media: (2, 60)) }) { server in
            let alice = try await server.api.guest("Alice")
            let bob = try await server.api.guest("Bob")
            #expect(try await server.api.request("GET", "/api/v1/tracks/\(track)/audio", token: alice.token).status == 200)
            #expect(try await server.api.request("GET", "/api/v1/tracks/\(track)/audio").status == 200)
            let past = try await server.api.request("GET", "/api/v1/tracks/\(track)/audio", token: bob.token)
            #expect(past.status == 429, "a token is no way around the address's media budget")
            #expect(try await server.api.request("GET", "/api/v1/search?q=night", token: bob.token).status == 200, "nor does media spend the member's")
        }
    }

    @Test func aMembersBudgetIsNotSpentByAnotherTokenOfTheSameAddress() async throws {
        try await TestServer.with(configure: { $0.rateLimits = RateLimits(anonymous: (10, 60), member: (2, 60)) }) { server in
            let guests = [try await server.api.guest("A"), try await server.api.guest("B"), try await server.api.guest("C")]
            for guest in guests {
                let statuses = [
                    try await server.api.request("GET", "/api/v1/search?q=tone", token: guest.token).status,
                    try await server.api.request("GET", "/api/v1/search?q=tone", token: guest.token).status,
                    try await server.api.request("GET", "/api/v1/search?q=tone", token: guest.token).status,
                ]
                #expect(statuses == [200, 200, 429], "\(guest.displayName)")
            }
        }
    }
}
