import Foundation
import JamProtocol
import JamTestSupport
import Testing

/// The built-in demo library, searched over REST.
@Suite struct LibrarySearchTests {
    @Test func aFreshServerOffersTheDemoLibraryToSearch() async throws {
        try await TestServer.with { server in
            let alice = try await server.api.guest("Alice")
            let found = try await server.api.request("GET", "/api/v1/search?q=NIGHT%20b", token: alice.token)
            #expect(found.status == 200)
            let tracks = try found.decode(SearchResults.self).tracks
            #expect(tracks.map(\.name) == ["Night Bus"])
            #expect(tracks.first?.source == .library)
            #expect(abs((tracks.first?.durationMs ?? 0) - 30_000) <= 50)
            let everything = try await server.api.request("GET", "/api/v1/search?q=&limit=100", token: alice.token)
            #expect(try everything.decode(SearchResults.self).tracks.count == 12)
            let accents = try await server.api.request("GET", "/api/v1/search?q=cafe", token: alice.token)
            #expect(try accents.decode(SearchResults.self).tracks.map(\.name) == ["Café au Lait"])
        }
    }

    @Test func searchRefusesBadLimitsAndStrangers() async throws {
        try await TestServer.with { server in
            let alice = try await server.api.guest("Alice")
            let bad = try await server.api.request("GET", "/api/v1/search?q=a&limit=0", token: alice.token)
            #expect(bad.status == 400)
            #expect(bad.errorCode == .invalidField)
            let anonymous = try await server.api.request("GET", "/api/v1/search?q=a")
            #expect(anonymous.status == 401)
        }
    }
}
