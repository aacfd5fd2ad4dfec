import Foundation
import JamTestSupport
import Testing

@Suite("QueueIT: the realtime socket")
struct RealtimeTests {
    /// Ann hosts "PARTY" with her socket open, and Bob has joined; the socket has been told
    /// of both (`hello` is its first message).
    private static func annHostsAndBobJoins(_ api: QueueITAPI, _ server: TestServer) async throws
        -> (ann: Guest, bob: Guest, id: String, socket: QueueITSocket, hello: JSONObject)
    {
        let ann = try await api.signIn("Ann")
        let bob = try await api.signIn("Bob")
        let id = try await api.hosting(ann, code: "PARTY")
        // The app's socket client puts the session id in upper case and the token in the header.
        let socket = QueueITSocket(base: server.baseURL, sessionId: id.uppercased(), token: ann.token)
        do {
            let hello = try await socket.next("session.updated")
            _ = try api.ok(try await api.join(bob, code: "PARTY"), "join")
            _ = try await socket.next("session.updated")
            return (ann, bob, id, socket, hello)
        } catch {
            socket.close()
            throw error
        }
    }

    @Test("a member's socket is told of queue, vote, now-playing and session changes")
    func eventsFollowTheSession() async throws {
        try await QueueITServer.with { api, server in
            let (ann, bob, id, socket, hello) = try await Self.annHostsAndBobJoins(api, server)
            defer { socket.close() }
            #expect(hello.string("session_id") == id)

            let first = try await api.added(bob, song(1))
            let playing = try await socket.next("now_playing.updated")
            #expect(playing.object("data")?.object("current_song")?.string("id") == first)
            let queue = try await socket.next("queue.updated")
            #expect(queue.object("data")?.objects("queue")?.map { $0.string("id") ?? "" } == [first])

            let second = try await api.added(bob, song(2))
            let grown = try await socket.next("queue.updated")
            #expect(grown.object("data")?.objects("queue")?.map { $0.string("id") ?? "" } == [first, second])

            _ = try api.ok(try await api.vote(ann, second, 1), "vote")
            let votes = try await socket.next("votes.updated")
            #expect(votes.string("session_id") == id)
            #expect(votes.object("data")?.string("queued_song_id") == second)
            #expect(votes.object("data")?.int("total_votes") == 1)

            _ = try api.ok(try await api.control(ann, ["pause_playback": true]), "pause")
            let paused = try await socket.next("now_playing.updated")
            #expect(paused.object("data")?.object("current_song")?.string("id") == first)

            _ = try api.ok(try await api.songFinished(ann), "finished")
            let next = try await socket.next("now_playing.updated")
            #expect(next.object("data")?.object("current_song")?.string("id") == second)
            _ = try api.ok(try await api.songFinished(ann), "finished again")
            let stopped = try await socket.next("now_playing.updated")
            #expect(stopped.object("data")?.isNull("current_song") == true, "\(stopped)")
        }
    }

    @Test("a vote that moves a song is told as the queue in its new order, then the song's votes")
    func aVoteThatMovesASongSendsTheQueue() async throws {
        try await QueueITServer.with { api, server in
            let (ann, bob, _, socket, _) = try await Self.annHostsAndBobJoins(api, server)
            defer { socket.close() }
            let first = try await api.added(bob, song(1))
            let second = try await api.added(bob, song(2))
            let third = try await api.added(bob, song(3))
            func queued(_ update: JSONObject) -> [String] { update.object("data")?.objects("queue")?.map { $0.string("id") ?? "" } ?? [] }
            // The app's queue lists the playing song first.
            while try queued(await socket.next("queue.updated")) != [first, second, third] {}

            _ = try api.ok(try await api.vote(ann, third, 1), "vote")
            #expect(queued(try await socket.next("queue.updated")) == [first, third, second])
            let votes = try await socket.next("votes.updated")
            #expect(votes.object("data")?.string("queued_song_id") == third)
            #expect(votes.object("data")?.int("total_votes") == 1)
        }
    }

    @Test("a socket without a token, or for a session the user is not in, is told why and closed")
    func strangersAreRefused() async throws {
        try await QueueITServer.with { api, server in
            let ann = try await api.signIn("Ann")
            let cat = try await api.signIn("Cat")
            let id = try await api.hosting(ann, code: "PARTY")
            for (token, words, code) in [(nil as String?, "Missing Authorization header", "4401"), (cat.token, "join the session", "4403")] {
                let socket = QueueITSocket(base: server.baseURL, sessionId: id, token: token)
                defer { socket.close() }
                let error = try await socket.next("error")
                #expect(error.object("data")?.string("message")?.contains(words) == true, "\(error)")
                let closed = try await socket.closed()
                #expect(closed.contains(code), "\(closed)")
            }
        }
    }

    @Test("a message sent on the socket is answered with an error and changes nothing")
    func theSocketOnlySends() async throws {
        try await QueueITServer.with { api, server in
            let ann = try await api.signIn("Ann")
            let id = try await api.hosting(ann, code: "PARTY")
            let socket = QueueITSocket(base: server.baseURL, sessionId: id, token: ann.token)
            defer { socket.close() }
            _ = try await socket.next("session.updated")
            try await socket.send(#"{"event":"queue.updated"}"#)
            let error = try await socket.next("error")
            #expect(error.object("data")?.string("message")?.contains("REST") == true, "\(error)")
        }
    }
}
