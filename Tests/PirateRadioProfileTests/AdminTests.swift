import Foundation
import Testing

@Suite("PirateRadio: GET /admin/sessions")
struct AdminTests {
    @Test("Every session is listed without a token, in creation order, with members' liveness and its timings")
    func adminListsEverySession() async throws {
        try await PirateServer.with { server in
            let before = nowMs()
            let party = try await Party.start(server, members: ["m1"])
            _ = try await party.dj.socket.addAndWait(prTrack(1))
            let other = try await server.http.signIn("creator2", displayName: "Cy")
            let second = try await server.http.createSession(other)
            let after = nowMs()

            let result = try await server.http.request("GET", "/admin/sessions")
            #expect(result.status == 200, "\(result)")
            let json = try #require(result.json, "\(result)")
            let serverTime = try #require(json.int("serverTime"), "\(result)")
            #expect(serverTime >= before && serverTime <= nowMs(), "\(result)")
            let sessions = json.objects("sessions") ?? []
            #expect(sessions.compactMap { $0.string("id") } == [party.id, second.id], "\(result)")

            let first = try #require(sessions.first)
            #expect(first.string("joinCode") == party.session.joinCode)
            #expect(first.string("djUserId") == "dj" && first.string("creatorId") == "dj", "\(first)")
            #expect(trackIds(first.objects("queue")) == ["spotify:track:1"], "\(first)")
            #expect(first.int("sequence") != nil && first.int("epoch") == 0 && first.bool("isPlaying") == false, "\(first)")
            let members = first.objects("members") ?? []
            #expect(members.compactMap { $0.string("userId") } == ["dj", "m1"], "\(members)")
            #expect(members.allSatisfy { $0.bool("alive") == true }, "\(members)")
            #expect(members.first?.string("displayName") == "Ann", "\(members)")
            for member in members {
                let joinedAt = try #require(member.int("joinedAt"), "\(member)")
                #expect(joinedAt >= before && joinedAt <= after, "\(member)")
            }
            for key in ["lastActivity", "codeCreatedAt"] {
                let time = try #require(first.int(key), "\(key): \(first)")
                #expect(time >= before - 5 && time <= after + 5, "\(key) \(time) outside \(before)…\(after)")
            }
            // The second session's creator never connected.
            let members2 = sessions.last?.objects("members") ?? []
            #expect(members2.allSatisfy { $0.bool("alive") == false }, "\(members2)")
        }
    }
}
