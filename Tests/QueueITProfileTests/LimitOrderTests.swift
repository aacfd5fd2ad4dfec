import Foundation
import JamServer
import Testing

@Suite("QueueIT: what its limits count")
struct LimitOrderTests {
    @Test("a request its backend refuses as a 422 spends none of the route's limit: join, add, vote and search")
    func refusedRequestsSpendNothing() async throws {
        // Its backend's limiter wraps the handler, which FastAPI calls only with a valid body
        // and query: as many bad requests as the limit allows, then a good one still passes.
        try await QueueITServer.with(rateLimits: RateLimits(guestAuth: (100, 60))) { api, _ in
            let ann = try await api.signIn("Ann")
            let bob = try await api.signIn("Bob")
            _ = try await api.hosting(ann, code: "PARTY")

            for n in 1...20 { #expect(try await api.join(bob, code: "ab").status == 422, "join \(n): too short a code") }
            _ = try api.ok(try await api.join(bob, code: "PARTY"), "a join after twenty refused ones")

            var unknownSource = song(2)
            unknownSource["source"] = "napster"
            for n in 1...30 { #expect(try await api.add(bob, unknownSource).status == 422, "add \(n): an unknown source") }
            let songId = try await api.added(bob, song(1))

            for n in 1...60 { #expect(try await api.vote(bob, songId, 2).status == 422, "vote \(n): neither 1 nor -1") }
            _ = try api.ok(try await api.vote(bob, songId, 1), "a vote after sixty refused ones")

            for n in 1...20 {
                #expect(try await api.request("GET", "/api/v1/spotify/search", token: bob.token).status == 422, "search \(n): no q")
            }
            _ = try api.ok(try await api.request("GET", "/api/v1/spotify/search?q=Song", token: bob.token), "a search after twenty refused ones")
        }
    }
}
