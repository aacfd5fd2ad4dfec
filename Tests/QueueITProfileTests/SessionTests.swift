import Foundation
import JamServer
import JamTestSupport
import Testing

/// Dates as the app's decoder reads them: ISO 8601 with a zone, fractional seconds optional.
func appDate(_ text: String?) -> Date? {
    guard let text else { return nil }
    let fractional = ISO8601DateFormatter()
    fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return fractional.date(from: text) ?? ISO8601DateFormatter().date(from: text)
}

/// Whether `text` is a lowercase hyphenated UUID.
func isLowercaseUUID(_ text: String?) -> Bool {
    guard let text, let uuid = UUID(uuidString: text) else { return false }
    return uuid.uuidString.lowercased() == text
}

@Suite("QueueIT: sessions")
struct SessionTests {
    @Test("create with a chosen code answers CurrentSessionResponse with every field the app decodes")
    func createAnswersTheFullCurrentSession() async throws {
        try await QueueITServer.with { api, _ in
            let ann = try await api.signIn("Ann")
            let answer = try await api.create(ann, code: "PARTY")
            let json = try api.ok(answer, "create")
            let session = try #require(json.object("session"), "\(answer)")
            #expect(isLowercaseUUID(session.string("id")), "\(session)")
            #expect(session.string("join_code") == "PARTY")
            let created = try #require(appDate(session.string("created_at")), "created_at must be ISO 8601 with a zone: \(session)")
            #expect(abs(created.timeIntervalSinceNow) < 60)
            #expect(session.string("host_provider") == "spotify")
            let host = try #require(session.object("host"))
            #expect(host.string("id") == ann.id)
            #expect(host.string("username") == "Ann")
            #expect(host.bool("is_anonymous") == false)
            #expect(host.string("music_provider") == "none")
            #expect(host.string("storefront") == "us")
            #expect(json.isNull("current_song"), "current_song must be present as null: \(answer)")
            #expect(json.objects("queue")?.isEmpty == true)
            #expect(json.object("my_votes")?.isEmpty == true)
            #expect(json.int("skip_request_count") == 0)
            #expect(json.int("participant_count") == 1)
            #expect(json.bool("user_requested_skip") == false)
            #expect(json.bool("last_skip_was_crowdsourced") == false)
            #expect(answer.requestId?.isEmpty == false, "every answer carries X-Request-ID")
        }
    }

    @Test("a code in use is 409 in its backend's words, and a code of 3 or 21 characters is a 422 naming the field")
    func codesAreCheckedLikeItsBackend() async throws {
        try await QueueITServer.with { api, _ in
            let ann = try await api.signIn("Ann")
            let bob = try await api.signIn("Bob")
            _ = try await api.hosting(ann, code: "PARTY")
            let taken = try await api.create(bob, code: "PARTY")
            #expect(taken.status == 409, "\(taken)")
            #expect(taken.error == "This join code is already in use. Please choose another.")
            #expect(taken.json?.int("status_code") == 409)
            #expect(taken.json?.string("request_id") == taken.requestId)

            // Lengths in code points, as its validator counts: "é" as e + accent is two.
            let accented = "e\u{301}"
            for (code, type) in [
                ("abc", "string_too_short"), (String(repeating: "x", count: 21), "string_too_long"),
                (String(repeating: accented, count: 10) + "x", "string_too_long"),
            ] {
                let refused = try await api.create(bob, code: code)
                #expect(refused.status == 422, "\(refused)")
                #expect(refused.error == "Validation error")
                let detail = try #require(refused.json?.objects("detail")?.first, "\(refused)")
                #expect(detail.string("type") == type)
                #expect(detail["loc"] as? [String] == ["body", "join_code"])
                #expect(detail.string("input") == code)
            }
            let missing = try await api.request("POST", "/api/v1/sessions/create", token: bob.token)
            #expect(missing.status == 422, "\(missing)")
            #expect(missing.json?.objects("detail")?.first?["loc"] as? [String] == ["body"])
            let notJSON = try await api.send("POST", "/api/v1/sessions/create", as: bob, text: "join_code=PARTY")
            #expect(notJSON.status == 422, "\(notJSON)")
            #expect(notJSON.json?.objects("detail")?.first?.string("type") == "json_invalid")
            // Nothing of the refused attempts was created: Bob has no session.
            #expect(try await api.current(bob).status == 404)
            // Two letters, four code points: long enough for its validator.
            #expect(try await api.create(bob, code: accented + accented).status == 200)
        }
    }

