import Foundation
import JamClient
import JamProtocol
import JamTestSupport
import Testing

/// The SDK against a real server in this process.
@Suite struct SessionClientTests {
    @Test("two clients see each other's adds and votes", arguments: SocketKind.testable)
    func twoClientsSeeEachOthersAddsAndVotes(_ socket: SocketKind) async throws {
        try await TestServer.with { server in
            let (host, created) = try await AppMember.make(server, name: "Hana", socket: socket)
            let (guest, _) = try await AppMember.make(server, name: "Gil", code: created.session.joinCode, socket: socket)
            try await running([host, guest]) {
                try await host.until("sees Gil") { $0.members.contains { $0.displayName == "Gil" && $0.connected } }
                await host.store.add(song(1))
                let second = try #require(await guest.store.add(song(2)))
                let third = try #require(await host.store.add(song(3)))
                try await host.until("Gil's song queued") { $0.queue.contains { $0.id == second } }
                await guest.store.vote(third, 1)
                let seen = try await host.until("Gil's vote moved song 3 up") { $0.queue.first?.id == third }
                #expect(seen.queue.first?.item.score == 1)
                #expect(seen.queue.first?.myVote == 0)
                let guestView = try await guest.until("own vote shown") { $0.queue.first { $0.id == third }?.myVote == 1 }
                #expect(guestView.nowPlaying?.item.track.id == "song-1")
                // A vote that keeps the order (a tie goes to the score held longer) brings its reason along.
                await guest.store.vote(second, 1)
                let tied = try await host.until("Gil's vote on song 2") { $0.queue.first { $0.id == second }?.item.score == 1 }
                #expect(tied.queue.map(\.id) == [third, second])
                #expect(tied.queue.map(\.item.reason) == ["1 vote", "1 vote"])
            }
        }
    }

    @Test("a vote shows at once and rapid taps collapse", arguments: SocketKind.testable)
    func aVoteShowsAtOnceAndRapidTapsCollapse(_ socket: SocketKind) async throws {
        try await TestServer.with { server in
            let (host, _) = try await AppMember.make(server, name: "Hana", socket: socket)
            try await running([host]) {
                await host.store.add(song(1))
                let item = try #require(await host.store.add(song(2)))
                // Subscribed before the taps, so the recorder cannot miss them.
                let snapshots = await host.store.snapshots()
                let recorder = Task { () -> [StoreSnapshot] in
                    var seen: [StoreSnapshot] = []
                    for await snapshot in snapshots {
                        seen.append(snapshot)
                        if seen.count > 200 { break }
                    }
                    return seen
                }
                // Four taps while the first is on its way: the first goes, then one follow-up with the last wish.
                async let first: Void = host.store.vote(item, 1)
                try await Task.sleep(for: .milliseconds(1))
                await host.store.vote(item, -1)
                await host.store.vote(item, 1)
                await host.store.vote(item, -1)
                await first
                let settled = try await host.until("the last wish stored") { $0.queue.first { $0.id == item }.map { !$0.voteInFlight && $0.myVote == -1 && $0.item.score == -1 } ?? false }
                #expect(settled.lastRejection == nil)
                recorder.cancel()
                let states = await recorder.value.compactMap { $0.queue.first { $0.id == item } }
                // The first tap showed before any answer: in flight, +1 already counted.
                #expect(states.contains { $0.voteInFlight && $0.myVote == 1 && $0.item.score == 1 })
                // Never the server's stale score while a vote was in flight.
                #expect(!states.contains { $0.voteInFlight && $0.item.score != $0.myVote })
                // Never a score beside another score's reason, optimistic or confirmed.
                #expect(states.allSatisfy { $0.item.reason == QueueItem.votesReason(score: $0.item.score) })
                let view = try await host.api.session(host.client.sessionId)
                #expect(view.queue.first { $0.id == item }?.score == -1)
                #expect(view.myVotes[item.rawValue] == -1)
            }
        }
    }

