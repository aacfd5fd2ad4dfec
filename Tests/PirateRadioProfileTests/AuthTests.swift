import Foundation
import Testing

@Suite("PirateRadio: POST /auth")
struct AuthTests {
    @Test("POST /auth returns an HS256 JWT for the given id that the other routes accept")
    func authReturnsAWorkingHS256Token() async throws {
        try await PirateServer.with { server in
            let result = try await server.http.send("POST", "/auth", json: ["spotifyUserId": "creator1", "displayName": "Ann"])
            #expect(result.status == 200, "\(result)")
            let token = try #require(result.json?.string("token"), "no token in \(result)")

            let header = try #require(JWT.header(token), "not a three-part JWT: \(token)")
            #expect(header.string("alg") == "HS256")
            #expect(JWT.hasValidSignature(token, secret: PirateServer.secret), "the token is not HMAC-SHA256 signed with JWT_SECRET")

            let payload = try #require(JWT.payload(token))
            #expect(payload.string("sub") == "creator1")
            #expect(payload.string("name") == "Ann")
            let iat = try #require(payload.int("iat"), "no numeric iat in \(payload)")
            let exp = try #require(payload.int("exp"), "no numeric exp in \(payload)")
            let now = Int(Date().timeIntervalSince1970)
            #expect(abs(iat - now) <= 60, "iat \(iat) should be now (\(now)) in seconds")
            #expect(abs(exp - iat - 86_400) <= 1, "exp \(exp) should be 24 h after iat \(iat)")

            let created = try await server.http.request("POST", "/sessions", token: token)
            #expect(created.status == 201, "the token should open POST /sessions: \(created)")
        }
    }

    @Test("A user id with U+0000 is refused with a clear error, and no token is signed")
    func aUserIdWithANulIsRefused() async throws {
        try await PirateServer.with { server in
            for userId in ["nul\u{0}id", "\u{0}"] {
                let result = try await server.http.send("POST", "/auth", json: ["spotifyUserId": userId])
                #expect(result.status == 400, "\(userId.debugDescription): \(result)")
                #expect(result.json?.string("token") == nil)
                #expect("\(result)".contains("spotifyUserId must not contain U+0000"), "\(result)")
            }
        }
    }

    @Test("The display name defaults to the user id when absent or empty")
    func displayNameDefaultsToTheUserId() async throws {
        try await PirateServer.with { server in
            let absent = try await server.http.send("POST", "/auth", json: ["spotifyUserId": "creator1"])
            let absentToken = try #require(absent.json?.string("token"), "\(absent)")
            #expect(JWT.payload(absentToken)?.string("name") == "creator1")

            let empty = try await server.http.send("POST", "/auth", json: ["spotifyUserId": "joiner1", "displayName": ""])
            let emptyToken = try #require(empty.json?.string("token"), "\(empty)")
            #expect(JWT.payload(emptyToken)?.string("name") == "joiner1")

            let creator = PirateUser(id: "creator1", displayName: "creator1", token: absentToken)
            let joiner = PirateUser(id: "joiner1", displayName: "joiner1", token: emptyToken)
            let session = try await server.http.createSession(creator)
            let join = try await server.http.joinOK(joiner, code: session.joinCode)
            #expect(join.json?.string("djDisplayName") == "creator1", "\(join)")

            let socket = PirateSocket(server, token: emptyToken, session: session.id, label: "joiner1")
            let sync = try await socket.next("stateSync")
            let synced = sync.data.objects("members") ?? []
            #expect(synced.first { $0.string("userId") == "joiner1" }?.string("displayName") == "joiner1", "\(synced)")
            #expect(synced.first { $0.string("userId") == "creator1" }?.string("displayName") == "creator1", "\(synced)")

            let snapshot = try await server.http.snapshot(creator, session: session.id)
            let members = snapshot.objects("members") ?? []
            #expect(members.first { $0.string("userId") == "creator1" }?.string("displayName") == "creator1", "\(members)")
            #expect(members.first { $0.string("userId") == "joiner1" }?.string("displayName") == "joiner1", "\(members)")
        }
    }

