import JamTestSupport
import Foundation
import JamClient
import JamProtocol
import Testing

/// Several real clients against a real server over loopback sockets.
@Suite struct EndToEndTests {
    @Test func joinerSeesHostNameAndHostSeesJoiner() async throws {
        try await TestServer.with { server in
            let host = try await server.api.guest("Dana")
            let created = try await server.api.create(host.token, CreateSessionRequest(name: "Friday"))
            #expect(created.session.joinCode.count == 6)
            let hostSocket = TestSocket(server: server, session: created.session.id, token: host.token)
            try await hostSocket.next(.stateSync)

            let guest = try await server.api.guest("Eli")
            let joined = try await server.api.join(guest.token, code: created.session.joinCode.lowercased())
            #expect(joined.session.hostDisplayName == "Dana")
            #expect(joined.session.name == "Friday")
            #expect(joined.members.map(\.displayName) == ["Dana", "Eli"])

            let joinedEvent = try await hostSocket.next(.memberJoined)
            #expect(joinedEvent.memberJoined?.displayName == "Eli")
            #expect(joinedEvent.memberJoined?.role == .member)
            await hostSocket.close()
        }
    }

    @Test func sameNonceTwiceIsOneItem() async throws {
        try await TestServer.with { server in
            let party = try await Party.start(server, guests: ["Eli"])
            let eli = party.guests[0]
            eli.socket.send(.addToQueue(AddToQueue(track: testTrack(1), nonce: "n-1")), id: "a1")
            eli.socket.send(.addToQueue(AddToQueue(track: testTrack(1), nonce: "n-1")), id: "a2")
            let first = try await eli.socket.next("ack a1") { $0.ack?.id == "a1" }
            let second = try await eli.socket.next("ack a2") { $0.ack?.id == "a2" }
            #expect(first.ack?.itemId != nil)
            #expect(first.ack?.itemId == second.ack?.itemId)
            // REST retry with the same nonce answers with the same item too.
            let rest = try await server.api.add(eli.token, party.id, testTrack(1), nonce: "n-1")
            #expect(rest.status == 200)
            let view = try await server.api.view(party.host.token, party.id)
            let items = view.queue + [view.nowPlaying?.item].compactMap { $0 }
            #expect(items.filter { $0.track.id == "track-1" }.count == 1)
            // Exactly one playPrepare for it reached the host: a second one for the repeated
            // socket add would come before the item's commit, so wait for that commit to count.
            let prepare = try await party.host.socket.next("track 1 prepared") { $0.playPrepare?.item.track.id == "track-1" }
            let itemId = prepare.playPrepare?.item.id
            try await party.host.socket.next("track 1 committed") { $0.playCommit?.itemId == itemId }
            let prepares = await party.host.socket.received.filter { $0.playPrepare?.item.track.id == "track-1" }
            #expect(prepares.count == 1)
            await party.close()
        }
    }

    @Test func votesReorderTheQueueForEverybody() async throws {
        try await TestServer.with { server in
            let party = try await Party.start(server, guests: ["Eli", "Fay"])
            var ids: [ItemID] = []
            for n in 1...4 {
                let response = try await server.api.add(party.host.token, party.id, testTrack(n))
                ids.append(try response.decode(QueueItem.self).id)
            }
            // Item 1 plays; 2, 3, 4 wait in that order. Two up-votes lift item 4 to the top.
            let target = ids[3]
            party.guests[0].socket.send(.vote(Vote(itemId: target, value: 1)), id: "v1")
            try await party.guests[0].socket.next("ack v1") { $0.ack?.id == "v1" }
            let moved = try await party.guests[1].socket.next("item 4 moved to the top") { $0.votesUpdate?.itemId == target }
            #expect(moved.votesUpdate == VotesUpdate(itemId: target, score: 1, reason: "1 vote", movedTo: 0))
            try await party.host.socket.next("host sees the move") { $0.votesUpdate?.itemId == target }
            // Every member's mirror, fed what its socket received, shows the new order.
            for member in [party.host, party.guests[1]] {
                let shown = try await Self.shownQueue(member.socket, as: member.id)
                #expect(shown.map(\.id) == [ids[3], ids[1], ids[2]])
                #expect(shown.first?.reason == "1 vote")
            }
            // The voter's own vote shows in their view; the others' do not.
            let eliView = try await server.api.view(party.guests[0].token, party.id)
            let fayView = try await server.api.view(party.guests[1].token, party.id)
            #expect(eliView.myVotes[target.rawValue] == 1)
            #expect(fayView.myVotes[target.rawValue] == nil)
            // A down-vote from Fay brings it back to a tie; it held score 0 for less time, so it goes last.
            let down = try await server.api.send("PUT", "/api/v1/sessions/\(party.id)/queue/\(target)/vote", token: party.guests[1].token, json: VoteRequest(value: -1))
            #expect(down.status == 200)
            #expect(try down.decode(VoteResponse.self).score == 0)
            let back = try await party.host.socket.next("item 4 moved back") { $0.votesUpdate?.itemId == target && $0.votesUpdate?.score == 0 }
            #expect(back.votesUpdate?.movedTo == 2)
            #expect(try await Self.shownQueue(party.host.socket, as: party.host.id).map(\.id) == [ids[1], ids[2], ids[3]])
            let afterVote = await party.host.socket.received.filter { $0.seq >= moved.seq }
            #expect(!afterVote.contains { $0.event.type == .queueUpdate }, "the votes send no queue")
            await party.close()
        }
    }

