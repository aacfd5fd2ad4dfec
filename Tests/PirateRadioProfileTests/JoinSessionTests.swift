import Foundation
import Testing

@Suite("PirateRadio: POST /sessions/join")
struct JoinSessionTests {
    /// `count` 4-digit codes that are not `taken`.
    static func unknownCodes(_ count: Int, besides taken: String) -> [String] {
        (0..<(count + 1)).map { String(format: "%04d", 9000 + $0 * 7) }.filter { $0 != taken }.prefix(count).map { $0 }
    }

    @Test("Joining by code is 200 with the DJ's name and member count; the caller becomes a member when their socket connects")
    func joinAnswersAndTheSocketMakesTheMember() async throws {
        try await PirateServer.with { server in
            let creator = try await server.http.signIn("creator1", displayName: "Ann")
            let joiner = try await server.http.signIn("joiner1", displayName: "Bob")
            let session = try await server.http.createSession(creator)
            let dj = try await server.connect(creator, to: session.id)

            let result = try await server.http.join(joiner, code: session.joinCode)
            #expect(result.status == 200, "\(result)")
            let json = try #require(result.json, "\(result)")
            #expect(json.string("id") == session.id)
            #expect(json.string("joinCode") == session.joinCode)
            #expect(json.string("djUserId") == "creator1")
            #expect(json.string("djDisplayName") == "Ann")
            #expect(json.int("memberCount") == 1, "the DJ, connected; the caller is not a member yet: \(result)")
            // As in PirateRadio's server, the REST join only looks the session up.
            let before = try await server.http.snapshot(joiner, session: session.id).objects("members") ?? []
            #expect(before.compactMap { $0.string("userId") } == ["creator1"], "\(before)")

            _ = try await server.connect(joiner, to: session.id)
            let joined = try await dj.socket.next("memberJoined")
            #expect(joined.data.string("userId") == "joiner1", "\(joined.text)")
            let members = try await server.http.snapshot(joiner, session: session.id).objects("members") ?? []
            #expect(Set(members.compactMap { $0.string("userId") }) == ["creator1", "joiner1"], "\(members)")
            #expect(members.first { $0.string("userId") == "joiner1" }?.string("displayName") == "Bob")
        }
    }

    @Test("Joins over REST that never connect take no place: the session still fills with ten sockets")
    func restJoinsWithoutSocketsTakeNoPlace() async throws {
        try await PirateServer.with { server in
            let creator = try await server.http.signIn("creator1")
            let session = try await server.http.createSession(creator)
            _ = try await server.connect(creator, to: session.id)
            for n in 2...10 {
                let user = try await server.http.signIn("absent\(n)")
                let result = try await server.http.join(user, code: session.joinCode)
                #expect(result.status == 200, "absent \(n): \(result)")
                #expect(result.json?.int("memberCount") == 1, "absent \(n): \(result)")
            }
            for n in 2...10 {
                let user = try await server.http.signIn("member\(n)")
                _ = try await server.connect(user, to: session.id)
            }
            let members = try await server.http.snapshot(creator, session: session.id).objects("members") ?? []
            #expect(members.count == 10, "\(members.count) members")
            #expect(!members.contains { $0.string("userId")?.hasPrefix("absent") == true }, "\(members)")
        }
    }

    @Test("Joining is 400 without a code and 404 for an unknown code")
    func joinRejectsMissingAndUnknownCodes() async throws {
        try await PirateServer.with { server in
            let creator = try await server.http.signIn("creator1")
            let joiner = try await server.http.signIn("joiner1")
            let session = try await server.http.createSession(creator)

            let missing = try await server.http.send("POST", "/sessions/join", token: joiner.token, json: [String: Any]())
            #expect(missing.status == 400, "no code: \(missing)")
            #expect(missing.errorMessage != nil, "\(missing)")

            let unknown = try await server.http.join(joiner, code: Self.unknownCodes(1, besides: session.joinCode)[0])
            #expect(unknown.status == 404, "unknown code: \(unknown)")
            #expect(unknown.errorMessage != nil, "\(unknown)")

            // Any other string is looked up too, as its server does: only spaces, or too long to be a code.
            for odd in [" ", "\t\u{00A0}", String(repeating: "7", count: 40)] {
                let notFound = try await server.http.join(joiner, code: odd)
                #expect(notFound.status == 404, "code \(odd.debugDescription): \(notFound)")
            }
        }
    }

