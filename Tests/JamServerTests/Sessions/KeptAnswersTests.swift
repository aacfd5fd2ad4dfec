import Foundation
import JamProtocol
import JamTestSupport
import Testing

@testable import JamServer

/// A command's answer is kept for its id to be answered again; a device's `ready` answers are
/// kept apart (`AnswerCache.Lane`), so one member's devices cannot push the other members'
/// answers out of the session's last `AnswerCache.limit`.
struct KeptAnswersTests {
    static let ready = ClientCommand.ready(Ready(epoch: 0))

    static func answer(to id: String) -> @Sendable (ServerEnvelope) -> Bool {
        { $0.ack?.id == id || $0.error?.id == id }
    }

    @Test func aMembersReadyFramesDoNotPushTheHostsSkipOut() async throws {
        // No budgets: the frames must all be applied, as they would be over a few minutes.
        try await TestServer.with(configure: { $0.commandLimits = nil }) { server in
            let party = try await Party.start(server, guests: ["Eli"])
            var items: [ItemID] = []
            for n in 1...3 {
                party.host.socket.send(.addToQueue(AddToQueue(track: testTrack(n), nonce: "n\(n)")), id: "add-\(n)")
                let added = try await party.host.socket.next("add \(n)'s answer", where: Self.answer(to: "add-\(n)"))
                items.append(try #require(added.ack?.itemId, "\(added)"))
            }
            party.host.socket.send(.skip(Skip()), id: "skip-1")
            _ = try await party.host.socket.next("the skip's answer", where: Self.answer(to: "skip-1"))
            #expect(try await server.api.view(party.host.token, party.id).nowPlaying?.item.id == items[1])

            let eli = party.guests[0].socket
            let frames = AnswerCache.limit + 100
            for n in 1...frames { eli.send(Self.ready, id: "ready-\(n)") }
            _ = try await eli.next("the last ready's answer", timeout: .seconds(60), where: Self.answer(to: "ready-\(frames)"))

            party.host.socket.send(.skip(Skip()), id: "skip-1")
            let again = try await party.host.socket.next("the resent skip's answer", where: Self.answer(to: "skip-1"))
            #expect(again.ack != nil, "\(again)")
            #expect(try await server.api.view(party.host.token, party.id).nowPlaying?.item.id == items[1], "one song skipped, not two")
        }
    }

    @Test func aReadySentAgainGetsItsKeptAnswer() async throws {
        try await TestServer.with { server in
            let party = try await Party.start(server, guests: ["Eli"])
            let eli = party.guests[0].socket
            eli.send(Self.ready, id: "ready-1")
            let first = try await eli.next("the ready's answer", where: Self.answer(to: "ready-1"))
            // Later, so an answer made afresh would carry another timestamp.
            try await Task.sleep(for: .milliseconds(20))
            eli.send(Self.ready, id: "ready-1")
            let again = try await eli.next("the ready's answer again", where: Self.answer(to: "ready-1"))
            #expect(again == first, "the kept answer, not a new one")
        }
    }
}