    @Test("taps right after an answer start from the answered score", arguments: SocketKind.testable)
    func tapsRightAfterAnAnswerStartFromTheAnsweredScore(_ socket: SocketKind) async throws {
        try await TestServer.with { server in
            let (host, _) = try await AppMember.make(server, name: "Hana", socket: socket)
            try await running([host]) {
                await host.store.add(song(1))
                let item = try #require(await host.store.add(song(2)))
                // Subscribed before the taps, so the recorder cannot miss them.
                let snapshots = await host.store.snapshots()
                let recorder = Task { () -> [StoreSnapshot] in
                    var seen: [StoreSnapshot] = []
                    for await snapshot in snapshots { seen.append(snapshot) }
                    return seen
                }
                // Each tap goes the moment the last is answered, often before the member's own
                // vote has reached the mirror beside the score it changed.
                for tap in 0..<24 { await host.store.vote(item, tap % 2 == 0 ? 1 : -1) }
                let settled = try await host.until("the last vote shown") { $0.queue.first { $0.id == item }.map { $0.myVote == -1 && $0.item.score == -1 } ?? false }
                #expect(settled.lastRejection == nil)
                recorder.cancel()
                let states = await recorder.value.compactMap { $0.queue.first { $0.id == item } }
                // The only voter: whatever is shown, the score is the member's own vote.
                #expect(states.count > 1, "the recorder saw the taps")
                let mismatched = states.filter { $0.item.score != $0.myVote }
                #expect(mismatched.isEmpty, "\(mismatched.count) of \(states.count) snapshots showed a score beside another vote")
            }
        }
    }

    @Test("a pending add becomes the real item or rolls back with the reason", arguments: SocketKind.testable)
    func aPendingAddBecomesTheRealItemOrRollsBackWithTheReason(_ socket: SocketKind) async throws {
        try await TestServer.with { server in
            let (host, created) = try await AppMember.make(server, name: "Hana", socket: socket)
            let (guest, _) = try await AppMember.make(server, name: "Gil", code: created.session.joinCode, socket: socket)
            try await running([host, guest]) {
                await host.store.add(song(1))
                let item = try #require(await guest.store.add(song(2)))
                let confirmed = try await guest.until("real item") { $0.queue.contains { $0.id == item && !$0.pending } }
                #expect(!confirmed.queue.contains { $0.pending })
                await host.store.perform(.updateSettings(SettingsPatch(locked: true)), as: "lock")
                try await guest.until("locked") { $0.session?.settings.locked == true }
                let refused = await guest.store.add(song(3))
                #expect(refused == nil)
                let after = await guest.store.current
                #expect(after.lastRejection?.code == .locked)
                #expect(after.lastRejection?.action == "add")
                #expect(!after.queue.contains { $0.pending || $0.item.track.id == "song-3" })
            }
        }
    }

    @Test("an optimistic skip hides the item and a refusal brings it back", arguments: SocketKind.testable)
    func anOptimisticSkipHidesTheItemAndARefusalBringsItBack(_ socket: SocketKind) async throws {
        try await TestServer.with { server in
            let (host, created) = try await AppMember.make(server, name: "Hana", socket: socket)
            let (guest, _) = try await AppMember.make(server, name: "Gil", code: created.session.joinCode, socket: socket)
            try await running([host, guest]) {
                await host.store.add(song(1))
                await host.store.add(song(2))
                try await guest.until("song 1 playing") { $0.nowPlaying?.item.track.id == "song-1" }
                // A member may not skip: the item comes back with the reason.
                await guest.store.skip()
                let refused = await guest.store.current
                #expect(refused.nowPlaying?.item.track.id == "song-1")
                #expect(refused.lastRejection?.code == .forbidden)
                #expect(!refused.skipping)
                // The host may: song 2 replaces song 1. Until the answer the app shows a skip
                // on its way, not an idle session.
                let snapshots = await host.store.snapshots()
                let recorder = Task { () -> [StoreSnapshot] in
                    var seen: [StoreSnapshot] = []
                    for await snapshot in snapshots { seen.append(snapshot) }
                    return seen
                }
                await host.store.skip()
                // The new song's events come before the skip's answer: "Skipping…" until that.
                let skipped = try await host.until("song 2 playing, the skip answered") {
                    $0.nowPlaying?.item.track.id == "song-2" && !$0.skipping
                }
                #expect(skipped.history.last?.item.track.id == "song-1")
                #expect(skipped.lastRejection == nil)
                recorder.cancel()
                let seen = await recorder.value
                #expect(seen.contains { $0.nowPlaying == nil && $0.skipping }, "the skip showed as on its way")
                #expect(!seen.contains { $0.nowPlaying == nil && !$0.skipping }, "never idle in between")
            }
        }
    }

