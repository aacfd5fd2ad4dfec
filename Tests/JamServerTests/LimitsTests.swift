import JamTestSupport
import Foundation
import JamProtocol
import JamServer
import Testing

/// Rate limits, size limits and identifier normalisation at the edge.
@Suite struct LimitsTests {
    @Test func tooManyJoinAttemptsGet429WithRetryAfter() async throws {
        try await TestServer.with(configure: { $0.rateLimits = RateLimits(guestAuth: (100, 60), createSession: (2, 3600), join: (3, 60)) }) { server in
            let alice = try await server.api.guest("Alice")
            for _ in 0..<3 {
                let miss = try await server.api.send("POST", "/api/v1/sessions/join", token: alice.token, json: JoinSessionRequest(code: "AAAAAA"))
                #expect(miss.status == 404)
            }
            let limited = try await server.api.send("POST", "/api/v1/sessions/join", token: alice.token, json: JoinSessionRequest(code: "AAAAAA"))
            #expect(limited.status == 429)
            #expect(limited.errorCode == .rateLimited)
            let retryAfter = try #require(limited.headers["retry-after"].flatMap(Int.init))
            #expect(retryAfter >= 1 && retryAfter <= 60)

            _ = try await server.api.create(alice.token)
            _ = try await server.api.create(alice.token)
            let third = try await server.api.send("POST", "/api/v1/sessions", token: alice.token, json: CreateSessionRequest())
            #expect(third.status == 429)
            #expect(third.headers["retry-after"] != nil)
        }
    }

    @Test func codesThatCannotBeJoinCodesAreRefusedAndSpendNoneOfTheJoinLimit() async throws {
        try await TestServer.with(configure: { $0.rateLimits = RateLimits(guestAuth: (100, 60), join: (3, 60)) }) { server in
            let alice = try await server.api.guest("Alice")
            let created = try await server.api.create(try await server.api.guest("Hana").token)
            // An O for a 0 and a 1 for an I, signs, a code too short: none is an OpenJam code.
            for code in ["ABCDE0", "ABCDE1", "!!!!!!", "ABC", "ABCDEFG"] {
                let refused = try await server.api.send("POST", "/api/v1/sessions/join", token: alice.token, json: JoinSessionRequest(code: code))
                #expect(refused.status == 400, "\(code): \(refused.text)")
                #expect(refused.errorCode == .invalidField)
                #expect(refused.text.contains("6 characters from ABCDEFGHJKMNPQRSTUVWXYZ23456789"), "\(refused.text)")
            }
            for _ in 0..<2 {
                let miss = try await server.api.send("POST", "/api/v1/sessions/join", token: alice.token, json: JoinSessionRequest(code: "AAAAAA"))
                #expect(miss.status == 404)
            }
            let joined = try await server.api.send("POST", "/api/v1/sessions/join", token: alice.token, json: JoinSessionRequest(code: created.session.joinCode))
            #expect(joined.status == 200, "the refused codes spent the join limit: \(joined.text)")
        }
    }

    @Test func refusedCreatesSpendNoneOfTheCreateLimit() async throws {
        try await TestServer.with(configure: { $0.rateLimits = RateLimits(guestAuth: (100, 60), createSession: (2, 3600), join: (3, 60)) }) { server in
            let alice = try await server.api.guest("Alice")
            let tooLong = CreateSessionRequest(name: String(repeating: "x", count: Validate.maxSessionName + 1))
            for _ in 0..<3 {
                let refused = try await server.api.send("POST", "/api/v1/sessions", token: alice.token, json: tooLong)
                #expect(refused.status == 400, "\(refused.text)")
            }
            let malformed = try await server.api.request("POST", "/api/v1/sessions", token: alice.token, body: Data("{".utf8))
            #expect(malformed.status == 400)
            _ = try await server.api.create(alice.token)
            _ = try await server.api.create(alice.token)
            let third = try await server.api.send("POST", "/api/v1/sessions", token: alice.token, json: CreateSessionRequest())
            #expect(third.status == 429)
        }
    }

