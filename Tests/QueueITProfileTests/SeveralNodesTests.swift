import Foundation
import JamQueueIT
import JamServer
import JamTestSupport
import Testing

/// Two QueueIT nodes on one PostgreSQL database: a chosen join code follows the database, not a
/// node's memory of who held it.
@Suite(.enabled(if: TestPostgres.enabled, "needs PostgreSQL (JAM_TEST_DATABASE_URL)"))
struct SeveralNodesTests {
    /// Two QueueIT nodes on a fresh database, the second started once the first serves; `body`
    /// gets a client of each and the second server (for its sockets).
    static func withTwoNodes(_ body: @escaping @Sendable (QueueITAPI, QueueITAPI, TestServer) async throws -> Void) async throws {
        let database = try await TestPostgres.freshDatabase()
        let configure: @Sendable (inout ServerConfiguration) -> Void = {
            $0.profile = QueueITProfile()
            $0.database = database
        }
        try await TestServer.with(configure: configure) { first in
            try await TestServer.with(configure: configure) { second in
                try await body(QueueITAPI(base: first.baseURL), QueueITAPI(base: second.baseURL), second)
            }
        }
    }

    @Test("a member on another node than the session's adds, votes, joins again and leaves, each answered at once")
    func callsThroughAnotherNodeAreAnsweredAtOnce() async throws {
        try await Self.withTwoNodes { a, b, _ in
            let ann = try await a.signIn("Ann")
            let bob = try await b.signIn("Bob")
            _ = try await a.hosting(ann, code: "PARTY")
            _ = try a.ok(try await a.add(ann, song(1)), "ann adds")
            // Each call on the second node goes to the first, which owns the session, and
            // must be answered well before the 10 s a forward waits at most.
            func timed(_ what: String, _ call: () async throws -> Answer) async throws -> JSONObject {
                let started = ContinuousClock.now
                let answer = try await call()
                let took = ContinuousClock.now - started
                #expect(took < .seconds(3), "\(what) took \(took)")
                return try b.ok(answer, what)
            }
            _ = try await timed("join") { try await b.join(bob, code: "PARTY") }
            let added = try await timed("add") { try await b.add(bob, song(2)) }
            let queued = try #require(added.string("id"))
            #expect(try await timed("vote") { try await b.vote(bob, queued, 1) }.int("total_votes") == 1)
            // Changes nothing: the owner has no record to answer it with.
            #expect(try await timed("the same vote again") { try await b.vote(bob, queued, 1) }.int("total_votes") == 1)
            _ = try await timed("join again") { try await b.join(bob, code: "PARTY") }
            let seen = try a.ok(try await a.current(ann), "current")
            #expect(seen.int("participant_count") == 2)
            #expect(seen.objects("queue")?.contains { $0.string("id") == queued } == true, "\(seen)")
            _ = try await timed("leave") { try await b.leave(bob) }
            #expect(try a.ok(try await a.current(ann), "current").int("participant_count") == 1)
        }
    }

    @Test("a socket on another node than the session's is told of changes made on either node")
    func aSocketOnAnotherNodeFollowsTheSession() async throws {
        try await Self.withTwoNodes { a, b, second in
            let ann = try await a.signIn("Ann")
            let bob = try await b.signIn("Bob")
            let id = try await a.hosting(ann, code: "PARTY")
            _ = try b.ok(try await b.join(bob, code: "PARTY"), "join on the second node")
            let socket = QueueITSocket(base: second.baseURL, sessionId: id.uppercased(), token: bob.token)
            defer { socket.close() }
            _ = try await socket.next("session.updated")
            let song1 = try await a.added(ann, song(1))
            let playing = try await socket.next("now_playing.updated")
            #expect(playing.object("data")?.object("current_song")?.string("id") == song1)
            _ = try await socket.next("queue.updated")
            let song2 = try await b.added(bob, song(2))
            let queue = try await socket.next("queue.updated")
            #expect(queue.object("data")?.objects("queue")?.map { $0.string("id") ?? "" } == [song1, song2])
            _ = try a.ok(try await a.vote(ann, song2, 1), "vote on the first node")
            let votes = try await socket.next("votes.updated")
            #expect(votes.object("data")?.int("total_votes") == 1)
        }
    }

    @Test("a crowd's skip shows as the crowd's on a node that loads the session after it, and a host's skip as not")
    func theCrowdsFlagFollowsTheSessionToAnotherNode() async throws {
        try await Self.withTwoNodes { a, b, _ in
            let ann = try await a.signIn("Ann")
            let bob = try await a.signIn("Bob")
            _ = try await a.hosting(ann, code: "PARTY")
            _ = try a.ok(try await a.join(bob, code: "PARTY"), "join")
            _ = try await a.added(ann, song(1))
            let next = try await a.added(ann, song(2))
            _ = try await a.added(ann, song(3))
            _ = try a.ok(try await a.requestSkip(ann), "ann asks")
            #expect(try a.ok(try await a.requestSkip(bob), "bob asks").bool("skipped") == true)

            // The second node has not seen the session yet: Cat's join there reads it from the store.
            let cat = try await b.signIn("Cat")
            let joined = try b.ok(try await b.join(cat, code: "PARTY"), "cat joins on the second node")
            #expect(joined.object("current_song")?.string("id") == next, "\(joined)")
            #expect(joined.bool("last_skip_was_crowdsourced") == true, "\(joined)")

            _ = try a.ok(try await a.control(ann, ["skip_current_track": true]), "host skips")
            var seen: JSONObject = [:]
            try await eventually("the second node never read the host's skip: \(seen)") {
                seen = try b.ok(try await b.current(cat), "current on the second node")
                return seen.object("current_song")?.string("id") != next
            }
            #expect(seen.bool("last_skip_was_crowdsourced") == false, "\(seen)")
        }
    }

    @Test("a code whose session ended on one node can be chosen on another, and the first node then joins the new session")
    func aChosenCodeFollowsTheDatabaseAcrossNodes() async throws {
        try await Self.withTwoNodes { a, b, _ in
            let ann = try await a.signIn("Ann")
            let bob = try await b.signIn("Bob")
            let cat = try await b.signIn("Cat")
            let dan = try await a.signIn("Dan")
            let ended = try await a.hosting(ann, code: "PARTY")
            // The second node learns the code, and who holds it, by joining.
            let joined = try b.ok(try await b.join(bob, code: "PARTY"), "join on the second node")
            #expect(joined.object("session")?.string("id") == ended)
            _ = try b.ok(try await b.leave(bob), "leave")
            // Empty, with no songs, the session ends with its last member.
            _ = try a.ok(try await a.leave(ann), "leave")

            // The database knows of the end at once; the second node's copy of the session
            // (a replica, which may not have caught up) does not hold the code any more.
            let created = try b.ok(try await b.create(cat, code: "party"), "create on the second node")
            let new = try #require(created.object("session")?.string("id"))
            #expect(new != ended)
            // The first node still remembers the code as the ended session's.
            let found = try a.ok(try await a.join(dan, code: "PARTY"), "join on the first node")
            #expect(found.object("session")?.string("id") == new)
            #expect(found.int("participant_count") == 2)
        }
    }
}