    @Test("Joining with a code older than its lifetime is 410")
    func joinWithAnExpiredCodeIs410() async throws {
        // 4 s: the fresh join takes two HTTP round trips, slow on a busy CI machine (2 cores, ~1,150 tests at once).
        try await PirateServer.with(.init(codeLifetimeMs: 4000)) { server in
            let creator = try await server.http.signIn("creator1")
            let early = try await server.http.signIn("early1")
            let late = try await server.http.signIn("late1")
            let created = ContinuousClock.now
            let session = try await server.http.createSession(creator)

            let fresh = try await server.http.join(early, code: session.joinCode)
            #expect(fresh.status == 200, "a fresh code works: \(fresh)")

            try await Task.sleep(until: created + .milliseconds(4600))
            let stale = try await server.http.join(late, code: session.joinCode)
            #expect(stale.status == 410, "the code is older than its 4 s lifetime: \(stale)")
            #expect(stale.errorMessage != nil, "\(stale)")
        }
    }

    @Test("Joining a session with ten members is refused with 409")
    func joinIsFullAtTenMembers() async throws {
        try await PirateServer.with { server in
            let creator = try await server.http.signIn("creator1")
            let session = try await server.http.createSession(creator)
            _ = try await server.connect(creator, to: session.id)
            for n in 2...10 {
                let user = try await server.http.signIn("member\(n)")
                let result = try await server.http.join(user, code: session.joinCode)
                #expect(result.status == 200, "member \(n): \(result)")
                #expect(result.json?.int("memberCount") == n - 1, "member \(n): \(result)")
                _ = try await server.connect(user, to: session.id)
            }
            let eleventh = try await server.http.signIn("member11")
            let result = try await server.http.join(eleventh, code: session.joinCode)
            #expect(result.status == 409, "\(result)")
            #expect(result.errorMessage != nil, "\(result)")
            let members = try await server.http.snapshot(creator, session: session.id).objects("members") ?? []
            #expect(members.count == 10, "\(members.count) members")
        }
    }

    @Test("The eleventh join attempt from one address within a minute is 429, whatever the first ten were")
    func joinIsRateLimitedPerAddress() async throws {
        try await PirateServer.with { server in
            let creator = try await server.http.signIn("creator1")
            let guesser = try await server.http.signIn("guesser1")
            let other = try await server.http.signIn("other1")
            let session = try await server.http.createSession(creator)
            for code in Self.unknownCodes(10, besides: session.joinCode) {
                let result = try await server.http.join(guesser, code: code)
                #expect(result.status == 404, "attempt with \(code): \(result)")
            }
            // Same address, another user, the right code: still over the limit.
            let result = try await server.http.join(other, code: session.joinCode)
            #expect(result.status == 429, "\(result)")
            #expect(result.errorMessage != nil, "a 429 body is {\"error\": string}: \(result)")
        }
    }

    @Test("Tuning the dial through many stations is not limited as code guessing is")
    func joinByIdIsNotHeldToTheCodeJoinLimit() async throws {
        try await PirateServer.with { server in
            let creator = try await server.http.signIn("creator1")
            let listener = try await server.http.signIn("listener1")
            let session = try await server.http.createSession(creator)
            for attempt in 0..<15 {
                let joined = try await server.http.send("POST", "/sessions/join-by-id", token: listener.token, json: ["sessionId": session.id])
                #expect(joined.status == 200, "attempt \(attempt): \(joined)")
            }
            // Code joins keep their own, tighter limit, untouched by the dial.
            let byCode = try await server.http.join(listener, code: session.joinCode)
            #expect(byCode.status == 200, "\(byCode)")
        }
    }
}