    @Test("join by code makes the session current; an unknown code is 404 Session not found")
    func joinMakesTheSessionCurrent() async throws {
        try await QueueITServer.with { api, _ in
            let ann = try await api.signIn("Ann")
            let bob = try await api.signIn("Bob")
            let id = try await api.hosting(ann, code: "Party-Time")
            let unknown = try await api.join(bob, code: "NOPE1")
            #expect(unknown.status == 404, "\(unknown)")
            #expect(unknown.error == "Session not found")
            // Its handler writes these three and nothing else (only a 422 adds `detail`).
            #expect(unknown.json.map { Set($0.keys) } == ["error", "status_code", "request_id"], "\(unknown)")
            // Codes are read as people type them: any case, with or without the dash.
            let joined = try api.ok(try await api.join(bob, code: "party-time"), "join")
            #expect(joined.object("session")?.string("id") == id)
            #expect(joined.int("participant_count") == 2)
            let current = try api.ok(try await api.current(bob), "current")
            #expect(current.object("session")?.string("id") == id)
            #expect(current.object("session")?.object("host")?.string("id") == ann.id)
        }
    }

    @Test("the code of a session that ended is free at once: a new session takes it and joining finds the new one")
    func anEndedSessionsCodeIsFreeAtOnce() async throws {
        try await QueueITServer.with { api, _ in
            let ann = try await api.signIn("Ann")
            let bob = try await api.signIn("Bob")
            let first = try await api.hosting(ann, code: "PARTY")
            // An empty session ends when its last member leaves.
            _ = try api.ok(try await api.leave(ann), "leave")
            let second = try await api.hosting(bob, code: "party")
            #expect(second != first)
            let joined = try api.ok(try await api.join(ann, code: "PARTY"), "join")
            #expect(joined.object("session")?.string("id") == second)
        }
    }

    @Test("joining or creating another session leaves the one before")
    func movingOnLeavesThePreviousSession() async throws {
        try await QueueITServer.with { api, _ in
            let ann = try await api.signIn("Ann")
            let bob = try await api.signIn("Bob")
            let cat = try await api.signIn("Cat")
            _ = try await api.hosting(ann, code: "FIRST")
            _ = try await api.hosting(cat, code: "SECOND")
            _ = try api.ok(try await api.join(bob, code: "FIRST"), "join first")
            #expect(try api.ok(try await api.current(ann), "current").int("participant_count") == 2)
            _ = try api.ok(try await api.join(bob, code: "SECOND"), "join second")
            #expect(try api.ok(try await api.current(ann), "current").int("participant_count") == 1)
            #expect(try api.ok(try await api.current(cat), "current").int("participant_count") == 2)
            let third = try await api.hosting(bob, code: "THIRD")
            #expect(try api.ok(try await api.current(bob), "current").object("session")?.string("id") == third)
            #expect(try api.ok(try await api.current(cat), "current").int("participant_count") == 1)
        }
    }

    @Test("a join and a create of one user at once leave the user in one session, not two")
    func aJoinAndACreateAtOnceLeaveTheUserInOneSession() async throws {
        try await QueueITServer.with { api, _ in
            let ann = try await api.signIn("Ann")
            let bob = try await api.signIn("Bob")
            _ = try await api.hosting(ann, code: "JOINME")
            for round in 1...4 {
                _ = try await api.hosting(bob, code: "START\(round)")
                // A double tap, or an app's retry beside a new choice: both moves read the same
                // session as the one to leave.
                async let joined = api.join(bob, code: "JOINME")
                async let created = api.create(bob, code: "OWN\(round)")
                let (join, create) = try await (joined, created)
                #expect(join.status == 200 && create.status == 200, "round \(round): \(join), \(create)")
                let current = try api.ok(try await api.current(bob), "current").object("session")?.string("id")
                let annSession = try api.ok(try await api.current(ann), "current")
                let bobInAnns = annSession.int("participant_count") == 2
                // Bob is a member of his current session only: Ann's has him exactly when it is his current one.
                #expect(bobInAnns == (current == annSession.object("session")?.string("id")), "round \(round): Bob in Ann's session and in his own")
                if bobInAnns { _ = try api.ok(try await api.leave(bob), "leave") }
            }
        }
    }

