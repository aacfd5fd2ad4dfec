import Foundation
import Testing

@Suite("PirateRadio: WebSocket connections")
struct ConnectionTests {
    @Test("On connect the caller gets a stateSync envelope carrying the snapshot, on any path")
    func connectSendsStateSync() async throws {
        try await PirateServer.with { server in
            let creator = try await server.http.signIn("creator1", displayName: "Ann")
            let session = try await server.http.createSession(creator)
            let socket = PirateSocket(server, token: creator.token, session: session.id, label: "creator1")
            let sync = try await socket.next("stateSync")

            for key in ["type", "data", "epoch", "seq", "timestamp"] {
                #expect(sync.object[key] != nil, "the envelope lacks \(key): \(sync.text)")
            }
            if let timestamp = sync.timestamp {
                #expect(abs(timestamp - nowMs()) < 5_000, "timestamp \(timestamp) should be server ms now")
            }
            let data = sync.data
            let missing = SnapshotTests.snapshotKeys.subtracting(data.keys)
            #expect(missing.isEmpty, "stateSync data lacks \(missing.sorted()): \(sync.text)")
            #expect(data.string("id") == session.id)
            #expect(data.string("djUserId") == "creator1")
            #expect(data.int("epoch") == 0)
            #expect(data.isNull("currentTrack"))
            let members = data.objects("members") ?? []
            #expect(members.contains { $0.string("userId") == "creator1" && $0.string("displayName") == "Ann" }, "\(members)")

            let joiner = try await server.http.signIn("joiner1", displayName: "Bob")
            let other = PirateSocket(server, token: joiner.token, session: session.id, path: "/any/path/at/all", label: "joiner1")
            let otherSync = try await other.next("stateSync", "on a non-root path")
            #expect(otherSync.data.string("id") == session.id)
        }
    }

    @Test("A connecting member is announced to the others with memberJoined {userId, displayName}")
    func othersReceiveMemberJoined() async throws {
        try await PirateServer.with { server in
            let creator = try await server.http.signIn("creator1", displayName: "Ann")
            let joiner = try await server.http.signIn("joiner1", displayName: "Mia")
            let session = try await server.http.createSession(creator)
            let first = try await server.connect(creator, to: session.id)
            _ = try await server.http.joinOK(joiner, code: session.joinCode)

            let second = PirateSocket(server, token: joiner.token, session: session.id, label: "joiner1")
            let sync = try await second.next("stateSync")
            let ids = Set((sync.data.objects("members") ?? []).compactMap { $0.string("userId") })
            #expect(ids == ["creator1", "joiner1"], "\(sync.text)")

            let joined = try await first.socket.next("memberJoined")
            #expect(joined.data.string("userId") == "joiner1", "\(joined.text)")
            #expect(joined.data.string("displayName") == "Mia", "\(joined.text)")
        }
    }

    @Test("A socket to an unknown session is closed with 4004")
    func unknownSessionCloses4004() async throws {
        try await PirateServer.with { server in
            let user = try await server.http.signIn("creator1")
            _ = try await server.http.createSession(user)
            for id in [UUID().uuidString.lowercased(), "nope"] {
                let socket = PirateSocket(server, token: user.token, session: id, label: "to \(id)")
                let code = try await socket.closeCode()
                #expect(code == 4004, "session \(id): closed with \(String(describing: code))")
            }
        }
    }

    @Test("An eleventh member's socket is closed with 4009 while ten are connected")
    func eleventhSocketCloses4009() async throws {
        try await PirateServer.with { server in
            let creator = try await server.http.signIn("creator1")
            let session = try await server.http.createSession(creator)
            var connected = [try await server.connect(creator, to: session.id)]
            for n in 2...10 {
                let user = try await server.http.signIn("member\(n)")
                connected.append(try await server.connect(user, to: session.id))
            }
            let eleventh = try await server.http.signIn("member11")
            let socket = PirateSocket(server, token: eleventh.token, session: session.id, label: "member11")
            let code = try await socket.closeCode()
            #expect(code == 4009, "closed with \(String(describing: code))")

            // The ten are still there.
            for member in connected { try await member.socket.roundTrip() }
            let members = try await server.http.snapshot(creator, session: session.id).objects("members") ?? []
            #expect(members.count == 10)
            #expect(!members.contains { $0.string("userId") == "member11" })
        }
    }

