import Foundation
import JamTestSupport
import Testing

/// Its server pings every member at each 15 s sweep and drops one that did not answer the
/// last ping; here every socket is pinged each interval (3 s in these tests) and one that
/// sent nothing since its ping is closed at the next.
@Suite("PirateRadio: members whose connection died")
struct DeadConnectionTests {
    @Test("A member whose connection goes silent leaves within two ping intervals, while members who answer stay")
    func aMemberWhoseConnectionGoesSilentLeaves() async throws {
        // 3 s: the test's sockets answer pings from the task that reads them, so a test process
        // starved for a moment on a loaded machine must not lose the DJ's socket, and with it
        // the session, before the member joins, nor a member that answers (at 1 s a full run
        // once did; at 2 s one did too: the DJ's socket closed 4.3 s after the session began).
        try await PirateServer.with(.init(pingIntervalMs: 3000)) { server in
            let party = try await Party.start(server, members: [])
            let relay = try await SilentRelay.start(to: server.port)
            let user = try await server.http.signIn("m1", displayName: "Mo")
            _ = try await server.http.joinOK(user, code: party.session.joinCode)
            let phone = PirateSocket(server, token: user.token, session: party.id, port: relay.port, label: "m1")
            try await phone.next("stateSync", "on connect")
            try await party.dj.socket.next("memberJoined", "for m1") { $0.data.string("userId") == "m1" }

            // Two and a half intervals without a message: both sockets answer their pings and stay.
            try await Task.sleep(for: .milliseconds(7_500))
            #expect(await party.dj.socket.frames("memberLeft").isEmpty, "a member whose socket answers pings left")
            try await phone.roundTrip()

            // The phone's network goes away without a word: its socket stays open at both ends.
            relay.silenceOpenConnections()
            let silenced = ContinuousClock.now
            try await party.dj.socket.next("memberLeft", timeout: .seconds(20), "the silent member") { $0.data.string("userId") == "m1" }
            let took = milliseconds(from: silenced, to: .now)
            // Two intervals, and room for a busy machine; the 30 s pings of OpenJam's own
            // profile would take a minute or more.
            #expect(took < 11_000, "left \(took) ms after the connection went silent")
            let snapshot = try await party.snapshot()
            #expect((snapshot.objects("members") ?? []).map { $0.string("userId") } == ["dj"], "\(snapshot)")
            try await party.dj.socket.roundTrip()
            try await relay.stop()
        }
    }
}
