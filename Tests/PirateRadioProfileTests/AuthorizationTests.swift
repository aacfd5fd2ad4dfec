import Foundation
import JamTestSupport
import Testing

@Suite("PirateRadio: bad tokens")
struct AuthorizationTests {
    /// Authorization headers that must all be refused (nil: no header at all).
    static func badAuthorizations() throws -> [(String, String?)] {
        let forged = try JWT.sign(JWT.claims(userId: "creator1", name: "Ann", expiresInSeconds: 3600), secret: "some-other-secret-0123456789abcdef")
        let expired = try JWT.sign(
            JWT.claims(userId: "creator1", name: "Ann", issuedSecondsAgo: 2 * 86_400, expiresInSeconds: -86_400), secret: PirateServer.secret)
        // JSONDecoder traps on exactly this text, and the header is read before the signature.
        let deep = Data(String(repeating: "[", count: 513).utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        return [
            ("missing header", nil),
            ("a header nested deeper than JSON readers allow", "Bearer \(deep).e30.c2ln"),
            ("Basic scheme", "Basic x"),
            ("no scheme", "abc"),
            ("malformed token", "Bearer abc"),
            ("empty bearer", "Bearer "),
            ("signed with another secret", "Bearer \(forged)"),
            ("expired", "Bearer \(expired)"),
        ]
    }

    @Test("A token the test signs with JWT_SECRET (HS256, future exp) is accepted")
    func selfSignedTokenWithTheServerSecretIsAccepted() async throws {
        try await PirateServer.with { server in
            let token = try JWT.sign(JWT.claims(userId: "creator1", name: "Ann", expiresInSeconds: 3600), secret: PirateServer.secret)
            let created = try await server.http.request("POST", "/sessions", token: token)
            #expect(created.status == 201, "a valid HS256 token with the server's secret should work: \(created)")
            #expect(created.json?.string("creatorId") == "creator1", "\(created)")
        }
    }

    @Test("Of two Authorization headers the first is read, as Node keeps the first")
    func ofTwoHeadersTheFirstIsRead() async throws {
        try await PirateServer.with { server in
            let user = try await server.http.signIn("creator1", displayName: "Ann")
            let text = try await RawConnection.answer(
                to: "POST /sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(user.token)\r\nAuthorization: Bearer abc\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                port: server.port)
            #expect(text.hasPrefix("HTTP/1.1 201 Created\r\n"), "\(text)")
            #expect(text.contains("creator1"), "\(text)")
        }
    }

    @Test("GET /sessions/{id}, POST /sessions and POST /sessions/join answer 401 for every kind of bad token")
    func badTokensAre401() async throws {
        try await PirateServer.with { server in
            let user = try await server.http.signIn("creator1", displayName: "Ann")
            let session = try await server.http.createSession(user)
            for (name, authorization) in try Self.badAuthorizations() {
                let get = try await server.http.request("GET", "/sessions/\(session.id)", authorization: authorization)
                #expect(get.status == 401, "GET /sessions/{id} with \(name): \(get)")
                #expect(get.errorMessage != nil, "GET with \(name): the body should be {\"error\": string}: \(get)")

                let create = try await server.http.request("POST", "/sessions", authorization: authorization)
                #expect(create.status == 401, "POST /sessions with \(name): \(create)")
                #expect(create.errorMessage != nil, "POST /sessions with \(name): \(create)")

                let join = try await server.http.send("POST", "/sessions/join", authorization: authorization, json: ["code": session.joinCode])
                #expect(join.status == 401, "POST /sessions/join with \(name): \(join)")
                #expect(join.errorMessage != nil, "POST /sessions/join with \(name): \(join)")
            }
            // The good token still works, so the 401s were about the tokens.
            let get = try await server.http.get(user, session: session.id)
            #expect(get.status == 200, "\(get)")
        }
    }

    @Test("A socket with a missing, malformed, badly signed or expired token is closed with 4001")
    func badTokenOnSocketCloses4001() async throws {
        try await PirateServer.with { server in
            let user = try await server.http.signIn("creator1", displayName: "Ann")
            let session = try await server.http.createSession(user)
            let forged = try JWT.sign(JWT.claims(userId: "creator1", name: "Ann", expiresInSeconds: 3600), secret: "some-other-secret-0123456789abcdef")
            let expired = try JWT.sign(
                JWT.claims(userId: "creator1", name: "Ann", issuedSecondsAgo: 2 * 86_400, expiresInSeconds: -86_400), secret: PirateServer.secret)
            let tokens: [(String, String?)] = [("missing", nil), ("malformed", "abc"), ("badly signed", forged), ("expired", expired)]
            for (name, token) in tokens {
                let socket = PirateSocket(server, token: token, session: session.id, label: "\(name) token")
                let code = try await socket.closeCode()
                #expect(code == 4001, "\(name) token: closed with \(String(describing: code))")
                #expect(await socket.frames("stateSync").isEmpty, "\(name) token: no stateSync may be sent")
            }
            // The right token on the same session is welcome.
            _ = try await server.connect(user, to: session.id)
        }
    }
}
