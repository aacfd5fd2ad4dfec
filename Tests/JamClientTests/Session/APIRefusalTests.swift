import Foundation
import JamClient
import JamProtocol
import JamTestSupport
import Testing

import struct JamServer.RateLimits

/// What the REST client tells an app of a refusal.
@Suite struct APIRefusalTests {
    @Test("a rate-limited call says how long to wait, from the server's Retry-After")
    func aRateLimitedCallSaysHowLongToWait() async throws {
        try await TestServer.with(configure: { $0.rateLimits = RateLimits(createSession: (1, 3600)) }) { server in
            var api = JamAPI(server: try #require(URL(string: server.baseURL)))
            _ = try await api.signIn(displayName: "Host")
            _ = try await api.createSession()
            let refusal = await #expect(throws: JamError.self) { try await api.createSession() }
            #expect(refusal?.code == .rateLimited, "\(String(describing: refusal))")
            let wait = try #require(refusal?.retryAfterMs, "the wait is kept")
            #expect(wait > 0 && wait <= 3_600_000, "\(wait) ms")
        }
    }
}