    @Test("The same user connecting again closes the older socket with 4000 and the newer one works")
    func sameUserAgainReplacesTheOlderSocket() async throws {
        try await PirateServer.with { server in
            let creator = try await server.http.signIn("creator1", displayName: "Ann")
            let joiner = try await server.http.signIn("joiner1", displayName: "Bob")
            let session = try await server.http.createSession(creator)
            let host = try await server.connect(creator, to: session.id)
            let older = try await server.connect(joiner, to: session.id)
            try await host.socket.next("memberJoined") { $0.data.string("userId") == "joiner1" }

            let newer = try await server.connect(joiner, to: session.id)
            let code = try await older.socket.closeCode()
            #expect(code == 4000, "the older socket closed with \(String(describing: code))")

            try await newer.socket.roundTrip()
            let frame = try await newer.socket.addAndWait(prTrack(1))
            #expect(trackIds(frame.data.objects("queue")) == ["spotify:track:1"])
            try await host.socket.next("queueUpdate")
            // As its server does, the others hear of every socket that opens, a return included.
            let joins = await host.socket.frames("memberJoined").filter { $0.data.string("userId") == "joiner1" }
            let seen = await host.socket.summary()
            #expect(joins.count == 2, "memberJoined for each of joiner1's sockets: \(seen)")

            let members = try await server.http.snapshot(creator, session: session.id).objects("members") ?? []
            #expect(members.filter { $0.string("userId") == "joiner1" }.count == 1, "\(members)")
        }
    }

    @Test("A member's new socket under a new name is announced, and shown, with that name")
    func aNewSocketUnderANewNameRenamesTheMember() async throws {
        try await PirateServer.with { server in
            let creator = try await server.http.signIn("creator1", displayName: "Ann")
            let session = try await server.http.createSession(creator)
            let host = try await server.connect(creator, to: session.id)
            _ = try await server.connect(try await server.http.signIn("joiner1", displayName: "Bob"), to: session.id)
            try await host.socket.next("memberJoined") { $0.data.string("displayName") == "Bob" }
            // Signed in again under another name, as its app does after a profile change.
            let renamed = try await server.http.signIn("joiner1", displayName: "Robert")
            _ = try await server.connect(renamed, to: session.id)
            let joined = try await host.socket.next("memberJoined", "under the new name") { $0.data.string("userId") == "joiner1" && $0.data.string("displayName") == "Robert" }
            #expect(joined.data.string("displayName") == "Robert")
            let members = try await server.http.snapshot(creator, session: session.id).objects("members") ?? []
            #expect(members.filter { $0.string("userId") == "joiner1" }.map { $0.string("displayName") } == ["Robert"], "\(members)")
        }
    }

