import Foundation
import JamCore
import JamProtocol
import JamTestSupport
import Testing

@testable import JamServer

/// Sessions nobody is connected to pause and then end, on the real server.
@Suite struct UnattendedSessionTests {
    @Test func aSessionEveryoneLeftOpenPausesThenEndsAndIsGone() async throws {
        try await TestServer.with(configure: {
            // Long enough that the session does not end before its sockets open on a busy machine
            // (a session nobody ever opens is abandoned too, counted from its creation).
            // 10 s: a full run once starved this test for more than 4 s between the create and
            // the host's socket, and the session was gone before it opened.
            $0.timing.unattendedPauseMs = 400
            $0.timing.abandonAfterMs = 10_000
        }) { server in
            let party = try await Self.playingParty(server)
            await party.close()

            let paused = try await eventually("the session never paused", every: .milliseconds(50)) {
                let view = try await server.api.view(party.host.token, party.id)
                return view.nowPlaying?.state == .paused ? view : nil
            }
            #expect(paused.nowPlaying?.item.track.id == "track-1")
            #expect((paused.nowPlaying?.positionMs ?? 0) > 0)
            let gone = try await eventually("the session never ended", timeout: .seconds(30), every: .milliseconds(50)) {
                let response = try await server.api.request("GET", "/api/v1/sessions/\(party.id)", token: party.host.token)
                return response.status == 410 ? response : nil
            }
            #expect(gone.errorCode == .gone)
        }
    }

    @Test func aSessionWhoseServerDiedWithMembersConnectedEndsOnItsOwnAfterTheRestart() async throws {
        // The server dies with sockets open and nothing playing (its store takes nothing more,
        // as after a kill): the stored state counts the members connected and has no timeline,
        // so it stores no deadline, and nobody asks for the session after the restart.
        let dying = CommitFailureTests.RefusingStore()
        dying.refusing.withLock { $0 = false }
        let store = dying.stored
        let id = try await TestServer.with(store: dying) { server in
            let party = try await Party.start(server, guests: ["Eli"])
            dying.refusing.withLock { $0 = true }
            return party.id
        }
        #expect(try await store.loadIndex().first { $0.id == id }?.wakeAt == nil, "the case this test is about")
        try await TestServer.with(store: store, configure: {
            $0.timing.unattendedPauseMs = 300
            $0.timing.abandonAfterMs = 1_500
        }) { _ in
            try await eventually("the session never ended", timeout: .seconds(10), every: .milliseconds(100)) {
                try await store.loadIndex().first { $0.id == id }?.ended == true
            }
        }
    }

    @Test func aConnectedMemberKeepsTheSessionPlaying() async throws {
        try await TestServer.with(configure: {
            $0.timing.unattendedPauseMs = 300
            // Far beyond any starved start: a session nobody has opened yet is abandoned too,
            // and a full run once ended this one before the host's socket opened (4 s then).
            $0.timing.abandonAfterMs = 60_000
        }) { server in
            let party = try await Self.playingParty(server)
            await party.host.socket.close()
            try await Task.sleep(for: .milliseconds(1_200))
            let view = try await server.api.view(party.guests[0].token, party.id)
            #expect(view.nowPlaying?.state == .playing)
            await party.close()
        }
    }

    @Test(arguments: [
        (["--end-abandoned-hours", "9000"], [:], "--end-abandoned-hours must be 0 (never) to 8760, got 9000"),
        (["--pause-unattended-minutes=-5"], [:], "--pause-unattended-minutes must be 0 (never) to 525600, got -5"),
        ([], ["JAM_PAUSE_UNATTENDED_MINUTES": "soon"], "JAM_PAUSE_UNATTENDED_MINUTES must be a whole number, got \"soon\""),
    ] as [([String], [String: String], String)])
    func badLimitsStopTheServerWithTheReason(arguments: [String], environment: [String: String], message: String) async throws {
        let refusal = try await ServerProcess.refusal(arguments, environment: environment)
        #expect(refusal.status.map { $0 != 0 } == true, "stderr: \(refusal.errors)")
        #expect(refusal.errors.contains(message), "stderr: \(refusal.errors)")
    }

    /// A host and Eli, connected, with a ten-minute track playing.
    static func playingParty(_ server: TestServer) async throws -> Party {
        let party = try await Party.start(server, guests: ["Eli"])
        _ = try await server.api.add(party.host.token, party.id, testTrack(1, durationMs: 600_000))
        _ = try await party.guests[0].socket.next("playing", timeout: .seconds(5)) { $0.playCommit != nil }
        return party
    }

}