    @Test func skipRequestsPastTheThresholdSkip() async throws {
        try await TestServer.with { server in
            let party = try await Party.start(server, guests: ["Eli", "Fay", "Gus"])
            _ = try await server.api.add(party.host.token, party.id, testTrack(1))
            _ = try await server.api.add(party.host.token, party.id, testTrack(2))
            let firstEpoch = try #require(try await party.host.socket.next(.playPrepare).playPrepare?.epoch)
            // Four connected members, threshold 0.5: strictly more than two requests are needed.
            party.guests[0].socket.send(.requestSkip(Skip()), id: "s1")
            let one = try await party.host.socket.next("one request") { $0.skipRequests?.count == 1 }
            #expect(one.skipRequests?.needed == 3)
            party.guests[1].socket.send(.requestSkip(Skip()), id: "s2")
            try await party.host.socket.next("two requests") { $0.skipRequests?.count == 2 }
            // Asking twice counts once.
            party.guests[1].socket.send(.requestSkip(Skip()), id: "s2b")
            try await party.guests[1].socket.next("ack s2b") { $0.ack?.id == "s2b" }
            let view = try await server.api.view(party.host.token, party.id)
            #expect(view.skipRequests.count == 2)
            #expect(view.nowPlaying?.item.track.id == "track-1")
            party.guests[2].socket.send(.requestSkip(Skip()), id: "s3")
            let next = try await party.host.socket.next("next track") { $0.playPrepare?.item.track.id == "track-2" }
            #expect(next.playPrepare?.epoch == firstEpoch + 1)
            #expect(next.playPrepare?.previous?.outcome == .skipped)
            // Requests reset with the new track.
            let after = try await server.api.view(party.host.token, party.id)
            #expect(after.skipRequests.count == 0)
            await party.close()
        }
    }

