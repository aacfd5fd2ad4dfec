import JamTestSupport
import Foundation
import JamProtocol
import Synchronization
import Testing

/// What a server acknowledged survives its death.
@Suite(.serialized) struct DurabilityTests {
    @Test func everythingComesBackAfterARestart() async throws {
        let directory = TestServer.makeDataDirectory()
        struct Before: Sendable {
            let view: SessionView
            let guestView: SessionView
            let hostToken: String
            let guestToken: String
            let lastSeq: Int64
        }
        let before: Before = try await TestServer.with(dataDirectory: directory, configure: { $0.timing.prepareAheadMs = 100 }) { server in
            let party = try await Party.start(server, guests: ["Eli", "Fay"], create: CreateSessionRequest(name: "Keep me", settings: SettingsPatch(skipThreshold: 0.75, ordering: .fair)))
            _ = try await server.api.send("PUT", "/api/v1/sessions/\(party.id)/members/\(party.guests[1].id)/role", token: party.host.token, json: RoleRequest(role: .cohost))
            _ = try await server.api.add(party.host.token, party.id, testTrack(1, durationMs: 400))
            _ = try await server.api.add(party.guests[0].token, party.id, testTrack(2, durationMs: 600_000))
            let item3 = try await server.api.add(party.guests[1].token, party.id, testTrack(3)).decode(QueueItem.self)
            let item4 = try await server.api.add(party.guests[0].token, party.id, testTrack(4)).decode(QueueItem.self)
            _ = try await server.api.send("PUT", "/api/v1/sessions/\(party.id)/queue/\(item3.id)/vote", token: party.guests[0].token, json: VoteRequest(value: 1))
            _ = try await server.api.send("PUT", "/api/v1/sessions/\(party.id)/queue/\(item4.id)/vote", token: party.host.token, json: VoteRequest(value: -1))
            // Track 1 plays out; track 2 (ten minutes) is playing when the server stops.
            try await party.host.socket.next("track 2 playing", timeout: .seconds(5)) { $0.playCommit != nil && $0.epoch == 2 }
            try await Task.sleep(for: .milliseconds(300))
            let view = try await server.api.view(party.host.token, party.id)
            let guestView = try await server.api.view(party.guests[0].token, party.id)
            let lastSeq = try #require(await party.host.socket.received.map(\.seq).max())
            await party.close()
            return Before(view: view, guestView: guestView, hostToken: party.host.token, guestToken: party.guests[0].token, lastSeq: lastSeq)
        }
        #expect(before.view.nowPlaying?.item.track.id == "track-2")
        #expect(before.view.history.map(\.item.track.id) == ["track-1"])

        try await TestServer.with(dataDirectory: directory) { server in
            let id = before.view.session.id
            let after = try await server.api.view(before.hostToken, id)
            #expect(after.session == before.view.session)
            #expect(after.members.map(\.userId) == before.view.members.map(\.userId))
            #expect(after.members.map(\.role) == before.view.members.map(\.role))
            #expect(after.members.allSatisfy { !$0.connected })
            #expect(after.queue == before.view.queue.map { item in
                var copy = item
                copy.addedBy.connected = false
                return copy
            })
            #expect(after.history.map(\.item.id) == before.view.history.map(\.item.id))
            #expect(after.myVotes == before.view.myVotes)
            let guestAfter = try await server.api.view(before.guestToken, id)
            #expect(guestAfter.myVotes == before.guestView.myVotes)
            // The timeline continued: same item, same anchor, so the position is where it would be.
            #expect(after.nowPlaying?.item.id == before.view.nowPlaying?.item.id)
            #expect(after.nowPlaying?.anchorMs == before.view.nowPlaying?.anchorMs)
            #expect(after.nowPlaying?.state == .playing)
            // seq continues where it was.
            let socket = TestSocket(server: server, session: id, token: before.hostToken)
            let sync = try await socket.next(.stateSync)
            #expect(sync.seq >= before.lastSeq)
            _ = try await server.api.add(before.hostToken, id, testTrack(9))
            let next = try await socket.next(.queueUpdate)
            #expect(next.seq > sync.seq)
            await socket.close()
        }
    }

    @Test func killedServerKeepsEveryAcknowledgedCommand() async throws {
        let directory = TestServer.makeDataDirectory()
        let first = try await ServerProcess(dataDirectory: directory)
        let api = first.server.api
        let host = try await api.guest("Host")
        let view = try await api.create(host.token, CreateSessionRequest(settings: SettingsPatch(maxQueuedPerMember: 500)))
        let id = view.session.id
        var guests: [GuestAuthResponse] = []
        for n in 0..<4 {
            let guest = try await api.guest("Guest \(n)")
            _ = try await api.join(guest.token, code: view.session.joinCode)
            guests.append(guest)
        }
        // A listener records the highest seq it saw before the kill.
        let listener = TestSocket(server: first.server, session: id, token: host.token)
        try await listener.next(.stateSync)
        _ = try await api.add(host.token, id, Track(id: "opener", name: "Opener", artist: "A", durationMs: 600_000))
        try await listener.next("the opener plays", timeout: .seconds(3)) { $0.playCommit != nil }
        let playing = try #require(try await api.view(host.token, id).nowPlaying)

        actor Ledger {
            var adds: [ItemID: (user: String, track: String)] = [:]
            /// The last acknowledged vote per "user|item".
            var votes: [String: Int] = [:]
            /// The vote each guest had in flight when the server died: stored or not, both are right.
            var inFlight: [String: (key: String, value: Int)] = [:]
            func add(_ item: ItemID, _ user: String, _ track: String) { adds[item] = (user, track) }
            func sending(_ user: String, _ key: String, _ value: Int) { inFlight[user] = (key, value) }
            func vote(_ user: String, _ key: String, _ value: Int) {
                votes[key] = value
                inFlight[user] = nil
            }
        }
        let ledger = Ledger()
        // Each guest adds and votes as fast as it can until the server dies under it.
        await withTaskGroup(of: Void.self) { group in
            for (index, guest) in guests.enumerated() {
                group.addTask {
                    var own: [ItemID] = []
                    var n = 0
                    while true {
                        n += 1
                        let track = Track(id: "g\(index)-\(n)", name: "Song \(index)-\(n)", artist: "A", durationMs: 600_000)
                        guard let response = try? await api.add(guest.token, id, track, nonce: "g\(index)-\(n)") else { return }
                        if response.status == 201 || response.status == 200, let item = try? response.decode(QueueItem.self) {
                            await ledger.add(item.id, guest.userId.rawValue, track.id)
                            own.append(item.id)
                        }
                        if let target = own.randomElement() {
                            let value = n % 3 == 0 ? -1 : 1
                            await ledger.sending(guest.userId.rawValue, "\(guest.userId)|\(target)", value)
                            guard let vote = try? await api.send("PUT", "/api/v1/sessions/\(id)/queue/\(target)/vote", token: guest.token, json: VoteRequest(value: value)) else { return }
                            if vote.status == 200 { await ledger.vote(guest.userId.rawValue, "\(guest.userId)|\(target)", value) }
                        }
                    }
                }
            }
            group.addTask {
                // Killed once enough adds are acknowledged to mean something, however busy the
                // machine (a fixed 700 ms left only 15 while the other suites ran).
                let deadline = ContinuousClock.now + .seconds(30)
                while await ledger.adds.count < 30, ContinuousClock.now < deadline {
                    try? await Task.sleep(for: .milliseconds(10))
                }
                do { try await first.kill() } catch { Issue.record("killing jam serve failed: \(error)") }
            }
        }
        let lastSeq = await listener.received.map(\.seq).max() ?? 0
        await listener.close()
        let adds = await ledger.adds
        let votes = await ledger.votes
        let inFlight = await ledger.inFlight
        #expect(adds.count > 20, "the load produced too few acknowledged adds to mean anything")
        print("durability: killed after \(adds.count) acknowledged adds and \(votes.count) acknowledged votes (last seq seen \(lastSeq))")

        try await ServerProcess.with(dataDirectory: directory) { second in
            let restored = try await second.server.api.view(host.token, id)
            #expect(restored.session.settings.maxQueuedPerMember == 500)
            #expect(restored.members.count == 5)
            // The opener keeps playing on the same timeline: same item, epoch and anchor.
            #expect(restored.nowPlaying?.item.id == playing.item.id)
            #expect(restored.nowPlaying?.epoch == playing.epoch)
            #expect(restored.nowPlaying?.anchorMs == playing.anchorMs)
            #expect(restored.nowPlaying?.state == .playing)
            let items = restored.queue + [restored.nowPlaying?.item].compactMap { $0 } + restored.history.map(\.item)
            let byId = Dictionary(items.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
            for (itemId, add) in adds {
                #expect(byId[itemId]?.track.id == add.track, "acknowledged add \(add.track) is missing")
            }
            #expect(Set(items.map(\.track.id)).count == items.count, "an item came back twice")
            for guest in guests {
                let guestView = try await second.server.api.view(guest.token, id)
                for (key, value) in votes where key.hasPrefix("\(guest.userId)|") {
                    let item = String(key.split(separator: "|")[1])
                    guard restored.queue.contains(where: { $0.id.rawValue == item }) else { continue }
                    let pending = inFlight[guest.userId.rawValue].flatMap { $0.key == key ? $0.value : nil }
                    let stored = guestView.myVotes[item]
                    #expect(stored == value || (pending != nil && stored == pending), "acknowledged vote \(value) on \(item) is missing (stored \(String(describing: stored)))")
                }
            }
            let socket = TestSocket(server: second.server, session: id, token: host.token)
            let sync = try await socket.next(.stateSync)
            #expect(sync.seq >= lastSeq)
            await socket.close()
        }
    }

    @Test func killedServerKeepsEveryCommandItAcknowledgedOnASocket() async throws {
        let directory = TestServer.makeDataDirectory()
        let first = try await ServerProcess(dataDirectory: directory)
        let api = first.server.api
        let host = try await api.guest("Host")
        let view = try await api.create(host.token, CreateSessionRequest(settings: SettingsPatch(maxQueuedPerMember: 500)))
        let id = view.session.id
        _ = try await api.add(host.token, id, Track(id: "opener", name: "Opener", artist: "A", durationMs: 3_600_000))
        var guests: [(auth: GuestAuthResponse, socket: TestSocket)] = []
        for n in 0..<4 {
            let guest = try await api.guest("Guest \(n)")
            _ = try await api.join(guest.token, code: view.session.joinCode)
            let socket = TestSocket(server: first.server, session: id, token: guest.token)
            try await socket.next(.stateSync)
            guests.append((guest, socket))
        }
        // Each guest keeps one command in flight (an add, then a vote for it), so group commits
        // are forming and flushing when the server dies: once 30 adds are acknowledged, however
        // long that takes on a busy machine.
        let progress = Progress()
        struct Acknowledged: Sendable {
            var adds: [ItemID: String] = [:]
            var votes: [ItemID: Int] = [:]
        }
        let results = try await withThrowingTaskGroup(of: (UserID, Acknowledged).self) { group in
            for (index, guest) in guests.enumerated() {
                group.addTask {
                    var acknowledged = Acknowledged()
                    var n = 0
                    while !progress.killed.load(ordering: .relaxed) {
                        n += 1
                        let track = "g\(index)-\(n)"
                        let addId = "add-\(n)", voteId = "vote-\(n)", value = n % 2 == 0 ? 1 : -1
                        guest.socket.send(.addToQueue(AddToQueue(track: Track(id: track, name: track, artist: "A", durationMs: 200_000), nonce: track)), id: addId)
                        // An ack over 2 s late happens on a busy machine; only the kill ends a guest's run.
                        guard let ack = try? await guest.socket.next("ack \(addId)", timeout: .seconds(5), where: { $0.ack?.id == addId }),
                              let item = ack.ack?.itemId else { break }
                        acknowledged.adds[item] = track
                        progress.adds.add(1, ordering: .relaxed)
                        guest.socket.send(.vote(Vote(itemId: item, value: value)), id: voteId)
                        guard (try? await guest.socket.next("ack \(voteId)", timeout: .seconds(5), where: { $0.ack?.id == voteId })) != nil else { break }
                        acknowledged.votes[item] = value
                    }
                    return (guest.auth.userId, acknowledged)
                }
            }
            group.addTask {
                let deadline = ContinuousClock.now + .seconds(30)
                while progress.adds.load(ordering: .relaxed) < 30, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(5))
                }
                try await first.kill()
                progress.killed.store(true, ordering: .relaxed)
                return (JamID("killer"), Acknowledged())
            }
            var all: [UserID: Acknowledged] = [:]
            for try await (user, acknowledged) in group { all[user] = acknowledged }
            return all
        }
        for guest in guests { await guest.socket.close() }
        let addCount = results.values.reduce(0) { $0 + $1.adds.count }
        let voteCount = results.values.reduce(0) { $0 + $1.votes.count }
        #expect(addCount > 20, "too few acknowledged commands to mean anything")
        print("durability (sockets): killed after \(addCount) acknowledged adds and \(voteCount) acknowledged votes")

        try await ServerProcess.with(dataDirectory: directory) { second in
            for guest in guests {
                let acknowledged = try #require(results[guest.auth.userId])
                let restored = try await second.server.api.view(guest.auth.token, id)
                let byId = Dictionary(uniqueKeysWithValues: restored.queue.map { ($0.id, $0) })
                for (item, track) in acknowledged.adds {
                    #expect(byId[item]?.track.id == track, "acknowledged add \(track) is missing")
                }
                for (item, value) in acknowledged.votes {
                    #expect(restored.myVotes[item.rawValue] == value, "acknowledged vote on \(item) is missing")
                }
            }
        }
    }

    @Test func sigtermClosesSocketsAndKeepsState() async throws {
        let directory = TestServer.makeDataDirectory()
        let first = try await ServerProcess(dataDirectory: directory)
        let host = try await first.server.api.guest("Host")
        let view = try await first.server.api.create(host.token)
        let item = try await first.server.api.add(host.token, view.session.id, testTrack(1)).decode(QueueItem.self)
        let socket = TestSocket(server: first.server, session: view.session.id, token: host.token)
        try await socket.next(.stateSync)
        let ending = try await first.terminate()
        #expect(ending == .exited(0))
        let close = try await socket.closedByServer()
        #expect(close?.closeCode == .normalClosure)

        let restored = try await ServerProcess.with(dataDirectory: directory) { second in
            try await second.server.api.view(host.token, view.session.id)
        }
        #expect(restored.nowPlaying?.item.id == item.id)
    }
}

/// How far a load on a server about to be killed has got.
private final class Progress: Sendable {
    let adds = Atomic<Int>(0)
    let killed = Atomic<Bool>(false)
}
