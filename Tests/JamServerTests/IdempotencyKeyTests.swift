import Foundation
import JamProtocol
import JamTestSupport
import Testing

@testable import JamServer

/// A REST change sent again under its `Idempotency-Key` (after a timeout, a dropped
/// connection, a restart) is answered as the first one was and applied once.
@Suite struct IdempotencyKeyTests {
    static func skip(_ api: RestClient, _ token: String, _ id: SessionID, key: String?) async throws -> RestResponse {
        try await api.request("POST", "/api/v1/sessions/\(id)/skip", token: token, headers: key.map { ["Idempotency-Key": $0] } ?? [:])
    }

    static func skipped(_ view: SessionView) -> [String] {
        view.history.filter { $0.outcome == .skipped }.map(\.item.track.id)
    }

    /// A host's session playing track-1 with `tracks` - 1 more queued.
    static func playing(_ api: RestClient, tracks: Int = 4) async throws -> (token: String, id: SessionID) {
        let host = try await api.guest("Host")
        let id = try await api.create(host.token).session.id
        for n in 1...tracks { _ = try await api.add(host.token, id, testTrack(n, durationMs: 3_600_000)) }
        return (host.token, id)
    }

    @Test func aSkipSentAgainWithItsKeySkipsOnceAndSaysItWasAnsweredBefore() async throws {
        try await TestServer.with { server in
            let (token, id) = try await Self.playing(server.api)
            let first = try await Self.skip(server.api, token, id, key: "skip-7f3a")
            #expect(first.status == 200, "\(first.text)")
            #expect(first.headers["idempotent-replayed"] == nil)
            let again = try await Self.skip(server.api, token, id, key: "skip-7f3a")
            #expect(again.status == 200, "\(again.text)")
            #expect(again.headers["idempotent-replayed"] == "true")
            #expect(try again.decode(SessionView.self).nowPlaying?.item.track.id == "track-2")
            let view = try await server.api.view(token, id)
            #expect(Self.skipped(view) == ["track-1"])
            #expect(view.nowPlaying?.item.track.id == "track-2")

            // A new key is a new skip; no key at all is one each time.
            #expect(try await Self.skip(server.api, token, id, key: "skip-8b21").status == 200)
            #expect(try await Self.skip(server.api, token, id, key: nil).status == 200)
            #expect(Self.skipped(try await server.api.view(token, id)) == ["track-1", "track-2", "track-3"])
        }
    }