    @Test("joining is limited per user, as in its backend: a party on one network all get in")
    func joiningIsLimitedPerUser() async throws {
        // Sign-ins would be the limit otherwise: many guests of one address sign in here.
        try await QueueITServer.with(rateLimits: RateLimits(guestAuth: (100, 60))) { api, _ in
            let ann = try await api.signIn("Ann")
            _ = try await api.hosting(ann, code: "PARTY")
            for n in 1...35 {
                let guest = try await api.signIn("Guest \(n)")
                _ = try api.ok(try await api.join(guest, code: "PARTY"), "guest \(n) of one address")
            }
            // One user's twenty joins a minute (joining again is allowed, and counts).
            let bob = try await api.signIn("Bob")
            for n in 1...20 { _ = try api.ok(try await api.join(bob, code: "PARTY"), "Bob's join \(n)") }
            let refused = try await api.join(bob, code: "PARTY")
            #expect(refused.status == 429, "\(refused)")
        }
    }

    @Test("a user's requests count in OpenJam's budget per member, and another user is still served")
    func aUsersRequestsCountInTheMemberBudget() async throws {
        try await QueueITServer.with(rateLimits: RateLimits(member: (3, 60))) { api, _ in
            let ann = try await api.signIn("Ann")
            let bob = try await api.signIn("Bob")
            _ = try await api.hosting(ann, code: "PARTY")
            for n in 1...2 { #expect(try await api.current(ann).status == 200, "read \(n)") }
            let refused = try await api.current(ann)
            #expect(refused.status == 429, "\(refused)")
            #expect(refused.retryAfter != nil, "\(refused)")
            #expect(refused.json?.int("status_code") == 429, "the backend's error shape: \(refused)")
            #expect(try await api.current(bob).status == 404, "Bob's own budget: he is in no session")
        }
    }

    @Test("creating has OpenJam's limits per user and per address, and a refused code spends neither")
    func creatingIsLimitedPerUserAndPerAddress() async throws {
        let limits = RateLimits(guestAuth: (100, 60), createSession: (1, 3600), createSessionPerAddress: (2, 3600))
        try await QueueITServer.with(rateLimits: limits) { api, _ in
            let ann = try await api.signIn("Ann")
            // Too short, and long enough but with no letter or digit to match.
            for code in ["--", "----", "-- --"] { #expect(try await api.create(ann, code: code).status == 422, "\(code)") }
            _ = try await api.hosting(ann, code: "PARTY1")
            #expect(try await api.create(ann, code: "PARTY9").status == 429, "Ann's own limit")
            let bob = try await api.signIn("Bob")
            _ = try await api.hosting(bob, code: "PARTY2")
            // A fresh guest token is a fresh user, not a fresh budget for the address.
            let cat = try await api.signIn("Cat")
            let refused = try await api.create(cat, code: "PARTY3")
            #expect(refused.status == 429, "\(refused)")
            #expect(try await api.current(cat).status == 404, "nothing was created")
        }
    }

    @Test("a join code without a letter or a digit is a 422 on join_code, in the shape its app reads")
    func aCodeWithoutLettersOrDigitsIsA422() async throws {
        try await QueueITServer.with { api, _ in
            let ann = try await api.signIn("Ann")
            let refused = try await api.create(ann, code: "----")
            #expect(refused.status == 422, "\(refused)")
            let issue = try #require(refused.json?.objects("detail")?.first)
            #expect(issue.string("type") == "value_error")
            #expect((issue["loc"] as? [String]) == ["body", "join_code"])
            #expect(issue.string("input") == "----")
            #expect(try await api.current(ann).status == 404, "nothing was created")
        }
    }

    @Test("deleting the account answers 204 and leaves the current session")
    func deletingTheAccountLeavesTheSession() async throws {
        try await QueueITServer.with { api, _ in
            let (ann, bob) = try await api.party()
            let deleted = try await api.request("DELETE", "/api/v1/users/me", token: bob.token)
            #expect(deleted.status == 204, "\(deleted)")
            #expect(try await api.current(bob).status == 404)
            #expect(try api.ok(try await api.current(ann), "current").int("participant_count") == 1)
            #expect(try await api.request("DELETE", "/api/v1/users/me", token: nil).status == 401)
        }
    }

    @Test("leave always answers {ok: true}; afterwards current is 404 No active session")
    func leaveEndsTheCurrentSession() async throws {
        try await QueueITServer.with { api, _ in
            let (ann, bob) = try await api.party()
            let left = try await api.leave(bob)
            #expect(left.status == 200)
            #expect(left.text == #"{"ok":true}"#, "the app decodes [String: Bool]: \(left)")
            let none = try await api.current(bob)
            #expect(none.status == 404, "\(none)")
            #expect(none.error == "No active session")
            #expect(try await api.leave(bob).text == #"{"ok":true}"#)
            #expect(try api.ok(try await api.current(ann), "current").int("participant_count") == 1)
        }
    }

    @Test("a host who left is host still and still named, as the backend reads the name from its users")
    func aHostWhoLeftIsStillNamed() async throws {
        try await QueueITServer.with { api, _ in
            let (ann, bob) = try await api.party()
            _ = try api.ok(try await api.leave(ann), "leave")
            let host = try #require(try api.ok(try await api.current(bob), "current").object("session")?.object("host"))
            #expect(host.string("id") == ann.id)
            #expect(host.string("username") == "Ann", "\(host)")
        }
    }

    @Test("without a token every route is 401 Missing Authorization header; a bad token is 401 Invalid token")
    func everyRouteNeedsAToken() async throws {
        try await QueueITServer.with { api, _ in
            let routes: [(String, String)] = [
                ("POST", "/api/v1/sessions/create"), ("POST", "/api/v1/sessions/join"), ("GET", "/api/v1/sessions/current"),
                ("POST", "/api/v1/sessions/leave"), ("PATCH", "/api/v1/sessions/control_session"), ("POST", "/api/v1/sessions/request_skip"),
                ("POST", "/api/v1/sessions/song_finished"), ("POST", "/api/v1/songs/add"),
                ("POST", "/api/v1/songs/6F9619FF-8B86-D011-B42D-00CF4FC964FF/vote"),
                ("DELETE", "/api/v1/songs/6F9619FF-8B86-D011-B42D-00CF4FC964FF/vote"), ("GET", "/api/v1/spotify/search?q=a"),
                ("GET", "/api/v1/users/me"), ("GET", "/api/v1/ping"), ("GET", "/api/v1/secure-test"), ("GET", "/api/v1/songs/my-songs"),
            ]
            for (method, path) in routes {
                let missing = try await api.request(method, path, token: nil, body: Data("{}".utf8))
                #expect(missing.status == 401, "\(method) \(path): \(missing)")
                #expect(missing.error == "Missing Authorization header", "\(method) \(path): \(missing)")
                let bad = try await api.request(method, path, token: "not.a.token", body: Data("{}".utf8))
                #expect(bad.status == 401, "\(method) \(path): \(bad)")
                #expect(bad.error?.hasPrefix("Invalid token: ") == true, "\(method) \(path): \(bad)")
            }
            // With one, the two routes its app never calls answer as its backend's do.
            let ann = try await api.signIn("Ann")
            let secure = try await api.request("GET", "/api/v1/secure-test", token: ann.token)
            #expect(secure.status == 200, "\(secure)")
            #expect(secure.json?.string("message") == "Your token is valid!")
            #expect(secure.json?.string("user_id") == ann.id)
            #expect(try await api.request("GET", "/api/v1/songs/my-songs", token: ann.token).text == #"{"ok":true}"#)
        }
    }

    @Test("the Authorization header is read as the backend reads it: every 'Bearer ' removed, so a bare token works")
    func theHeaderIsReadAsTheBackendReadsIt() async throws {
        try await QueueITServer.with { api, _ in
            let ann = try await api.signIn("Ann")
            for (header, status) in [(ann.token, 200), ("Bearer Bearer \(ann.token)", 200), ("Bearer \(ann.token)", 200), ("bearer \(ann.token)", 401), ("Token \(ann.token)", 401)] {
                let answer = try await api.request("GET", "/api/v1/secure-test", token: nil, headers: ["Authorization": header])
                #expect(answer.status == status, "\(header.prefix(14)): \(answer)")
                if status == 200 { #expect(answer.json?.string("user_id") == ann.id, "\(answer)") }
            }
        }
    }

    @Test("of two Authorization headers the first is read, as the backend reads them")
    func ofTwoHeadersTheFirstIsRead() async throws {
        try await QueueITServer.with { api, server in
            let ann = try await api.signIn("Ann")
            let text = try await RawConnection.answer(
                to: "GET /api/v1/secure-test HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(ann.token)\r\nAuthorization: Bearer someone-else\r\nConnection: close\r\n\r\n",
                port: server.port)
            #expect(text.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(text)")
            #expect(text.contains(ann.id), "\(text)")
        }
    }

    @Test("a member's current session, votes and queue survive a restart")
    func theCurrentSessionSurvivesARestart() async throws {
        let folder = TestServer.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (ann, bob, songId) = try await TestServer.with(dataDirectory: folder, configure: { $0.profile = QueueITProfileForTests.make() }) { server in
            let api = QueueITAPI(base: server.baseURL)
            let (ann, bob) = try await api.party()
            _ = try await api.added(ann, song(1))
            let queued = try await api.added(bob, song(2))
            _ = try api.ok(try await api.vote(ann, queued, 1), "vote")
            return (ann, bob, queued)
        }
        try await QueueITServer.with(dataDirectory: folder) { api, _ in
            let current = try api.ok(try await api.current(bob), "current after restart")
            #expect(current.object("session")?.string("join_code") == "PARTY")
            #expect(current.int("participant_count") == 2)
            #expect(current.object("current_song")?.object("song")?.string("id") == "track1")
            let queued = current.objects("queue")?.first { $0.string("id") == songId }
            #expect(queued?.int("votes") == 1, "\(current)")
            #expect(try api.ok(try await api.current(ann), "current").object("my_votes")?.int(songId) == 1)
            // The code still belongs to the session.
            #expect(try await api.create(bob, code: "PARTY").status == 409)
        }
    }

    @Test("a crowd's skip still reads as the crowd's after a restart")
    func theCrowdsSkipSurvivesARestart() async throws {
        let folder = TestServer.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bob = try await TestServer.with(dataDirectory: folder, configure: { $0.profile = QueueITProfileForTests.make() }) { server in
            let api = QueueITAPI(base: server.baseURL)
            let (ann, bob) = try await api.party()
            _ = try await api.added(ann, song(1))
            _ = try await api.added(ann, song(2))
            _ = try api.ok(try await api.requestSkip(ann), "ann")
            #expect(try api.ok(try await api.requestSkip(bob), "bob").bool("skipped") == true)
            return bob
        }
        try await QueueITServer.with(dataDirectory: folder) { api, _ in
            let current = try api.ok(try await api.current(bob), "current after restart")
            #expect(current.object("current_song")?.object("song")?.string("id") == "track2")
            #expect(current.bool("last_skip_was_crowdsourced") == true, "\(current)")
        }
    }

    @Test("a path it has, asked with another method, is 405 Method Not Allowed without Allow; a path it lacks is 404 Not Found")
    func aPathAskedWithAnotherMethodIs405() async throws {
        try await QueueITServer.with { api, _ in
            let ann = try await api.signIn("Ann")
            let wrong = try await api.request("DELETE", "/api/v1/sessions/current", token: ann.token)
            #expect(wrong.status == 405, "\(wrong)")
            #expect(wrong.error == "Method Not Allowed")
            #expect(wrong.json.map { Set($0.keys) } == ["error", "status_code", "request_id"], "\(wrong)")
            #expect(wrong.json?["status_code"] as? Int == 405)
            #expect(wrong.allow == nil, "its handler writes X-Request-ID and nothing else")
            #expect(wrong.requestId != nil)
            // FastAPI's routes take only the methods they name: HEAD on a GET route too.
            let head = try await api.request("HEAD", "/api/v1/sessions/current", token: ann.token)
            #expect(head.status == 405, "\(head)")
            #expect(head.allow == nil)
            let nowhere = try await api.request("GET", "/api/v1/nothing-here", token: ann.token)
            #expect(nowhere.status == 404, "\(nowhere)")
            #expect(nowhere.error == "Not Found")
        }
    }
}
