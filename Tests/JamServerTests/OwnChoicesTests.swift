import Foundation
import JamClient
import JamProtocol
import JamTestSupport
import Testing

/// A member's own votes and skip request reach their other devices (`myChoices`): the
/// broadcasts say how many voted or asked, not who.
@Suite struct OwnChoicesTests {
    @Test func aVoteOrSkipRequestFromOneDeviceShowsOnTheMembersOtherDevices() async throws {
        try await TestServer.with { server in
            let (party, laptop, queued, epoch) = try await Self.eliOnTwoDevices(server)
            let eli = party.guests[0]

            // Eli votes on the phone: the laptop learns it is Eli's vote, the phone has its answer.
            eli.socket.send(.vote(Vote(itemId: queued, value: 1)), id: "v1")
            let voted = try await laptop.next(.myChoices)
            #expect(voted.myChoices == MyChoices(myVotes: [queued.rawValue: 1], mySkipRequest: false))
            #expect(await laptop.received.last { $0.event.type == .votesUpdate }?.seq == voted.seq, "after the score, with its seq")

            // Eli asks to skip on the laptop: the phone learns it, the vote stays.
            laptop.send(.requestSkip(Skip(epoch: epoch)), id: "s1")
            let asked = try await eli.socket.next(.myChoices)
            #expect(asked.myChoices == MyChoices(myVotes: [queued.rawValue: 1], mySkipRequest: true))
            try await laptop.next("ack s1") { $0.ack?.id == "s1" }

            // Over REST there is no socket with the answer: both devices learn the withdrawal.
            let withdrawn = try await server.api.request("DELETE", "/api/v1/sessions/\(party.id)/queue/\(queued)/vote", token: eli.token)
            #expect(withdrawn.status == 200)
            for device in [eli.socket, laptop] {
                let choices = try await device.next("the withdrawal") { $0.myChoices?.myVotes.isEmpty == true }
                #expect(choices.myChoices?.mySkipRequest == true)
            }

            // A member with one device gets no such frame: their answer says it all.
            party.host.socket.send(.vote(Vote(itemId: queued, value: -1)), id: "v2")
            try await party.host.socket.next("ack v2") { $0.ack?.id == "v2" }
            try await laptop.next("the host's vote") { $0.votesUpdate?.score == -1 }
            #expect(await party.host.socket.received.allSatisfy { $0.event.type != .myChoices })
            // The phone heard of the laptop's request and the withdrawal, not of its own vote.
            #expect(await eli.socket.received.compactMap(\.myChoices) == [
                MyChoices(myVotes: [queued.rawValue: 1], mySkipRequest: true), MyChoices(myVotes: [:], mySkipRequest: true),
            ])