    @Test("a skip request stays the member's own once answered, and one that skips the item leaves the next free", arguments: SocketKind.testable)
    func aSkipRequestStaysTheMembersOwnOnceAnswered(_ socket: SocketKind) async throws {
        try await Self.hostAndGuestHearSongOne(socket) { host, guest in
            await guest.store.requestSkip()
            let asked = await guest.store.current
            #expect(asked.skipRequests == SkipRequestsView(count: 1, needed: 2, mine: true), "counted once, and the guest's own")
            try await host.until("the guest's request") { $0.skipRequests == SkipRequestsView(count: 1, needed: 2, mine: false) }
            // The host's request reaches the threshold: song 1 is skipped before it is answered.
            await host.store.requestSkip()
            let next = try await host.until("song 2 playing") { $0.nowPlaying?.item.track.id == "song-2" }
            #expect(next.skipRequests == SkipRequestsView(count: 0, needed: 2, mine: false), "nobody asked to skip song 2")
            #expect(next.lastRejection == nil)
        }
    }

    @Test("a vote and a skip request on one device show as the member's own on their other device", arguments: SocketKind.testable)
    func aVoteAndASkipRequestOnOneDeviceShowOnTheOther(_ socket: SocketKind) async throws {
        try await Self.hostAndGuestHearSongOne(socket) { host, phone in
            let laptop = phone.anotherDevice(named: "Gil's laptop", socket: socket)
            try await running([laptop]) {
                let queued = try #require(await laptop.store.current.queue.first?.id)
                await phone.store.vote(queued, 1)
                let voted = try await laptop.until("the phone's vote shown as Gil's") { $0.queue.first { $0.id == queued }?.myVote == 1 }
                #expect(voted.queue.first { $0.id == queued }?.item.score == 1)
                await laptop.store.requestSkip()
                try await phone.until("the laptop's request shown as Gil's") { $0.skipRequests == SkipRequestsView(count: 1, needed: 2, mine: true) }
                await laptop.store.vote(queued, 0)
                try await phone.until("the vote taken back on the laptop") { $0.queue.first { $0.id == queued }.map { $0.myVote == 0 && $0.item.score == 0 } ?? false }
                let hers = try await host.until("the host sees the count") { $0.skipRequests.count == 1 && $0.queue.first?.item.score == 0 }
                #expect(!hers.skipRequests.mine)
                // The laptop's own request, answered, does not outlast a withdrawal made on the phone.
                await phone.store.withdrawSkipRequest()
                try await laptop.until("the phone's withdrawal shown") { $0.skipRequests == SkipRequestsView(count: 0, needed: 2, mine: false) }
                // Nor does the laptop's own answered vote outlast the phone's next one.
                await laptop.store.vote(queued, 1)
                await phone.store.vote(queued, -1)
                try await laptop.until("the phone's later vote shown") { $0.queue.first { $0.id == queued }.map { $0.myVote == -1 && $0.item.score == -1 } ?? false }
            }
        }
    }

    @Test("a skip request taken back stops counting at once, for the member and then for everyone", arguments: SocketKind.testable)
    func aSkipRequestTakenBackStopsCountingAtOnce(_ socket: SocketKind) async throws {
        try await Self.hostAndGuestHearSongOne(socket) { host, guest in
            await guest.store.requestSkip()
            try await host.until("the guest's request") { $0.skipRequests.count == 1 }
            await guest.store.withdrawSkipRequest()
            let withdrawn = await guest.store.current
            #expect(withdrawn.skipRequests == SkipRequestsView(count: 0, needed: 2, mine: false))
            #expect(withdrawn.lastRejection == nil)
            try await host.until("the request taken back") { $0.skipRequests == SkipRequestsView(count: 0, needed: 2, mine: false) }
            // The host's request alone is one of two: song 1 plays on.
            await host.store.requestSkip()
            try await guest.until("the host's request") { $0.skipRequests == SkipRequestsView(count: 1, needed: 2, mine: false) }
            #expect(await host.store.current.nowPlaying?.item.track.id == "song-1")
        }
    }

