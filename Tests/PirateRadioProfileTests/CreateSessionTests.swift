import Foundation
import Testing

@Suite("PirateRadio: POST /sessions")
struct CreateSessionTests {
    static func isFourDigits(_ code: String?) -> Bool {
        guard let code else { return false }
        return code.count == 4 && code.allSatisfy { ("0"..."9").contains($0) }
    }

    @Test("POST /sessions is 201 with a 4-digit code, and the creator is the DJ and first member")
    func createMakesTheCreatorTheDJ() async throws {
        try await PirateServer.with { server in
            let user = try await server.http.signIn("creator1", displayName: "Ann")
            let result = try await server.http.request("POST", "/sessions", token: user.token)
            #expect(result.status == 201, "\(result)")
            let json = try #require(result.json, "\(result)")
            let id = try #require(json.string("id"), "no id in \(result)")
            #expect(!id.isEmpty)
            #expect(Self.isFourDigits(json.string("joinCode")), "join code \(String(describing: json["joinCode"])) is not 4 digits")
            #expect(json.string("creatorId") == "creator1")
            #expect(json.string("djUserId") == "creator1")

            let snapshot = try await server.http.snapshot(user, session: id)
            #expect(snapshot.string("djUserId") == "creator1")
            #expect(snapshot.string("creatorId") == "creator1")
            let members = snapshot.objects("members") ?? []
            #expect(members.map { $0.string("userId") } == ["creator1"], "\(members)")
            #expect(members.first?.string("displayName") == "Ann")
        }
    }

    @Test("The body of POST /sessions is ignored and each session gets its own code")
    func createIgnoresTheBody() async throws {
        try await PirateServer.with { server in
            let user = try await server.http.signIn("creator1")
            let bodies: [Data?] = [nil, Data("{}".utf8), Data(#"{"name": "party"}"#.utf8), Data("not json at all".utf8)]
            var codes: [String] = []
            for body in bodies {
                let result = try await server.http.request("POST", "/sessions", token: user.token, body: body)
                #expect(result.status == 201, "body \(body.map { String(decoding: $0, as: UTF8.self) } ?? "none"): \(result)")
                if let code = result.json?.string("joinCode") { codes.append(code) }
            }
            #expect(codes.count == bodies.count)
            #expect(codes.allSatisfy(Self.isFourDigits), "\(codes)")
            #expect(Set(codes).count == codes.count, "codes must be unique among live sessions: \(codes)")
        }
    }

    @Test("The sixth session of one user within the hour is 429; another user can still create")
    func createIsRateLimitedPerUser() async throws {
        try await PirateServer.with { server in
            let user = try await server.http.signIn("creator1")
            var codes: [String] = []
            for n in 1...5 {
                let result = try await server.http.request("POST", "/sessions", token: user.token)
                #expect(result.status == 201, "session \(n): \(result)")
                if let code = result.json?.string("joinCode") { codes.append(code) }
            }
            #expect(Set(codes).count == 5, "codes must be unique among live sessions: \(codes)")
            #expect(codes.allSatisfy(Self.isFourDigits), "\(codes)")

            let sixth = try await server.http.request("POST", "/sessions", token: user.token)
            #expect(sixth.status == 429, "\(sixth)")
            #expect(sixth.errorMessage != nil, "a 429 body is {\"error\": string}: \(sixth)")

            let other = try await server.http.signIn("creator2")
            let otherResult = try await server.http.request("POST", "/sessions", token: other.token)
            #expect(otherResult.status == 201, "the limit is per user: \(otherResult)")
        }
    }
}
