import Foundation
import JamClient
import JamProtocol
import JamTestSupport
import Testing

/// A command whose answer was lost goes again after the reconnect, and the server answers it
/// from what it stored: the SDK must end on the session as it is, not as the answer was.
@Suite struct ResentCommandTests {
    @Test("a vote sent again after its answer was lost shows the member's choice as it is now", arguments: SocketKind.testable)
    func aVoteSentAgainShowsTheChoiceAsItIsNow(_ socket: SocketKind) async throws {
        try await TestServer.with { server in
            let losing = AnswerLosingTransport(inner: socket.transport)
            let (host, created) = try await AppMember.make(server, name: "Hana", socket: socket)
            let (phone, _) = try await AppMember.make(server, name: "Gil", code: created.session.joinCode, transport: losing)
            let laptop = phone.anotherDevice(named: "Gil's laptop", socket: socket)
            try await running([host, phone, laptop]) {
                await host.store.add(song(1))
                await host.store.add(song(2))
                let queued = try await phone.until("song 2 queued") { $0.queue.count == 1 }.queue[0].id
                try await laptop.until("song 2 queued") { $0.queue.count == 1 }

                // The phone's vote reaches the server; its answer is lost with the connection.
                losing.control.arm(#""type":"vote""#)
                async let voted: Void = phone.store.vote(queued, 1)
                // However the test ends, the phone's next connection is let go (declared after
                // the vote, so it runs before the vote is awaited on the way out).
                defer { losing.control.reconnect() }
                try await eventually("the vote's answer lost") { losing.control.hasCut }
                try await laptop.until("the phone's vote, as Gil's") { $0.queue.first?.myVote == 1 }
                // While the phone is away, Gil takes the vote back on the laptop.
                await laptop.store.vote(queued, 0)
                try await host.until("the vote taken back") { $0.queue.first?.item.score == 0 }

                // Back, the phone sends the vote again and is answered from the server's memory.
                losing.control.reconnect()
                await voted
                // A change after the answer, so the phone's store has read every frame before it.
                await host.store.add(song(3))
                let shown = try await phone.until("song 3, queued after the vote's answer") { $0.queue.contains { $0.item.track.id == "song-3" } }
                let item = try #require(shown.queue.first { $0.id == queued })
                #expect(item.myVote == 0, "the phone shows the vote as taken back, not as its answer was")
                // Applied once: a second application would have counted it again.
                #expect(item.item.score == 0)
                #expect(await laptop.store.current.queue.first { $0.id == queued }?.myVote == 0)
            }
        }
    }
}
