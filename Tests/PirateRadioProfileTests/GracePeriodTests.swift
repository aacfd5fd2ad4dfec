import Foundation
import JamTestSupport
import Testing

@Suite("PirateRadio: grace period")
struct GracePeriodTests {
    @Test("A session with a queued track outlives its last socket for the grace period, then ends")
    func queuedSessionLivesForTheGracePeriod() async throws {
        // 3 s of grace, so a busy machine's slow request still lands inside it.
        try await PirateServer.with(.init(gracePeriodMs: 3000)) { server in
            let creator = try await server.http.signIn("creator1")
            let session = try await server.http.createSession(creator)
            let socket = try await server.connect(creator, to: session.id)
            _ = try await socket.socket.addAndWait(prTrack(1))
            // The grace period cannot start before the close does; on a busy machine the close
            // handshake may finish well after the server has counted the socket gone.
            let closing = ContinuousClock.now
            await socket.socket.close()
            let closed = ContinuousClock.now

            let right = try await server.http.get(creator, session: session.id)
            #expect(right.status == 200, "just after the last socket closed: \(right)")
            try await Task.sleep(until: closed + .milliseconds(300))
            let within = try await server.http.get(creator, session: session.id)
            #expect(within.status == 200, "within the 3000 ms grace period: \(within)")
            #expect(trackIds(within.json?.objects("queue")) == ["spotify:track:1"])

            let endedAt = try await eventually("the session should end after the grace period", timeout: .seconds(8)) {
                try await server.http.get(creator, session: session.id).status == 404 ? ContinuousClock.now : nil
            }
            let after = milliseconds(from: closing, to: endedAt)
            #expect(after >= 2700, "ended \(after) ms after the last socket began to close; the grace period is 3000 ms")
            let late = PirateSocket(server, token: creator.token, session: session.id, label: "too late")
            #expect(try await late.closeCode() == 4004, "an ended session closes sockets with 4004")
            let health = try await server.http.request("GET", "/health")
            #expect(health.json?.int("sessions") == 0, "\(health)")
        }
    }

    @Test("A session with nothing current and nothing queued ends as soon as its last socket closes")
    func emptySessionEndsAtOnce() async throws {
        try await PirateServer.with { server in
            let creator = try await server.http.signIn("creator1")
            let session = try await server.http.createSession(creator)
            let socket = try await server.connect(creator, to: session.id)
            try await socket.socket.roundTrip()
            await socket.socket.close()

            // 10 s for a busy CI machine (2 cores, ~1,150 tests at once); still far short of the 5-minute grace period.
            try await eventually("GET should be 404 right after the last socket closed (the grace period is 5 minutes)", timeout: .seconds(10)) {
                try await server.http.get(creator, session: session.id).status == 404
            }
            let late = PirateSocket(server, token: creator.token, session: session.id, label: "after the end")
            #expect(try await late.closeCode() == 4004)
        }
    }

    @Test("A listener tuning in during the grace period is a listener; the DJ is DJ again on coming back")
    func theDJStaysDJWhileAway() async throws {
        try await PirateServer.with(.init(gracePeriodMs: 10_000)) { server in
            let party = try await Party.start(server, members: [])
            _ = try await party.dj.socket.addAndWait(prTrack(1))
            await party.dj.socket.close()
            // 10 s for a busy CI machine (2 cores, ~1,150 tests at once); this only waits for the leave to be counted.
            try await eventually("the DJ left", timeout: .seconds(10)) {
                (try await party.http.snapshot(party.dj.user, session: party.id).objects("members") ?? []).isEmpty
            }
            let listener = try await server.http.signIn("l1")
            let joined = try await server.http.send("POST", "/sessions/join-by-id", token: listener.token, json: ["sessionId": party.id])
            #expect(joined.status == 200, "\(joined)")
            #expect(joined.json?.string("djUserId") == "dj", "\(joined)")
            let tuned = try await server.connect(listener, to: party.id)
            let back = try await server.connect(party.dj.user, to: party.id)
            let sync = try #require(await back.socket.frames("stateSync").first)
            #expect(sync.data.string("djUserId") == "dj", "\(sync.text)")
            try await tuned.socket.roundTrip()
        }
    }

    @Test("Reconnecting within the grace period resumes the session, which then stays alive")
    func reconnectWithinTheGracePeriod() async throws {
        // 4 s of grace: with every suite running at once, a reconnect sent 200 ms after the close
        // has taken over 1.3 s to be counted.
        try await PirateServer.with(.init(gracePeriodMs: 4000)) { server in
            let party = try await Party.start(server, members: [])
            try await party.play(prTrack(1))
            await party.dj.socket.close()
            let closed = ContinuousClock.now

            try await Task.sleep(until: closed + .milliseconds(200))
            let back = try await server.connect(party.dj.user, to: party.id)
            let sync = try #require(await back.socket.frames("stateSync").first)
            #expect(sync.data.string("id") == party.id)
            #expect(sameTrack(sync.data.object("currentTrack"), prTrack(1)), "the current track survived: \(sync.text)")
            #expect(sync.data.int("epoch") == 1, "\(sync.text)")

            try await Task.sleep(until: closed + .milliseconds(4700))
            let later = try await party.http.get(party.dj.user, session: party.id)
            #expect(later.status == 200, "a member is connected again, so the session must not end: \(later)")
            try await back.socket.roundTrip()
            #expect(await back.socket.isClosed == false)
        }
    }
}