    @Test func skipRequestsTakenBackStopCountingOverTheSocketAndREST() async throws {
        try await TestServer.with { server in
            let party = try await Party.start(server, guests: ["Eli", "Fay", "Gus"])
            let path = "/api/v1/sessions/\(party.id)/skip-requests"
            // Nothing plays: nothing to take back.
            let early = try await server.api.request("DELETE", path, token: party.guests[0].token)
            #expect(early.status == 409, "\(early.text)")
            _ = try await server.api.add(party.host.token, party.id, testTrack(1))
            _ = try await server.api.add(party.host.token, party.id, testTrack(2))
            let epoch = try #require(try await party.host.socket.next(.playPrepare).playPrepare?.epoch)
            party.guests[0].socket.send(.requestSkip(Skip(epoch: epoch)), id: "r1")
            party.guests[1].socket.send(.requestSkip(Skip(epoch: epoch)), id: "r2")
            try await party.host.socket.next("two requests") { $0.skipRequests?.count == 2 }
            // Eli takes his back on the socket: everyone hears one request.
            party.guests[0].socket.send(.withdrawSkipRequest(Skip(epoch: epoch)), id: "w1")
            try await party.guests[0].socket.next("ack w1") { $0.ack?.id == "w1" }
            let one = try await party.host.socket.next("one request") { $0.skipRequests != nil }
            #expect(one.skipRequests == SkipRequestsUpdate(count: 1, needed: 3))
            // Fay takes hers back over REST, under a key; the retry is a replay.
            let withdrawn = try await server.api.request("DELETE", path, token: party.guests[1].token, headers: ["Idempotency-Key": "w-1"])
            #expect(withdrawn.status == 200, "\(withdrawn.text)")
            #expect(try withdrawn.decode(SkipRequestsView.self) == SkipRequestsView(count: 0, needed: 3, mine: false))
            try await party.host.socket.next("no request") { $0.skipRequests?.count == 0 }
            let replayed = try await server.api.request("DELETE", path, token: party.guests[1].token, headers: ["Idempotency-Key": "w-1"])
            #expect(replayed.headers["idempotent-replayed"] == "true")
            // Taking back a request not made changes nothing.
            let none = try await server.api.request("DELETE", path, token: party.guests[2].token)
            #expect(try none.decode(SkipRequestsView.self) == SkipRequestsView(count: 0, needed: 3, mine: false))
            // Three requests would have skipped; with two taken back, Gus's is the only one.
            party.guests[2].socket.send(.requestSkip(Skip(epoch: epoch)), id: "r3")
            try await party.guests[2].socket.next("ack r3") { $0.ack?.id == "r3" }
            let view = try await server.api.view(party.host.token, party.id)
            #expect(view.nowPlaying?.item.track.id == "track-1")
            #expect(view.skipRequests.count == 1)
            await party.close()
        }
    }

    @Test func hostSkipStartsTheNextItemForEveryone() async throws {
        try await TestServer.with { server in
            let party = try await Party.start(server, guests: ["Eli"])
            _ = try await server.api.add(party.host.token, party.id, testTrack(1))
            _ = try await server.api.add(party.guests[0].token, party.id, testTrack(2))
            try await party.guests[0].socket.next("track 1 prepared") { $0.playPrepare?.item.track.id == "track-1" }
            let response = try await server.api.request("POST", "/api/v1/sessions/\(party.id)/skip", token: party.host.token)
            #expect(response.status == 200)
            let view = try response.decode(SessionView.self)
            #expect(view.nowPlaying?.item.track.id == "track-2")
            #expect(view.history.last?.item.track.id == "track-1")
            #expect(view.history.last?.outcome == .skipped)
            let prepare = try await party.guests[0].socket.next("track 2 prepared") { $0.playPrepare?.item.track.id == "track-2" }
            #expect(prepare.playPrepare?.startAt ?? 0 > prepare.timestamp)
            try await party.guests[0].socket.next("track 2 committed") { $0.playCommit?.itemId == view.nowPlaying?.item.id }
            await party.close()
        }
    }

    @Test func hostLeavingPassesHostToTheLongestPresentMember() async throws {
        try await TestServer.with { server in
            let party = try await Party.start(server, guests: ["Eli", "Fay"])
            let eli = party.guests[0], fay = party.guests[1]
            let response = try await server.api.request("POST", "/api/v1/sessions/\(party.id)/leave", token: party.host.token)
            #expect(response.status == 204)
            let left = try await fay.socket.next(.memberLeft)
            #expect(left.memberLeft?.userId == party.host.id)
            #expect(left.memberLeft?.hostId == eli.id)
            let view = try await server.api.view(fay.token, party.id)
            #expect(view.session.hostId == eli.id)
            #expect(view.session.hostDisplayName == "Eli")
            #expect(view.members.first { $0.userId == eli.id }?.role == .host)
            // The old host's socket is closed; the new host can use host controls.
            let close = try await party.host.socket.closedByServer()
            #expect(close?.closeCode == .normalClosure)
            let lock = try await server.api.send("PATCH", "/api/v1/sessions/\(party.id)", token: eli.token, json: UpdateSessionRequest(settings: SettingsPatch(locked: true)))
            #expect(lock.status == 200)
            await party.close()
        }
    }

