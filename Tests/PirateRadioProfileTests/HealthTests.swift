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

    @Test("Cross-origin requests are allowed from anywhere, as its server allows its monitoring page; a preflight is 204")
    func crossOriginRequestsAreAllowed() async throws {
        try await PirateServer.with { server in
            let origin = ["Origin": "http://monitor.example"]
            let preflight = try await server.http.request(
                "OPTIONS", "/sessions", headers: origin.merging(["Access-Control-Request-Method": "POST"]) { $1 })
            #expect(preflight.status == 204, "\(preflight)")
            #expect(preflight.headers["access-control-allow-origin"] == "*", "\(preflight.headers)")
            let methods = Set((preflight.headers["access-control-allow-methods"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            #expect(methods.isSuperset(of: ["GET", "POST", "OPTIONS"]), "\(preflight.headers)")
            let allowed = (preflight.headers["access-control-allow-headers"] ?? "").lowercased()
            #expect(allowed.contains("authorization") && allowed.contains("content-type"), "\(preflight.headers)")

            let health = try await server.http.request("GET", "/health", headers: origin)
            #expect(health.status == 200 && health.headers["access-control-allow-origin"] == "*", "\(health.headers)")
            // Refusals too, so a page can read why.
            let refused = try await server.http.request("GET", "/stations", headers: origin)
            #expect(refused.status == 401 && refused.headers["access-control-allow-origin"] == "*", "\(refused) \(refused.headers)")
        }
    }

    @Test("A path it has, asked with another method, is 404 as its server answers it (Express has no 405)")
    func aPathAskedWithAnotherMethodIsNotFound() async throws {
        try await PirateServer.with { server in
            let wrong = try await server.http.request("POST", "/health")
            #expect(wrong.status == 404, "\(wrong)")
            #expect(wrong.headers["allow"] == nil)
        }
    }

    @Test("HEAD on a GET route answers with its headers and no body, as Express does")
    func headOnAGetRouteAnswersItsHeaders() async throws {
        try await PirateServer.with { server in
            let get = try await server.http.request("GET", "/health")
            let head = try await server.http.request("HEAD", "/health")
            #expect(head.status == 200, "\(head)")
            #expect(head.body.isEmpty)
            #expect(head.headers["content-type"] == get.headers["content-type"])
            #expect(head.headers["content-length"] == String(get.body.count))
            // Refused as GET is.
            #expect(try await server.http.request("HEAD", "/stations").status == 401)
        }
    }
}
