import Foundation
import Testing

@Suite("PirateRadio: health")
struct HealthTests {
    @Test("GET /health needs no token and counts live sessions")
    func healthReportsOkAndLiveSessions() async throws {
        try await PirateServer.with { server in
            let before = try await server.http.request("GET", "/health")
            #expect(before.status == 200, "\(before)")
            let json = try #require(before.json, "health is not a JSON object: \(before)")
            #expect(json.string("status") == "ok")
            #expect(json.int("sessions") == 0, "a fresh server has no sessions: \(before)")

            let user = try await server.http.signIn("creator1")
            _ = try await server.http.createSession(user)
            let after = try await server.http.request("GET", "/health")
            #expect(after.status == 200)
            #expect(after.json?.string("status") == "ok")
            #expect(after.json?.int("sessions") == 1, "one live session: \(after)")
        }
    }
}