    @Test func resumeWithLastSeqReplaysExactlyTheMissedEvents() async throws {
        try await TestServer.with { server in
            let party = try await Party.start(server, guests: ["Eli"])
            _ = try await server.api.add(party.host.token, party.id, testTrack(1))
            try await party.guests[0].socket.next(.playPrepare)
            let lastSeen = try #require(await party.guests[0].socket.received.map(\.seq).max())
            await party.guests[0].socket.close()
            try await party.host.socket.next("Eli disconnected") {
                if case .memberUpdated(let member) = $0.event { return member.userId == party.guests[0].id && !member.connected }
                return false
            }
            _ = try await server.api.add(party.host.token, party.id, testTrack(2))
            _ = try await server.api.add(party.host.token, party.id, testTrack(3))

            let back = TestSocket(server: server, session: party.id, token: party.guests[0].token, lastSeq: lastSeen)
            // Its own reconnection is the first event after the missed ones.
            let reconnected: @Sendable (ServerEnvelope) -> Bool = {
                if case .memberUpdated(let member) = $0.event { return member.userId == party.guests[0].id && member.connected }
                return false
            }
            let ownReconnection = try await back.next("own reconnection", where: reconnected)
            // What Eli missed is what the host saw between Eli's last event and Eli's return, read once the
            // host has seen the return too: events the server emits on its own (a commit, a timer) may
            // land in that window at any moment, so a fixed wait cannot say where it ends.
            let hostReturn = try await party.host.socket.next("Eli reconnected", where: reconnected)
            #expect(hostReturn.seq == ownReconnection.seq)
            let hostSeqs = await party.host.socket.received.filter { $0.seq > lastSeen && $0.seq < hostReturn.seq && $0.event.type != .pong && $0.event.type != .ack }.map(\.seq)
            let missed = Set(hostSeqs)
            #expect(missed.count >= 2, "the two adds made while Eli was away")
            // Up to its own reconnection: what follows it is live, not replayed.
            let replayed = await back.received.prefix { $0.seq < ownReconnection.seq } + [ownReconnection]
            #expect(replayed.allSatisfy { $0.event.type != .stateSync })
            let replayedSeqs = replayed.map(\.seq)
            #expect(Array(replayedSeqs.dropLast()) == missed.sorted())
            #expect(replayedSeqs == replayedSeqs.sorted())
            #expect(Set(replayedSeqs).count == replayedSeqs.count)

            // `hello {lastSeq}` on an open socket replays the same way.
            let before = await back.received.count
            back.send(.hello(Hello(lastSeq: lastSeen)), id: "h1")
            try await back.next("ack h1") { $0.ack?.id == "h1" }
            // Live events may arrive around the replay; the missed ones come again, in order.
            let again = await back.received.dropFirst(before).filter { $0.event.type != .ack && $0.seq < ownReconnection.seq }.map(\.seq)
            #expect(again == missed.sorted())
            await back.close()
            await party.close()
        }
    }

    @Test func resumeFromBeyondTheLogGetsAStateSync() async throws {
        try await TestServer.with(configure: { $0.replayLogLimit = 4 }) { server in
            let party = try await Party.start(server, guests: [])
            for n in 1...6 { _ = try await server.api.add(party.host.token, party.id, testTrack(n)) }
            let late = TestSocket(server: server, session: party.id, token: party.host.token, lastSeq: 1)
            let sync = try await late.next(.stateSync)
            #expect(sync.stateSync?.queue.count == 5)
            await late.close()
            await party.close()
        }
    }