    @Test("a skip request taken back before its answer stays taken back while both are answered", arguments: SocketKind.testable)
    func aSkipRequestTakenBackBeforeItsAnswerStaysTakenBack(_ socket: SocketKind) async throws {
        try await Self.hostAndGuestHearSongOne(socket) { host, guest in
            // Subscribed before the taps, so the recorder cannot miss a state.
            let snapshots = await guest.store.snapshots()
            let recorder = Task { () -> [SkipRequestsView] in
                var seen: [SkipRequestsView] = []
                for await snapshot in snapshots {
                    seen.append(snapshot.skipRequests)
                    if seen.count > 200 { break }
                }
                return seen
            }
            // Two taps, the second while the first is on its way. The request shows once the
            // store has handed it to the client, so the withdrawal goes after it, as taps do; a
            // bare sleep let a starved run send the withdrawal first.
            async let asked: Void = guest.store.requestSkip()
            try await guest.until("the request shown") { $0.skipRequests.mine }
            await guest.store.withdrawSkipRequest()
            await asked
            // 30 s: a full run of every suite once starved this wait past the usual 15 s.
            try await host.until("both answered", timeout: .seconds(30)) { $0.skipRequests.count == 0 }
            try await guest.until("taken back", timeout: .seconds(30)) { $0.skipRequests == SkipRequestsView(count: 0, needed: 2, mine: false) }
            recorder.cancel()
            let states = await recorder.value
            // Once the withdrawal showed, the request never showed as the member's again: not
            // when its answer came.
            let asking = try #require(states.firstIndex { $0.mine })
            let withdrawn = try #require(states[asking...].firstIndex { !$0.mine })
            #expect(states[withdrawn...].allSatisfy { !$0.mine }, "\(states)")
        }
    }

    @Test("a skip request taken back on another device while this one was away shows taken back with the whole state", arguments: SocketKind.testable)
    func aSkipRequestTakenBackElsewhereShowsWithTheWholeState(_ socket: SocketKind) async throws {
        // A replay of one frame: the phone, away for several changes, gets the whole state back.
        try await TestServer.with(configure: { $0.replayLogLimit = 1 }) { server in
            let (host, created) = try await AppMember.make(server, name: "Hana", socket: socket)
            // Away long enough (the wait is a seeded share of 2 s) to be seen away by a test
            // starved for a moment on a loaded machine: at 500 ms a full run once missed it.
            let (phone, _) = try await AppMember.make(server, name: "Gil", code: created.session.joinCode, backoff: Backoff(baseMs: 2000, capMs: 2000), socket: socket)
            let laptop = phone.anotherDevice(named: "Gil's laptop", socket: socket)
            try await running([host, phone, laptop]) {
                await host.store.add(song(1))
                await host.store.add(song(2))
                try await phone.until("song 1 playing") { $0.nowPlaying?.item.track.id == "song-1" && $0.skipRequests.needed == 2 }
                await phone.store.requestSkip()
                try await laptop.until("the phone's request") { $0.skipRequests.mine }
                await phone.client.dropConnection()
                try await phone.until("away") { if case .retrying = $0.phase { true } else { false } }
                await laptop.store.withdrawSkipRequest()
                await host.store.add(song(3))
                await host.store.add(song(4))
                try await phone.until("back, with the request taken back") {
                    $0.phase == .connected && $0.queue.count == 3 && $0.skipRequests == SkipRequestsView(count: 0, needed: 2, mine: false)
                }
            }
        }
    }

    /// Hana hosts, Gil joins; song 1 plays and song 2 waits, and Gil sees two requests needed.
    private static func hostAndGuestHearSongOne(
        _ socket: SocketKind, _ body: @Sendable @escaping (AppMember, AppMember) async throws -> Void
    ) async throws {
        try await TestServer.with { server in
            let (host, created) = try await AppMember.make(server, name: "Hana", socket: socket)
            let (guest, _) = try await AppMember.make(server, name: "Gil", code: created.session.joinCode, socket: socket)
            try await running([host, guest]) {
                await host.store.add(song(1))
                await host.store.add(song(2))
                try await guest.until("song 1 playing") { $0.nowPlaying?.item.track.id == "song-1" && $0.skipRequests.needed == 2 }
                try await body(host, guest)
            }
        }
    }