    @Test("A user id too long for a display name stands in for it cut short, and its token creates and joins")
    func aLongUserIdStillMakesAUsableName() async throws {
        try await PirateServer.with { server in
            let longId = String(repeating: "a", count: 100)
            let long = try await server.http.signIn(longId)
            #expect(JWT.payload(long.token)?.string("name") == String(repeating: "a", count: 64))
            let session = try await server.http.createSession(long)
            let controls = try await server.http.signIn("\u{7}\u{8}")
            #expect(JWT.payload(controls.token)?.string("name") == "Listener")
            _ = try await server.http.joinOK(controls, code: session.joinCode)
            let socket = PirateSocket(server, token: controls.token, session: session.id, label: "controls")
            let sync = try await socket.next("stateSync")
            let names = (sync.data.objects("members") ?? []).compactMap { $0.string("displayName") }
            #expect(names.contains("Listener"), "the member's name on connecting: \(names)")
        }
    }

    @Test("A name with characters that turn the direction of text is taken without them, and its token creates and joins")
    func directionControlsAreRemovedFromANameNotRefused() async throws {
        try await PirateServer.with { server in
            let host = try await server.http.signIn("host1", displayName: "\u{202E}ecila\u{202C}")
            #expect(JWT.payload(host.token)?.string("name") == "ecila")
            let session = try await server.http.createSession(host)
            let guest = try await server.http.signIn("guest1", displayName: "\u{2067}Bob\u{2069}")
            #expect(JWT.payload(guest.token)?.string("name") == "Bob")
            // A name that shows nothing is no name: the user id stands in, as for none given.
            let blank = try await server.http.signIn("blank1", displayName: "\u{3164}\u{FEFF}")
            #expect(JWT.payload(blank.token)?.string("name") == "blank1")
            _ = try await server.http.joinOK(guest, code: session.joinCode)
            let socket = PirateSocket(server, token: guest.token, session: session.id, label: "guest")
            let sync = try await socket.next("stateSync")
            let names = (sync.data.objects("members") ?? []).compactMap { $0.string("displayName") }
            #expect(Set(names) == ["ecila", "Bob"], "\(names)")
        }
    }

    @Test("A token signed before names lost those characters joins under its name without them, or its user id")
    func anOlderTokensNameIsCleanedAsSignInCleansIt() async throws {
        try await PirateServer.with { server in
            let host = try await server.http.signIn("host1")
            let session = try await server.http.createSession(host)
            for (user, name, shown) in [("old1", "\u{202E}ecila", "ecila"), ("old2", "\u{202E}\u{202C}", "old2"), ("old3", "\u{3164}", "old3")] {
                let token = try JWT.sign(JWT.claims(userId: user, name: name, expiresInSeconds: 3600), secret: PirateServer.secret)
                let old = PirateUser(id: user, displayName: shown, token: token)
                _ = try await server.http.joinOK(old, code: session.joinCode)
                let socket = PirateSocket(server, token: token, session: session.id, label: user)
                let sync = try await socket.next("stateSync")
                let names = (sync.data.objects("members") ?? []).compactMap { $0.string("displayName") }
                #expect(names.contains(shown), "\(names)")
                await socket.close()
            }
        }
    }

    @Test("POST /auth is 400 for a missing, empty or non-string spotifyUserId and for a body that is not JSON")
    func authRejectsBadBodies() async throws {
        try await PirateServer.with { server in
            let bodies: [(String, String)] = [
                ("empty object", #"{}"#),
                ("display name only", #"{"displayName": "Ann"}"#),
                ("empty id", #"{"spotifyUserId": ""}"#),
                ("number id", #"{"spotifyUserId": 42}"#),
                ("boolean id", #"{"spotifyUserId": true}"#),
                ("null id", #"{"spotifyUserId": null}"#),
                ("array id", #"{"spotifyUserId": ["creator1"]}"#),
                ("object id", #"{"spotifyUserId": {"id": "creator1"}}"#),
                ("not JSON", "spotifyUserId=creator1"),
                ("truncated JSON", #"{"spotifyUserId": "creator1""#),
            ]
            for (name, body) in bodies {
                let result = try await server.http.send("POST", "/auth", text: body)
                #expect(result.status == 400, "\(name): \(result)")
                #expect(result.errorMessage != nil, "\(name): the body should be {\"error\": string}: \(result)")
            }
        }
    }
}