    @Test func autoAdvanceStartsTheNextItemExactlyAtTheEnd() async throws {
        // A long lead keeps the first item from ending before the second add lands, however
        // slow the machine is; otherwise the second would start afresh instead of gaplessly.
        try await TestServer.with(configure: { $0.timing.minLeadMs = 3000 }) { server in
            let party = try await Party.start(server, guests: ["Eli"])
            _ = try await server.api.add(party.host.token, party.id, testTrack(1, durationMs: 800))
            _ = try await server.api.add(party.host.token, party.id, testTrack(2, durationMs: 600))
            let eli = party.guests[0].socket
            let firstCommit = try #require(try await eli.next("track 1 committed", timeout: .seconds(10)) { $0.playCommit != nil }.playCommit)
            let secondPrepare = try #require(try await eli.next("track 2 prepared") { $0.playPrepare?.item.track.id == "track-2" }.playPrepare)
            // Gapless: the next item starts exactly where the first one ends.
            #expect(secondPrepare.startAt == firstCommit.startAt + 800)
            #expect(secondPrepare.epoch == firstCommit.epoch + 1)
            let secondCommit = try #require(try await eli.next("track 2 committed", timeout: .seconds(3)) { $0.playCommit?.epoch == secondPrepare.epoch }.playCommit)
            #expect(secondCommit.startAt == secondPrepare.startAt)
            // After the last item ends, playback stops and both items are in the history as played.
            let stopped = try await eli.next(.stopped, timeout: .seconds(3))
            #expect(stopped.timestamp >= secondCommit.startAt + 600)
            // Stamped when the server's timer ran: with every suite running at once that has
            // been a second after the end.
            #expect(stopped.timestamp < secondCommit.startAt + 600 + 2_000)
            let view = try await server.api.view(party.host.token, party.id)
            #expect(view.nowPlaying == nil)
            #expect(view.history.map(\.item.track.id) == ["track-1", "track-2"])
            #expect(view.history.map(\.outcome) == [.played, .played])
            #expect(view.history[0].endedAt == secondCommit.startAt)
            await party.close()
        }
    }

    @Test func readyFromEveryDeviceCommitsBeforeTheDeadline() async throws {
        // A long lead, so a machine busy with other suites still gets both readies in well
        // before the deadline; the commit comes as soon as they are in, not at the deadline.
        try await TestServer.with(configure: { $0.timing.minLeadMs = 5000; $0.timing.maxLeadMs = 6000; $0.timing.commitMarginMs = 100 }) { server in
            let party = try await Party.start(server, guests: ["Eli"])
            _ = try await server.api.add(party.host.token, party.id, testTrack(1))
            let prepare = try #require(try await party.host.socket.next(.playPrepare).playPrepare)
            for person in party.everyone { person.socket.send(.ready(Ready(epoch: prepare.epoch))) }
            let commit = try await party.guests[0].socket.next(.playCommit)
            // Committed well before the deadline (100 ms before the start) because both devices were ready.
            #expect(commit.timestamp < prepare.startAt - 1000)
            #expect(commit.playCommit?.startAt == prepare.startAt)
            await party.close()
        }
    }

    @Test func pingIsAnsweredWithFourTimestamps() async throws {
        try await TestServer.with { server in
            let party = try await Party.start(server, guests: [])
            let sent = Date().timeIntervalSince1970 * 1000
            party.host.socket.send(.ping(Ping(clientSendTime: 12345.5)))
            let pong = try #require(try await party.host.socket.next(.pong).pong)
            let received = Date().timeIntervalSince1970 * 1000
            #expect(pong.clientSendTime == 12345.5)
            #expect(pong.serverReceiveTime <= pong.serverSendTime)
            #expect(pong.serverReceiveTime >= sent - 1 && pong.serverSendTime <= received + 1)
            await party.close()
        }
    }

    @Test func pauseResumeAndSeekCarryTheirServerInstant() async throws {
        try await TestServer.with { server in
            let party = try await Party.start(server, guests: ["Eli"])
            _ = try await server.api.add(party.host.token, party.id, testTrack(1))
            let eli = party.guests[0].socket
            try await eli.next(.playCommit)
            try await Task.sleep(for: .milliseconds(200))
            party.host.socket.send(.pause(Pause()), id: "p")
            let pause = try await eli.next(.pause)
            guard case .pause(let paused) = pause.event else { throw TestFailure("not a pause") }
            #expect(paused.positionMs > 50 && paused.positionMs < 2000)
            party.host.socket.send(.seek(Seek(positionMs: 60_000)), id: "s")
            try await eli.next(.seek)
            party.host.socket.send(.resume(Pause()), id: "r")
            let resume = try await eli.next(.resume)
            guard case .resume(let resumed) = resume.event else { throw TestFailure("not a resume") }
            #expect(resumed.positionMs == 60_000)
            #expect(resumed.atMs > resume.timestamp)
            let view = try await server.api.view(party.host.token, party.id)
            #expect(view.nowPlaying?.state == .playing)
            #expect(view.nowPlaying?.anchorMs == resumed.atMs)
            await party.close()
        }
    }