    @Test("a vote made offline is sent on reconnect and rolled back when refused", arguments: SocketKind.testable)
    func aVoteMadeOfflineIsSentOnReconnectAndRolledBackWhenRefused(_ socket: SocketKind) async throws {
        try await TestServer.with { server in
            let (host, created) = try await AppMember.make(server, name: "Hana", socket: socket)
            // Offline long enough to be seen offline by a test starved for a moment (as above).
            let (guest, _) = try await AppMember.make(server, name: "Gil", code: created.session.joinCode, backoff: Backoff(baseMs: 1500, capMs: 1500), socket: socket)
            try await running([host, guest]) {
                await host.store.add(song(1))
                let next = try #require(await host.store.add(song(2)))
                try await guest.until("song 2 queued") { $0.queue.contains { $0.id == next } }
                await guest.client.dropConnection()
                try await guest.until("offline") { if case .retrying = $0.phase { true } else { false } }
                // While Gil is offline, song 2 starts playing: his vote on it can no longer count.
                _ = try await host.api.session(host.client.sessionId)
                await host.store.skip()
                await guest.store.vote(next, 1)
                // The refusal may reach the store before the events it missed do: wait for both.
                let after = try await guest.until("back, caught up and refused") {
                    $0.phase == .connected && $0.lastRejection != nil && $0.nowPlaying?.item.id == next
                }
                #expect(after.lastRejection?.action == "vote")
                #expect(after.lastRejection?.code == .conflict)
                #expect(!after.queue.contains { $0.voteInFlight })
            }
        }
    }

    @Test("reconnecting after a server restart loses and repeats nothing", arguments: SocketKind.testable)
    func reconnectingAfterAServerRestartLosesAndRepeatsNothing(_ socket: SocketKind) async throws {
        let directory = TestServer.makeDataDirectory()
        let port = try LoopbackPort.forRestarts()
        // A first server: set the scene, then it goes away and comes back on the same port.
        let (host, created) = try await TestServer.with(dataDirectory: directory, port: port) { server in
            try await AppMember.make(server, name: "Hana", socket: socket)
        }
        try await TestServer.with(dataDirectory: directory, port: port) { server in
            let (guest, _) = try await AppMember.make(server, name: "Gil", code: created.session.joinCode, socket: socket)
            try await running([host, guest]) {
                await host.store.add(song(1))
                await guest.store.add(song(2))
                try await host.until("both songs") { $0.queue.count == 1 && $0.nowPlaying != nil }
            }
        }
        try await TestServer.with(dataDirectory: directory, port: port) { server in
            let clientRun = Task { try await host.client.run() }
            let storeRun = Task { await host.store.run() }
            defer {
                clientRun.cancel()
                storeRun.cancel()
            }
            let back = try await host.until("back in sync", timeout: .seconds(10)) { $0.phase == .connected && $0.queue.count == 1 }
            let view = try await host.api.session(host.client.sessionId)
            #expect(back.queue.map(\.item.id) == view.queue.map(\.id))
            #expect(back.nowPlaying?.item.id == view.nowPlaying?.item.id)
            // A command after the restart is applied exactly once.
            await host.store.add(song(3))
            let final = try await host.api.session(host.client.sessionId)
            #expect(final.queue.filter { $0.track.id == "song-3" }.count == 1)
            #expect(final.queue.count == 2)
            _ = server
        }
    }