    @Test("A session whose members all send nothing for the idle timeout is closed with 4008; a quiet member of a talking one stays")
    func idleSessionCloses4008() async throws {
        try await PirateServer.with(.init(idleTimeoutMs: 3000)) { server in
            let creator = try await server.http.signIn("creator1")
            let chatty = try await server.http.signIn("chatty1")
            let loner = try await server.http.signIn("loner1")
            let talking = try await server.http.createSession(creator)
            let busy = try await server.connect(chatty, to: talking.id)
            let pinger = Task {
                for n in 1...100 {
                    busy.socket.send("ping", ["clientSendTime": n])
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
            defer { pinger.cancel() }
            // The DJ of a talking session says nothing (paused, say): the session is not idle.
            let quietDJ = try await server.connect(creator, to: talking.id)

            let silent = try await server.http.createSession(loner)
            let opened = ContinuousClock.now
            let alone = try await server.connect(loner, to: silent.id)
            let code = try await alone.socket.closeCode(timeout: .seconds(8))
            let elapsed = milliseconds(from: opened, to: .now)
            #expect(code == 4008, "closed with \(String(describing: code))")
            #expect(elapsed >= 2700, "closed after \(elapsed) ms, before the 3000 ms idle timeout")

            // Well past the timeout, both sockets of the talking session (one message every
            // 100 ms, a thirtieth of the timeout, so that a test process starved for a second
            // or two on a loaded machine does not let it fall silent) are still open.
            try await Task.sleep(until: opened + .milliseconds(7000))
            let (busySeen, quietSeen) = (await busy.socket.summary(), await quietDJ.socket.summary())
            #expect(await busy.socket.isClosed == false, "the pinging socket was closed: \(busySeen)")
            #expect(await quietDJ.socket.isClosed == false, "the quiet DJ's socket was closed: \(quietSeen)")
            try await busy.socket.roundTrip()
            try await quietDJ.socket.roundTrip()
        }
    }

    @Test("An idle session ends as its server destroys it: every socket closes with 4008, nobody else becomes DJ, and it is gone")
    func anIdleSessionEnds() async throws {
        // 3 s: the party and its add must come within it on a loaded machine.
        try await PirateServer.with(.init(idleTimeoutMs: 3000)) { server in
            let party = try await Party.start(server, members: ["m1", "m2"])
            // A queued track: a session with one would otherwise wait out its grace period.
            _ = try await party.dj.socket.addAndWait(prTrack(1))
            var seen: [Int] = []
            for connected in party.everyone { seen.append(await connected.socket.frames.count) }
            for connected in party.everyone {
                let code = try await connected.socket.closeCode(timeout: .seconds(8))
                #expect(code == 4008, "closed with \(String(describing: code))")
            }
            for (connected, count) in zip(party.everyone, seen) {
                let handedOn = await connected.socket.frames.dropFirst(count).filter { $0.type == "stateSync" || $0.type == "memberLeft" }
                #expect(handedOn.isEmpty, "the DJ role moved as the sockets closed: \(handedOn)")
            }
            let read = try await party.http.request("GET", "/sessions/\(party.id)", token: party.dj.user.token)
            #expect(read.status == 404, "the session should be gone: \(read)")
            let again = PirateSocket(server, token: party.dj.user.token, session: party.id, label: "again")
            #expect(try await again.closeCode(timeout: .seconds(8)) == 4004)
        }
    }

    @Test("An idle session whose DJ is away (kept as DJ while it stood empty) ends all the same")
    func anIdleSessionWithItsDJAwayEnds() async throws {
        // 5 s: the listener must connect again within it on a loaded machine (at 3 s a full run
        // lost the session before its socket opened, closed 4004).
        try await PirateServer.with(.init(idleTimeoutMs: 5_000)) { server in
            let party = try await Party.start(server, members: ["m1"])
            _ = try await party.dj.socket.addAndWait(prTrack(1))
            // The listener leaves first, so the DJ is the one who leaves it empty.
            await party.members[0].socket.close()
            try await party.dj.socket.next("memberLeft", "the listener's leaving") { $0.data.string("userId") == party.members[0].id }
            await party.dj.socket.close()
            // Empty, with a queued track: the grace period keeps it, and its DJ stays DJ.
            let listener = try await server.connect(party.members[0].user, to: party.id)
            let snapshot = try await party.http.snapshot(party.dj.user, session: party.id)
            #expect(snapshot.string("djUserId") == party.dj.id, "\(snapshot)")
            let code = try await listener.socket.closeCode(timeout: .seconds(10))
            #expect(code == 4008, "closed with \(String(describing: code))")
            let read = try await party.http.request("GET", "/sessions/\(party.id)", token: party.dj.user.token)
            #expect(read.status == 404, "the session should be gone: \(read)")
        }
    }

    @Test("A station playing through its queue to silent members is not idle: each track the server starts counts")
    func autoAdvanceCountsAsActivity() async throws {
        // 5 s: the party must connect within it on a loaded machine (at 3 s a full run once
        // lost the session before its member's socket opened).
        try await PirateServer.with(.init(idleTimeoutMs: 5_000)) { server in
            let party = try await Party.start(server, members: ["m1"])
            for n in 2...9 { _ = try await party.dj.socket.addAndWait(prTrack(n, durationMs: 1_000)) }
            let started = try await party.play(prTrack(1, durationMs: 1_000))
            // Nobody sends anything from here; a track starts every second for about 9 s.
            try await Task.sleep(until: started + .milliseconds(6_500))
            let (djSeen, memberSeen) = (await party.dj.socket.summary(), await party.members[0].socket.summary())
            #expect(await party.dj.socket.isClosed == false, "\(djSeen)")
            #expect(await party.members[0].socket.isClosed == false, "\(memberSeen)")
            // Once the queue has run out, silence is idleness again.
            let code = try await party.members[0].socket.closeCode(timeout: .seconds(15))
            #expect(code == 4008, "closed with \(String(describing: code))")
        }
    }
}