    /// What a client shows as the queue after applying everything `socket` received.
    private static func shownQueue(_ socket: TestSocket, as user: UserID) async throws -> [QueueItem] {
        var mirror = SessionMirror(me: user)
        for envelope in await socket.received { _ = mirror.apply(envelope) }
        return try #require(mirror.view).queue
    }

    /// A track of ~850 bytes: with thirty of them queued in fair ordering, every add or removal
    /// sends a ~30 kB queueUpdate.
    private static func largeTrack(_ name: String) -> Track {
        let filler = String(repeating: "x", count: 280)
        return Track(id: "big-\(name)", name: "\(name) \(filler)", artist: filler, album: filler, durationMs: 200_000)
    }

    /// Fair ordering (where every change to the queue sends all of it) and thirty large items,
    /// acknowledged one by one.
    private static func queueThirtyLargeItems(_ host: TestSocket) async throws {
        host.send(.updateSettings(SettingsPatch(ordering: .fair)), id: "fair")
        try await host.next("ack fair") { $0.ack?.id == "fair" }
        for n in 1...30 {
            host.send(.addToQueue(AddToQueue(track: largeTrack("\(n)"), nonce: "big-\(n)")), id: "add-\(n)")
            try await host.next("ack add-\(n)") { $0.ack?.id == "add-\(n)" }
        }
    }

    /// Round `round` of a flood: eight large items added and removed again, each a ~30 kB
    /// queueUpdate to every member; returns once the round's last command is answered.
    private static func floodRound(_ round: Int, from host: TestSocket) async throws {
        for step in 0..<8 {
            let n = round * 8 + step
            host.send(.addToQueue(AddToQueue(track: largeTrack("flood-\(n)"), nonce: "flood-\(n)")), id: "f\(n)a")
            let added = try await host.next("ack f\(n)a") { $0.ack?.id == "f\(n)a" }
            let item = try #require(added.ack?.itemId)
            host.send(.removeFromQueue(ItemRef(itemId: item)), id: "f\(n)r")
        }
        let last = "f\(round * 8 + 7)r"
        try await host.next("ack \(last)") { $0.ack?.id == last }
    }

    /// Eli joins with two sockets: first one that reads nothing, returned once the server shows
    /// Eli connected (so it is attached), then one that reads.
    private static func eliWithAStalledSocket(_ server: TestServer, _ party: Party) async throws -> (eli: TestSocket, stalled: TestSocket, id: UserID) {
        let auth = try await server.api.guest("Eli")
        _ = try await server.api.join(auth.token, code: party.session.session.joinCode)
        let stalled = TestSocket(server: server, session: party.id, token: auth.token, paused: true)
        try await eventually("the paused socket was never attached") {
            try await server.api.view(party.host.token, party.id).members.first { $0.userId == auth.userId }?.connected == true
        }
        let eli = TestSocket(server: server, session: party.id, token: auth.token)
        try await eli.next(.stateSync)
        return (eli, stalled, auth.userId)
    }