    @Test("leaving ends the run quietly, without coming back to be refused", arguments: SocketKind.testable)
    func leavingEndsTheRunQuietly(_ socket: SocketKind) async throws {
        try await TestServer.with { server in
            let (host, created) = try await AppMember.make(server, name: "Hana", socket: socket)
            let (guest, _) = try await AppMember.make(server, name: "Gil", code: created.session.joinCode, socket: socket)
            let phases = await guest.client.subscribe()
            let recorder = Task { () -> [ConnectionPhase] in
                var seen: [ConnectionPhase] = []
                for await update in phases { if case .phase(let phase) = update { seen.append(phase) } }
                return seen
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await host.client.run() }
                group.addTask { await guest.store.run() }
                let guestRun = Task { try await guest.client.run() }
                try await guest.until("connected") { $0.phase == .connected && $0.session != nil }
                await guest.store.perform(.leave, as: "leave")
                #expect(await guest.store.current.lastRejection == nil)
                // The server closes Gil's socket; the run ends there, as asked.
                try await guestRun.value
                #expect(await guest.client.phase == .idle)
                guestRun.cancel()
                group.cancelAll()
            }
            recorder.cancel()
            let seen = await recorder.value
            #expect(!seen.contains { if case .failed = $0 { true } else { false } }, "\(seen)")
            #expect(!seen.contains { if case .retrying = $0 { true } else { false } }, "\(seen)")
        }
    }

    @Test("a member who left from another device is told they are no member, not that they were removed", arguments: SocketKind.testable)
    func aMemberWhoLeftElsewhereFailsAsNoMember(_ socket: SocketKind) async throws {
        try await TestServer.with { server in
            let (host, created) = try await AppMember.make(server, name: "Hana", socket: socket)
            let (guest, _) = try await AppMember.make(server, name: "Gil", code: created.session.joinCode, socket: socket)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await host.client.run() }
                group.addTask { await guest.store.run() }
                let guestRun = Task { try await guest.client.run() }
                try await guest.until("connected") { $0.phase == .connected && $0.session != nil }
                // Gil's other device leaves: this one's socket closes, and its reconnect is
                // refused with a notMember frame before the 4403 close a host's removal shares.
                try await guest.api.leave(created.session.id)
                let error = await Self.failure { try await guestRun.value }
                #expect(error?.code == .notMember, "\(String(describing: error))")
                if let error { #expect(await guest.client.phase == .failed(error)) }
                group.cancelAll()
            }
        }
    }

    @Test("a member removed while their phone was away is told so on coming back, not that they may join again", arguments: SocketKind.testable)
    func aMemberRemovedWhileAwayFailsAsRemoved(_ socket: SocketKind) async throws {
        try await TestServer.with { server in
            let (host, created) = try await AppMember.make(server, name: "Hana", socket: socket)
            let (guest, _) = try await AppMember.make(server, name: "Gil", code: created.session.joinCode, socket: socket)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await host.client.run() }
                group.addTask { await host.store.run() }
                try await host.until("connected") { $0.phase == .connected && $0.session != nil }
                // Gil's client is not running (his phone asleep) when Hana removes him.
                await host.store.perform(.kick(UserRef(userId: guest.me)), as: "remove")
                #expect(await host.store.current.lastRejection == nil)
                let error = await Self.failure { try await guest.client.run() }
                #expect(error == JamError(.forbidden, "the host removed you from this session"), "\(String(describing: error))")
                group.cancelAll()
            }
        }
    }

    /// The typed error `run` stops with; nil (recorded as an issue) when it ends otherwise.
    static func failure(of run: () async throws -> Void) async -> JamError? {
        do {
            try await run()
            Issue.record("the run should stop with a typed error")
        } catch let error as JamError {
            return error
        } catch {
            Issue.record("the run stopped with \(error), not a JamError")
        }
        return nil
    }

    @Test("an ended session stops the client for good", arguments: SocketKind.testable)
    func anEndedSessionStopsTheClientForGood(_ socket: SocketKind) async throws {
        try await TestServer.with { server in
            let (host, created) = try await AppMember.make(server, name: "Hana", socket: socket)
            let (guest, _) = try await AppMember.make(server, name: "Gil", code: created.session.joinCode, socket: socket)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await host.client.run() }
                group.addTask { await host.store.run() }
                group.addTask { await guest.store.run() }
                try await host.until("connected") { $0.phase == .connected }
                await host.store.perform(.leave, as: "leave")
                // Gil is the only member left; he leaves too, which ends the session.
                do {
                    try await guest.api.leave(created.session.id)
                } catch {
                    Issue.record("leave failed: \(error)")
                }
                let result: Result<Void, any Error>
                do {
                    try await guest.client.run()
                    result = .success(())
                } catch {
                    result = .failure(error)
                }
                guard case .failure(let error as JamError) = result else {
                    Issue.record("the client should stop with a typed error, got \(result)")
                    group.cancelAll()
                    return
                }
                #expect(error.code == .gone || error.code == .notMember || error.code == .forbidden)
                #expect(await guest.client.phase == .failed(error))
                group.cancelAll()
            }
        }
    }
}