    @Test func aSocketCommandIdCannotStandForAnIdempotencyKey() async throws {
        try await TestServer.with { server in
            let party = try await Party.start(server, guests: ["Eli"])
            let eli = party.guests[0]
            var items: [ItemID] = []
            for n in 1...3 { items.append(try await server.api.add(party.host.token, party.id, testTrack(n, durationMs: 3_600_000)).decode(QueueItem.self).id) }
            // Item 1 plays; a vote with an id shaped like the server's name for a REST key.
            eli.socket.send(.vote(Vote(itemId: items[1], value: 1)), id: "key:vote:K1")
            let refused = try await eli.socket.next("the refusal") { $0.error?.id == "key:vote:K1" || $0.ack?.id == "key:vote:K1" }
            #expect(refused.error?.code == .invalidField, "\(refused)")
            // The key is Eli's own, for a vote of its own.
            let voted = try await server.api.request(
                "PUT", "/api/v1/sessions/\(party.id)/queue/\(items[2])/vote", token: eli.token, body: Data(#"{"value":-1}"#.utf8),
                headers: ["Idempotency-Key": "K1", "Content-Type": "application/json"])
            #expect(voted.status == 200, "\(voted.text)")
            #expect(voted.headers["idempotent-replayed"] == nil)
            let view = try await server.api.view(party.host.token, party.id)
            #expect(view.queue.first { $0.id == items[2] }?.score == -1)
            #expect(view.queue.first { $0.id == items[1] }?.score == 0)
        }
    }

    @Test func aRefusedChangeIsTriedAgainAndAKeyOnAnotherKindOfChangeIsAChangeOfItsOwn() async throws {
        try await TestServer.with { server in
            let host = try await server.api.guest("Host")
            let id = try await server.api.create(host.token).session.id
            // Nothing plays: refused, and nothing is remembered under the key.
            let refused = try await Self.skip(server.api, host.token, id, key: "skip-1")
            #expect(refused.status == 409, "\(refused.text)")
            for n in 1...3 { _ = try await server.api.add(host.token, id, testTrack(n, durationMs: 3_600_000)) }
            let again = try await Self.skip(server.api, host.token, id, key: "skip-1")
            #expect(again.status == 200, "\(again.text)")
            #expect(again.headers["idempotent-replayed"] == nil, "a refusal is no answer to replay")
            #expect(Self.skipped(try await server.api.view(host.token, id)) == ["track-1"])
            // The same key on a skip request is another change, not a replay of the skip.
            let request = try await server.api.request(
                "POST", "/api/v1/sessions/\(id)/skip-requests", token: host.token, headers: ["Idempotency-Key": "skip-1"])
            #expect(request.status == 200, "\(request.text)")
            #expect(request.headers["idempotent-replayed"] == nil)
            #expect(try request.decode(SkipRequestsView.self).mine == true)
        }
    }

    @Test func aKeyBelongsToItsUserAndAnotherUsersSameKeyIsAChangeOfItsOwn() async throws {
        try await TestServer.with { server in
            let (token, id) = try await Self.playing(server.api)
            let code = try await server.api.view(token, id).session.joinCode
            let guest = try await server.api.guest("Guest")
            _ = try await server.api.join(guest.token, code: code)
            let item = try await server.api.view(token, id).queue[0].id
            let vote = { (token: String) in
                try await server.api.send("PUT", "/api/v1/sessions/\(id)/queue/\(item)/vote", token: token, json: VoteBody(value: 1), headers: ["Idempotency-Key": "vote-1"])
            }
            #expect(try await vote(token).decode(VoteResponse.self).score == 1)
            let guestVote = try await vote(guest.token)
            #expect(guestVote.headers["idempotent-replayed"] == nil)
            #expect(try guestVote.decode(VoteResponse.self).score == 2)
            // The host's repeat answers with the score the host's first vote made.
            let repeated = try await vote(token)
            #expect(repeated.headers["idempotent-replayed"] == "true")
            #expect(try repeated.decode(VoteResponse.self).score == 1)
        }
    }

    @Test func anAddSentAgainWithItsKeyReturnsTheFirstItemEvenWithAnotherNonce() async throws {
        try await TestServer.with { server in
            let (token, id) = try await Self.playing(server.api, tracks: 1)
            let add = { (nonce: String) in
                try await server.api.send(
                    "POST", "/api/v1/sessions/\(id)/queue", token: token, json: AddToQueue(track: testTrack(9), nonce: nonce), headers: ["Idempotency-Key": "add-9"])
            }
            let first = try await add("nonce-a")
            #expect(first.status == 201, "\(first.text)")
            let again = try await add("nonce-b")
            #expect(again.status == 200, "\(again.text)")
            #expect(again.headers["idempotent-replayed"] == "true")
            #expect(try again.decode(QueueItem.self).id == first.decode(QueueItem.self).id)
            #expect(try await server.api.view(token, id).queue.map(\.track.id) == ["track-9"])
        }
    }

    @Test(arguments: ["", "has space", String(repeating: "k", count: 256), "naïve"])
    func aKeyThatIsNotOneTo255VisibleASCIICharactersIsRefusedAndChangesNothing(key: String) async throws {
        try await TestServer.with { server in
            let (token, id) = try await Self.playing(server.api)
            let response = try await Self.skip(server.api, token, id, key: key)
            #expect(response.status == 400, "\(response.text)")
            #expect(response.errorCode == .invalidField)
            #expect(response.text.contains("Idempotency-Key"), "\(response.text)")
            #expect(Self.skipped(try await server.api.view(token, id)).isEmpty)
        }
    }

    @Test func aCreateSentAgainWithItsKeyAnswersWithTheSessionTheFirstMade() async throws {
        try await TestServer.with { server in
            let host = try await server.api.guest("Host")
            let create = { (token: String, name: String) in
                try await server.api.send(
                    "POST", "/api/v1/sessions", token: token, json: CreateSessionRequest(name: name), headers: ["Idempotency-Key": "party-2026"])
            }
            let first = try await create(host.token, "Friday")
            #expect(first.status == 201, "\(first.text)")
            let made = try first.decode(SessionView.self).session
            let again = try await create(host.token, "Saturday")
            #expect(again.status == 201, "\(again.text)")
            #expect(again.headers["idempotent-replayed"] == "true")
            let repeated = try again.decode(SessionView.self).session
            #expect(repeated.id == made.id)
            #expect(repeated.name == "Friday", "the first create's session, not the second's body")
            #expect(repeated.joinCode == made.joinCode)

            let other = try await server.api.guest("Other host")
            let theirs = try await create(other.token, "Theirs")
            #expect(theirs.status == 201)
            #expect(theirs.headers["idempotent-replayed"] == nil)
            #expect(try theirs.decode(SessionView.self).session.id != made.id, "another user's key makes a session of its own")

            // Once the session has ended, its key creates nothing more.
            #expect(try await server.api.request("DELETE", "/api/v1/sessions/\(made.id)", token: host.token).status == 204)
            let afterEnd = try await create(host.token, "Friday")
            #expect(afterEnd.status == 410, "\(afterEnd.text)")
        }
    }

    @Test func twoCreatesWithOneKeyAtOnceMakeOneSession() async throws {
        try await TestServer.with { server in
            let host = try await server.api.guest("Host")
            let answers = try await withThrowingTaskGroup(of: RestResponse.self) { group in
                for _ in 0..<6 {
                    group.addTask {
                        try await server.api.send(
                            "POST", "/api/v1/sessions", token: host.token, json: CreateSessionRequest(), headers: ["Idempotency-Key": "at-once"])
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let made = try answers.filter { $0.status == 201 }.map { try $0.decode(SessionView.self).session.id }
            #expect(!made.isEmpty)
            #expect(Set(made).count == 1, "\(made)")
            // The others were told to send it again once the first was answered.
            for refused in answers where refused.status != 201 {
                #expect(refused.status == 409, "\(refused.text)")
                #expect(refused.errorCode == .conflict)
            }
            #expect(answers.filter { $0.status == 201 && $0.headers["idempotent-replayed"] == nil }.count == 1)
        }
    }

    static func vote(_ api: RestClient, _ token: String, _ id: SessionID, _ item: JamID, _ value: Int?, key: String) async throws -> RestResponse {
        let path = "/api/v1/sessions/\(id)/queue/\(item)/vote"
        guard let value else { return try await api.request("DELETE", path, token: token, headers: ["Idempotency-Key": key]) }
        return try await api.send("PUT", path, token: token, json: VoteRequest(value: value), headers: ["Idempotency-Key": key])
    }

    @Test func aKeySentWithAnotherRequestOfTheSameKindIsRefusedAndChangesNothing() async throws {
        try await TestServer.with { server in
            let (token, id) = try await Self.playing(server.api, tracks: 3)
            let queued = try await server.api.view(token, id).queue.map(\.id)
            let (a, b) = (queued[0], queued[1])
            #expect(try await Self.vote(server.api, token, id, a, 1, key: "vote-k").status == 200)

            // The same key on a vote for another item, and on taking the first vote back.
            let other = try await Self.vote(server.api, token, id, b, -1, key: "vote-k")
            #expect(other.status == 422, "\(other.text)")
            let error = try other.decode(ErrorBody.self).error
            #expect(error.code == .keyReused)
            #expect(error.message == "this Idempotency-Key was already used for a different request; use a new key for a new change")
            #expect(try await Self.vote(server.api, token, id, a, nil, key: "vote-k").status == 422)
            let view = try await server.api.view(token, id)
            #expect(view.myVotes == [a.rawValue: 1], "only the first vote stands")

            // The first request itself is still answered from its key.
            let again = try await Self.vote(server.api, token, id, a, 1, key: "vote-k")
            #expect(again.status == 200, "\(again.text)")
            #expect(again.headers["idempotent-replayed"] == "true")
        }
    }

    @Test func aKeyKeepsTheRequestItWasFirstSentWithAcrossARestart() async throws {
        let directory = TestServer.makeDataDirectory()
        let first = try await ServerProcess(dataDirectory: directory)
        let (token, id) = try await Self.playing(first.server.api, tracks: 3)
        let queued = try await first.server.api.view(token, id).queue.map(\.id)
        #expect(try await Self.vote(first.server.api, token, id, queued[0], 1, key: "vote-r").status == 200)
        try await first.kill()
        try await ServerProcess.with(dataDirectory: directory) { second in
            let other = try await Self.vote(second.server.api, token, id, queued[1], 1, key: "vote-r")
            #expect(other.status == 422, "\(other.text)")
            #expect(try await second.server.api.view(token, id).myVotes == [queued[0].rawValue: 1])
            #expect(try await Self.vote(second.server.api, token, id, queued[0], 1, key: "vote-r").headers["idempotent-replayed"] == "true")
        }
    }

    @Test(.timeLimit(.minutes(2))) func aSkipAndACreateSentAgainAfterAKilledServerAreAppliedOnce() async throws {
        // Killed with the answers in hand, and killed a few ms into a skip: stored or not,
        // the repeat after the restart must leave exactly one skip.
        for attempt in 0..<3 {
            let directory = TestServer.makeDataDirectory()
            let first = try await ServerProcess(dataDirectory: directory)
            let host = try await first.server.api.guest("Host")
            let keyed = try await first.server.api.send(
                "POST", "/api/v1/sessions", token: host.token, json: CreateSessionRequest(name: "Kept"), headers: ["Idempotency-Key": "create-\(attempt)"])
            #expect(keyed.status == 201, "\(keyed.text)")
            let id = try keyed.decode(SessionView.self).session.id
            for n in 1...4 { _ = try await first.server.api.add(host.token, id, testTrack(n, durationMs: 3_600_000)) }
            if attempt == 0 {
                #expect(try await Self.skip(first.server.api, host.token, id, key: "skip-once").status == 200)
                try await first.kill()
            } else {
                // Its answer, if any, is not awaited: the connection dies with the server.
                let pending = Task { try await Self.skip(first.server.api, host.token, id, key: "skip-once") }
                try await Task.sleep(for: .milliseconds(attempt * 3))
                try await first.kill()
                _ = await pending.result
            }

            try await ServerProcess.with(dataDirectory: directory) { second in
                let again = try await Self.skip(second.server.api, host.token, id, key: "skip-once")
                #expect(again.status == 200, "attempt \(attempt): \(again.text)")
                let view = try await second.server.api.view(host.token, id)
                #expect(Self.skipped(view) == ["track-1"], "attempt \(attempt): skipped once")
                #expect(view.nowPlaying?.item.track.id == "track-2", "attempt \(attempt)")
                if attempt == 0 { #expect(again.headers["idempotent-replayed"] == "true") }

                let created = try await second.server.api.send(
                    "POST", "/api/v1/sessions", token: host.token, json: CreateSessionRequest(name: "Kept"), headers: ["Idempotency-Key": "create-\(attempt)"])
                #expect(created.headers["idempotent-replayed"] == "true", "attempt \(attempt): \(created.text)")
                #expect(try created.decode(SessionView.self).session.id == id)
            }
        }
    }

    @Test func aCreatesKeyNamesOneVersion8UUIDPerUserAndSecret() throws {
        let ids = KeyedSessionIDs(secret: "a-secret-of-enough-length-0123456789")
        let key = try IdempotencyKey("party")
        let ann: UserID = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa", bob: UserID = "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"
        let id = ids.id(for: ann, key: key)
        #expect(id.isUUID)
        #expect(Array(id.rawValue)[14] == "8", "version 8: \(id)")
        #expect(id == ids.id(for: ann, key: key))
        #expect(id != ids.id(for: bob, key: key))
        #expect(id != KeyedSessionIDs(secret: "another-secret-of-enough-length-0123").id(for: ann, key: key))
    }
}