    @Test func aReaderStalledInASessionThatFallsQuietIsClosedAfterTheStallTimeout() async throws {
        // The backlog limit is out of reach: only the stall timeout can close this socket, and
        // it runs out after the session has gone quiet.
        // The host sends hundreds of votes a second to flood the reader: no member limits here.
        try await TestServer.with(configure: { $0.outboxLimit = 100_000; $0.stallTimeoutMs = 1_500; $0.commandLimits = nil }) { server in
            let party = try await Party.start(server, guests: [])
            let host = party.host.socket
            try await Self.queueThirtyLargeItems(host)
            let (eli, stalled, _) = try await Self.eliWithAStalledSocket(server, party)
            // ~12 MB of queue updates, more than the kernel buffers between the server and a
            // socket that does not read; then nothing more.
            for round in 0..<25 { try await Self.floodRound(round, from: host) }
            try await Task.sleep(for: .seconds(4))
            // Closed by the server (without the stall timeout it never is), with 4429 when its
            // close frame got through before the server gave up on it 5 s later (on a busy
            // machine the eviction may come while the burst still runs).
            let close = try await stalled.closedByServer(timeout: .seconds(10))
            if let close { #expect(close.closeCode == .init(codeNumber: 4429)) }
            await eli.close()
            await party.close()
        }
    }

    @Test func aStalledReaderIsClosedAndOthersAreNotSlowed() async throws {
        // The host sends hundreds of votes a second to flood the reader: no member limits here.
        try await TestServer.with(configure: { $0.outboxLimit = 64; $0.commandLimits = nil }) { server in
            let party = try await Party.start(server, guests: [])
            let host = party.host.socket
            // A queue of 30 large items makes every add and removal a ~30 kB queueUpdate.
            try await Self.queueThirtyLargeItems(host)
            let (eli, stalled, eliID) = try await Self.eliWithAStalledSocket(server, party)
            // Large items added and removed, eight at a time, each round waiting for its acks:
            // the readers keep up, the stalled socket falls ~12 MB behind.
            let started = ContinuousClock.now
            var worstRound = Duration.zero
            for round in 0..<25 {
                let roundStart = ContinuousClock.now
                try await Self.floodRound(round, from: host)
                worstRound = max(worstRound, ContinuousClock.now - roundStart)
            }
            let lastSeq = try #require(await host.received.map(\.seq).max())
            try await eli.next("Eli has every event") { $0.seq == lastSeq }
            // Everyone who reads got all 400 commands' worth of events promptly.
            #expect(ContinuousClock.now - started < .seconds(20))
            #expect(worstRound < .seconds(3))
            let errors = await host.received.compactMap(\.error)
            #expect(errors.isEmpty)
            // The stalled socket was dropped: once it reads again, it finds the close (with 4429
            // when the close frame got through before the server gave up on it; on a machine
            // busy with the whole suite it may not).
            let close = try await stalled.closedByServer(timeout: .seconds(10))
            if let close { #expect(close.closeCode == .init(codeNumber: 4429)) }
            let stalledLast = await stalled.received.map(\.seq).max() ?? 0
            #expect(stalledLast < lastSeq)
            // Eli is still a connected member through the other socket.
            let view = try await server.api.view(party.host.token, party.id)
            #expect(view.members.first { $0.userId == eliID }?.connected == true)
            await eli.close()
            await party.close()
        }
    }

    @Test func endingTheSessionClosesEverySocketAndAnswersGone() async throws {
        try await TestServer.with { server in
            let party = try await Party.start(server, guests: ["Eli"])
            let response = try await server.api.request("DELETE", "/api/v1/sessions/\(party.id)", token: party.host.token)
            #expect(response.status == 204)
            try await party.guests[0].socket.next(.sessionEnded)
            let close = try await party.guests[0].socket.closedByServer()
            #expect(close?.closeCode == .init(codeNumber: 4410))
            let gone = try await server.api.request("GET", "/api/v1/sessions/\(party.id)", token: party.host.token)
            #expect(gone.status == 410)
            #expect(gone.errorCode == .gone)
            let join = try await server.api.send("POST", "/api/v1/sessions/join", token: party.guests[0].token, json: JoinSessionRequest(code: party.session.session.joinCode))
            #expect(join.status == 404)
            await party.close()
        }
    }

    @Test func aRepeatedCommandIdIsAnsweredNotAppliedAgain() async throws {
        try await TestServer.with { server in
            let party = try await Party.start(server, guests: [])
            _ = try await server.api.add(party.host.token, party.id, testTrack(1))
            _ = try await server.api.add(party.host.token, party.id, testTrack(2))
            _ = try await server.api.add(party.host.token, party.id, testTrack(3))
            let socket = party.host.socket
            // The same skip twice, as a client would resend it after a reconnect.
            socket.send(.skip(Skip()), id: "skip-1")
            socket.send(.skip(Skip()), id: "skip-1")
            try await socket.next("first answer") { $0.ack?.id == "skip-1" }
            try await socket.next("second answer") { $0.ack?.id == "skip-1" }
            let view = try await server.api.view(party.host.token, party.id)
            #expect(view.nowPlaying?.item.track.id == "track-2")
            #expect(view.history.count == 1)
            await party.close()
        }
    }
}