            // Each device's mirror, fed what its socket received, shows Eli's choices.
            for device in [eli.socket, laptop] {
                var mirror = SessionMirror(me: eli.id)
                for envelope in await device.received { _ = mirror.apply(envelope) }
                #expect(mirror.view?.myVotes == [:])
                #expect(mirror.view?.skipRequests.mine == true)
            }
            await laptop.close()
            await party.close()
        }
    }

    @Test func aDeviceThatResumesLearnsTheChoicesMadeWhileItWasAway() async throws {
        try await TestServer.with { server in
            let party = try await Party.start(server, guests: ["Eli"])
            let eli = party.guests[0]
            _ = try await server.api.add(party.host.token, party.id, testTrack(1))
            let queued = try await server.api.add(party.host.token, party.id, testTrack(2)).decode(QueueItem.self).id
            try await eli.socket.next("item 2 queued") { $0.queueItemAdded?.item.id == queued }
            let laptop = TestSocket(server: server, session: party.id, token: eli.token)
            try await laptop.next(.stateSync)
            let seen = await laptop.received
            let lastSeen = try #require(seen.map(\.seq).max())
            await laptop.close()

            // While the laptop is away, Eli votes on the phone.
            eli.socket.send(.vote(Vote(itemId: queued, value: 1)), id: "v1")
            try await eli.socket.next("ack v1") { $0.ack?.id == "v1" }

            // The laptop resumes: the missed frames, then Eli's choices as they are now.
            let back = TestSocket(server: server, session: party.id, token: eli.token, lastSeq: lastSeen)
            let resumed = try await back.next(.myChoices)
            #expect(resumed.myChoices == MyChoices(myVotes: [queued.rawValue: 1], mySkipRequest: false))
            let before = await back.received.prefix { $0.event.type != .myChoices }
            #expect(before.allSatisfy { $0.event.type != .stateSync }, "a resume, not the whole state")
            #expect(before.contains { $0.votesUpdate?.itemId == queued })

            // `hello {lastSeq}` on an open socket resumes the same way.
            let count = await back.received.count
            back.send(.hello(Hello(lastSeq: lastSeen)), id: "h1")
            try await back.next("ack h1") { $0.ack?.id == "h1" }
            let again = await back.received.dropFirst(count)
            #expect(again.contains { $0.myChoices == MyChoices(myVotes: [queued.rawValue: 1], mySkipRequest: false) })

            // The laptop's mirror, fed what both of its sockets received, shows the vote.
            var mirror = SessionMirror(me: eli.id)
            for envelope in seen { _ = mirror.apply(envelope) }
            #expect(mirror.view?.myVotes.isEmpty == true)
            for envelope in await back.received { _ = mirror.apply(envelope) }
            #expect(mirror.view?.myVotes == [queued.rawValue: 1])
            await back.close()
            await party.close()
        }
    }

    @Test func aVoteSentAgainIsAnsweredWithTheMembersChoicesAsTheyAreNow() async throws {
        try await TestServer.with { server in
            let (party, laptop, queued, epoch) = try await Self.eliOnTwoDevices(server)
            let eli = party.guests[0]

            // The phone votes and asks to skip; the laptop then takes both back.
            eli.socket.send(.vote(Vote(itemId: queued, value: 1)), id: "v1")
            try await eli.socket.next("ack v1") { $0.ack?.id == "v1" }
            eli.socket.send(.requestSkip(Skip(epoch: epoch)), id: "s1")
            try await eli.socket.next("ack s1") { $0.ack?.id == "s1" }
            laptop.send(.vote(Vote(itemId: queued, value: 0)), id: "v2")
            laptop.send(.withdrawSkipRequest(Skip(epoch: epoch)), id: "w1")
            try await eli.socket.next("the laptop's withdrawals") { $0.myChoices == MyChoices(myVotes: [:], mySkipRequest: false) }

            // The phone, unsure its commands arrived, sends them again: each gets its stored
            // answer, then Eli's choices as they are now, which the answer must not overrule.
            let count = await eli.socket.received.count
            eli.socket.send(.vote(Vote(itemId: queued, value: 1)), id: "v1")
            eli.socket.send(.requestSkip(Skip(epoch: epoch)), id: "s1")
            try await eli.socket.next("the second ack s1") { $0.ack?.id == "s1" }
            let now = MyChoices(myVotes: [:], mySkipRequest: false)
            try await eli.socket.next("the choices after it") { $0.myChoices == now }
            let answers = await eli.socket.received.dropFirst(count).filter { $0.ack != nil || $0.myChoices != nil }
            #expect(answers.map { $0.ack?.id ?? "choices" } == ["v1", "choices", "s1", "choices"])
            #expect(answers.allSatisfy { $0.myChoices == nil || $0.myChoices == now })
            #expect(answers.first?.ack?.score == 1, "the stored answer, as it was")
            #expect(await eli.socket.received.dropFirst(count).allSatisfy { $0.votesUpdate == nil && $0.skipRequests == nil }, "applied once")

            // The phone's mirror and its answers, in frame order, end on Eli's choices now.
            var mirror = SessionMirror(me: eli.id)
            for envelope in await eli.socket.received.prefix(count) { _ = mirror.apply(envelope) }
            mirror.setMyVote(queued, 1)
            for envelope in answers where envelope.myChoices != nil { _ = mirror.apply(envelope) }
            #expect(mirror.view?.myVotes == [:])
            #expect(mirror.view?.skipRequests.mine == false)
            await laptop.close()
            await party.close()
        }
    }

    /// Eli on the party's socket (the phone) and a second socket (the laptop), song 1
    /// playing (its epoch) and song 2 queued.
    private static func eliOnTwoDevices(_ server: TestServer) async throws -> (Party, TestSocket, ItemID, Int64) {
        let party = try await Party.start(server, guests: ["Eli"])
        let eli = party.guests[0]
        let laptop = TestSocket(server: server, session: party.id, token: eli.token)
        try await laptop.next(.stateSync)
        _ = try await server.api.add(party.host.token, party.id, testTrack(1))
        let queued = try await server.api.add(party.host.token, party.id, testTrack(2)).decode(QueueItem.self).id
        let epoch = try #require(try await eli.socket.next(.playPrepare).playPrepare?.epoch)
        return (party, laptop, queued, epoch)
    }
}