    @Test func newGuestsOfOneAddressShareItsSessionCreationLimit() async throws {
        let limits = RateLimits(guestAuth: (100, 60), createSession: (20, 3600), createSessionPerAddress: (3, 3600))
        try await TestServer.with(configure: { $0.rateLimits = limits }) { server in
            for n in 0..<3 {
                let guest = try await server.api.guest("Guest \(n)")
                _ = try await server.api.create(guest.token)
            }
            // A fresh guest token is a fresh user, not a fresh budget.
            let fresh = try await server.api.guest("Guest 3")
            let refused = try await server.api.send("POST", "/api/v1/sessions", token: fresh.token, json: CreateSessionRequest())
            #expect(refused.status == 429)
            #expect(refused.errorCode == .rateLimited)
        }
    }

    @Test func aCreateOneLimitRefusesSpendsNothingOfTheOther() async throws {
        let limits = RateLimits(guestAuth: (100, 60), createSession: (2, 3600), createSessionPerAddress: (1, 3600))
        try await TestServer.with(configure: { $0.rateLimits = limits; $0.trustedProxies = ["127.0.0.1"] }) { server in
            let alice = try await server.api.guest("Alice")
            func create(from address: String) async throws -> Int {
                let body = try JSONEncoder().encode(CreateSessionRequest())
                return try await server.api.request("POST", "/api/v1/sessions", token: alice.token, body: body, headers: ["X-Forwarded-For": address, "Content-Type": "application/json"]).status
            }
            #expect(try await create(from: "192.0.2.1") == 201)
            // The address's one create is spent: refused, and Alice's own count stays at one.
            for _ in 0..<3 { #expect(try await create(from: "192.0.2.1") == 429) }
            #expect(try await create(from: "192.0.2.2") == 201, "Alice's second of two")
            #expect(try await create(from: "192.0.2.3") == 429, "Alice's own limit")
            // Refused by Alice's limit: the fresh address's one create is still there for Bob.
            let bob = try await server.api.guest("Bob")
            let body = try JSONEncoder().encode(CreateSessionRequest())
            let bobs = try await server.api.request("POST", "/api/v1/sessions", token: bob.token, body: body, headers: ["X-Forwarded-For": "192.0.2.3", "Content-Type": "application/json"])
            #expect(bobs.status == 201, "\(bobs.text)")
        }
    }

    @Test func anAddWithinTheCooldownGets429WithRetryAfter() async throws {
        try await TestServer.with(clock: ShiftedClock()) { server in
            let party = try await Party.start(server, guests: ["Eli"])
            let patch = UpdateSessionRequest(settings: SettingsPatch(addCooldownSeconds: 120))
            #expect(try await server.api.send("PATCH", "/api/v1/sessions/\(party.id)", token: party.host.token, json: patch).status == 200)
            let eli = party.guests[0]
            let first = ContinuousClock.now
            #expect(try await server.api.add(eli.token, party.id, testTrack(1)).status == 201)
            let refused = try await server.api.add(eli.token, party.id, testTrack(2))
            // The cooldown's rest, rounded up: 120 s less the whole seconds between the two adds
            // (none on a quiet machine; a loaded one has taken over a second).
            let between = Int((ContinuousClock.now - first).components.seconds)
            #expect(refused.status == 429)
            #expect(refused.errorCode == .rateLimited)
            let retryAfter = try #require(refused.headers["retry-after"].flatMap(Int.init), "\(refused.headers)")
            #expect((120 - between)...120 ~= retryAfter, "\(retryAfter) s after \(between) s")
            await party.close()
        }
    }

    @Test func upperCaseIdsNameTheSameThings() async throws {
        try await TestServer.with { server in
            let party = try await Party.start(server, guests: ["Eli"])
            _ = try await server.api.add(party.host.token, party.id, testTrack(1))
            let item = try await server.api.add(party.host.token, party.id, testTrack(2)).decode(QueueItem.self)
            let upperSession = party.id.rawValue.uppercased(), upperItem = item.id.rawValue.uppercased()
            let vote = try await server.api.send("PUT", "/api/v1/sessions/\(upperSession)/queue/\(upperItem)/vote", token: party.guests[0].token, json: VoteRequest(value: 1))
            #expect(vote.status == 200)
            #expect(try vote.decode(VoteResponse.self).itemId == item.id)
            party.guests[0].socket.sendRaw(#"{"type":"vote","id":"up","data":{"itemId":"\#(upperItem)","value":0}}"#)
            let ack = try await party.guests[0].socket.next("ack up") { $0.ack?.id == "up" || $0.error?.id == "up" }
            #expect(ack.ack?.score == 0)
            let view = try await server.api.view(party.guests[0].token, party.id)
            #expect(view.queue.first?.id == item.id)
            #expect(view.myVotes.isEmpty)
            await party.close()
        }
    }
}

/// Members' socket messages are held to token buckets (`CommandLimits`).
@Suite struct SocketLimitsTests {
    @Test func aMemberFloodingAddsIsRefusedWithAWaitAndNothingOfTheRefusedIsQueued() async throws {
        let clock = ShiftedClock()
        // A bucket that barely refills: no stall of a busy CI machine (2 cores, ~1,150 tests at once) lets the refused add through.
        let rate = CommandLimits.Rate(capacity: 10, perSecond: 0.01)
        try await TestServer.with(clock: clock, configure: { $0.commandLimits?.add = rate }) { server in
            let party = try await Party.start(server, guests: ["Eli"])
            let eli = party.guests[0].socket
            let burst = Int(rate.capacity)
            for n in 0...burst {
                eli.send(.addToQueue(AddToQueue(track: testTrack(100 + n), nonce: "flood-\(n)")), id: "add-\(n)")
            }
            let lastId = "add-\(burst)"
            let refusal = try await eli.next("refusal") { $0.error?.id == lastId }
            let refused = try #require(refusal.error)
            // The burst itself went through (its acks may come before or after the refusal).
            let acked = { await Set(eli.received.compactMap(\.ack?.id)) }
            let deadline = ContinuousClock.now + .seconds(30)
            while await acked().count < burst, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
            #expect(await acked() == Set((0..<burst).map { "add-\($0)" }))
            #expect(refused.code == .rateLimited)
            #expect(refused.message.hasPrefix("too many adds at once; try again in "))
            let wait = try #require(refused.retryAfterMs)
            // At most one add's refill, 100 s at 0.01/s (less the real time the flood took).
            #expect(wait > 0 && wait <= 100_000, "\(wait)")
            let view = try await server.api.view(party.host.token, party.id)
            let ids = Set(([view.nowPlaying?.item.track.id] + view.queue.map(\.track.id)).compactMap { $0 })
            #expect(ids.count == burst)
            #expect(!ids.contains("track-\(100 + burst)"))
            // Other kinds are not held up by the adds, and another member has a budget of their own.
            eli.send(.vote(Vote(itemId: view.queue[0].id, value: 1)), id: "vote")
            _ = try await eli.next("vote ack") { $0.ack?.id == "vote" }
            party.host.socket.send(.addToQueue(AddToQueue(track: testTrack(999), nonce: "host")), id: "host-add")
            _ = try await party.host.socket.next("host add ack") { $0.ack?.id == "host-add" }
            // Once the wait is over, the refused add goes through.
            clock.advance(byMs: Double(wait) + 1)
            eli.send(.addToQueue(AddToQueue(track: testTrack(100 + burst), nonce: "flood-\(burst)")), id: "again")
            _ = try await eli.next("ack again") { $0.ack?.id == "again" }
            await party.close()
        }
    }

    @Test func aMemberFloodingUnreadableMessagesIsRateLimitedLikeAnyOther() async throws {
        // A small bucket that barely refills: no stall of a loaded machine refills it mid-flood.
        try await TestServer.with(configure: { $0.commandLimits?.other = .init(capacity: 8, perSecond: 0.01) }) { server in
            let party = try await Party.start(server, guests: ["Eli"])
            let eli = party.guests[0].socket
            for n in 0..<20 { eli.sendRaw(#"{"type":"dance","id":"bad-\#(n)"}"#) }
            let last = try await eli.next("refusal of the last") { $0.error?.id == "bad-19" }
            #expect(last.error?.code == .rateLimited, "\(String(describing: last.error))")
            #expect(last.error?.retryAfterMs != nil)
            let first = await eli.received.first { $0.error?.id == "bad-0" }
            #expect(first?.error?.code == .unknownType)
            await party.close()
        }
    }

    @Test func restCommandsDrawFromTheSameBudgetAsTheMembersSockets() async throws {
        let clock = ShiftedClock()
        // A small bucket that refills slowly: a slow run must not refill it between votes.
        let limits = {
            var limits = CommandLimits()
            limits.vote = CommandLimits.Rate(capacity: 6, perSecond: 0.01)
            return limits
        }()
        try await TestServer.with(clock: clock, configure: { $0.commandLimits = limits }) { server in
            let party = try await Party.start(server, guests: ["Eli"])
            let eli = party.guests[0]
            _ = try await server.api.add(party.host.token, party.id, testTrack(1))
            let item = try #require(try await server.api.add(party.host.token, party.id, testTrack(2)).decode(QueueItem.self))
            // Half the votes over the socket, the rest and one more over REST.
            let burst = Int(limits.vote.capacity)
            for n in 0..<burst / 2 {
                eli.socket.send(.vote(Vote(itemId: item.id, value: n % 2 == 0 ? 1 : -1)), id: "vote-\(n)")
                _ = try await eli.socket.next("vote ack") { $0.ack?.id == "vote-\(n)" }
            }
            let path = "/api/v1/sessions/\(party.id)/queue/\(item.id)/vote"
            for n in burst / 2..<burst {
                let voted = try await server.api.send("PUT", path, token: eli.token, json: VoteRequest(value: n % 2 == 0 ? 1 : -1))
                #expect(voted.status == 200, "\(voted.text)")
            }
            let before = try await server.api.view(party.host.token, party.id).queue.first { $0.id == item.id }?.score
            let refused = try await server.api.send("PUT", path, token: eli.token, json: VoteRequest(value: 1))
            #expect(refused.status == 429)
            #expect(refused.errorCode == .rateLimited)
            #expect(refused.text.contains("too many votes at once"), "\(refused.text)")
            let wait = try #require(refused.headers["retry-after"].flatMap(Int.init))
            // A vote's refill, 100 s, less the real seconds the votes took (the clock is real time).
            #expect(wait >= 1 && wait <= 100, "\(wait)")
            #expect(try await server.api.view(party.host.token, party.id).queue.first { $0.id == item.id }?.score == before, "nothing of the refused vote")
            // Once the wait is over, it goes through.
            clock.advance(byMs: Double(wait) * 1000)
            #expect(try await server.api.send("PUT", path, token: eli.token, json: VoteRequest(value: 1)).status == 200)
            await party.close()
        }
    }

    @Test func aRetriedCommandIsAnsweredAgainEvenWithTheBudgetSpent() async throws {
        try await TestServer.with(clock: ShiftedClock()) { server in
            let party = try await Party.start(server, guests: ["Eli"])
            let eli = party.guests[0].socket
            let burst = Int(CommandLimits().add.capacity)
            for n in 0..<burst {
                eli.send(.addToQueue(AddToQueue(track: testTrack(100 + n), nonce: "burst-\(n)")), id: "add-\(n)")
            }
            let first = try await eli.next("the last add's ack") { $0.ack?.id == "add-\(burst - 1)" }
            let answered = try #require(first.ack)
            // A client that lost its socket sends the same frames again: they were applied, so
            // they are answered as before, not refused for a budget they already paid.
            eli.send(.addToQueue(AddToQueue(track: testTrack(100 + burst - 1), nonce: "burst-\(burst - 1)")), id: "add-\(burst - 1)")
            let again = try await eli.next("the retry's answer") { $0.error?.id == "add-\(burst - 1)" || $0.ack?.id == "add-\(burst - 1)" }
            #expect(again.error == nil, "\(again)")
            #expect(again.ack == answered)
            let view = try await server.api.view(party.host.token, party.id)
            #expect(view.queue.count + (view.nowPlaying == nil ? 0 : 1) == burst, "applied once")
            await party.close()
        }
    }
}
