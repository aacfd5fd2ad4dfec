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

    @Test("a create sent again under its key answers with the session the first one made")
    func aCreateSentAgainUnderItsKeyAnswersWithTheFirstSession() async throws {
        try await TestServer.with { server in
            var api = JamAPI(server: try #require(URL(string: server.baseURL)))
            _ = try await api.signIn(displayName: "Host")
            let key = try IdempotencyKey("friday-party")
            let first = try await api.createSession(CreateSessionRequest(name: "Friday"), key: key)
            let again = try await api.createSession(CreateSessionRequest(name: "Friday"), key: key)
            #expect(again.session.id == first.session.id)
            #expect(try await api.createSession(CreateSessionRequest(name: "Friday")).session.id != first.session.id, "no key, a new session")
            #expect(throws: JamError.self) { try IdempotencyKey("two words") }
        }
    }

    @Test("a host locks the session, makes a new code and ends it; a member may do none of it")
    func aHostManagesTheSessionAndAMemberMayNot() async throws {
        try await TestServer.with { server in
            let url = try #require(URL(string: server.baseURL))
            var host = JamAPI(server: url)
            _ = try await host.signIn(displayName: "Host")
            let made = try await host.createSession()
            let id = made.session.id
            var guest = JamAPI(server: url)
            _ = try await guest.signIn(displayName: "Guest")
            _ = try await guest.join(code: made.session.joinCode)

            let locked = try await host.updateSession(id, UpdateSessionRequest(settings: SettingsPatch(locked: true)), key: try IdempotencyKey("lock-1"))
            #expect(locked.session.settings.locked)
            // A pause for a song that no longer plays is refused for that, not for the state.
            let late = await #expect(throws: JamError.self) { try await host.updateSession(id, UpdateSessionRequest(playback: .pause), epoch: 4) }
            #expect(late?.code == .conflict)
            #expect(late?.message.contains("no longer playing") == true, "\(String(describing: late))")
            let renewed = try await host.newJoinCode(id)
            #expect(renewed.session.joinCode != made.session.joinCode)
            let oldCode = await #expect(throws: JamError.self) { try await guest.join(code: made.session.joinCode) }
            #expect(oldCode?.code == .notFound, "the old code no longer works")

            let refused = await #expect(throws: JamError.self) { try await guest.newJoinCode(id) }
            #expect(refused?.code == .forbidden)
            let notEnded = await #expect(throws: JamError.self) { try await guest.endSession(id) }
            #expect(notEnded?.code == .forbidden)

            try await host.endSession(id, key: try IdempotencyKey("end-1"))
            let gone = await #expect(throws: JamError.self) { try await guest.session(id) }
            #expect(gone?.code == .gone)
        }
    }

    @Test("a proxy's page instead of the server's answer is a code for its status, with the wait it asks for")
    func aProxysPageIsACodeForItsStatusWithItsWait() async throws {
        let page = "<html><body><h1>503 Service Unavailable</h1>No server is available.</body></html>"
        let answer = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/html\r\nRetry-After: 7\r\nContent-Length: \(page.utf8.count)\r\n\r\n\(page)"
        try await RefusingServer.with(answer: answer) { server in
            let api = JamAPI(server: try #require(URL(string: "http://127.0.0.1:\(server.port)")))
            let refusal = await #expect(throws: JamError.self) { try await api.search("song") }
            #expect(refusal?.code == .unavailable, "a node down behind the proxy: try again, \(String(describing: refusal))")
            #expect(refusal?.retryAfterMs == 7000)
        }
        // A newer server's code: its status's code, with the server's own words.
        let newer = #"{"error":{"code":"someLaterCode","message":"this key named another change"}}"#
        let later = "HTTP/1.1 422 Unprocessable Content\r\nContent-Type: application/json\r\nContent-Length: \(newer.utf8.count)\r\n\r\n\(newer)"
        try await RefusingServer.with(answer: later) { server in
            let api = JamAPI(server: try #require(URL(string: "http://127.0.0.1:\(server.port)")))
            let refusal = await #expect(throws: JamError.self) { try await api.search("song") }
            #expect(refusal?.code == ErrorCode.forStatus(422))
            #expect(refusal?.message == "this key named another change")
        }
        // A wait no server would ask for: a day at most, and no crash.
        let huge = "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 99999999999999999\r\nContent-Length: 0\r\n\r\n"
        try await RefusingServer.with(answer: huge) { server in
            let api = JamAPI(server: try #require(URL(string: "http://127.0.0.1:\(server.port)")))
            let refusal = await #expect(throws: JamError.self) { try await api.search("song") }
            #expect(refusal?.code == .rateLimited)
            #expect(refusal?.retryAfterMs == 86_400_000)
        }
    }
}
