import Foundation
import JamTestSupport
import Testing

@Suite("PirateRadio: the dial (stations and joining by id)")
struct StationsTests {
    @Test("GET /stations lists sessions that play or have a queue, with the creator's name, frequency and currentTrack")
    func stationsListLiveSessions() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: ["m1"])
            let listener = party.members[0].user
            var result = try await server.http.request("GET", "/stations", token: listener.token)
            #expect(result.status == 200, "\(result)")
            #expect((result.json?["stations"] as? [Any])?.isEmpty == true, "an idle session is no station: \(result)")
            #expect(try await server.http.request("GET", "/stations").status == 401)

            _ = try await party.dj.socket.addAndWait(prTrack(2))
            result = try await server.http.request("GET", "/stations", token: listener.token)
            var stations = result.json?["stations"] as? [JSONObject] ?? []
            #expect(stations.count == 1, "\(result)")
            #expect(stations.first?.string("userId") == "dj", "\(result)")
            #expect(stations.first?.string("displayName") == "Ann", "\(result)")
            #expect(stations.first?.number("frequency") == 88.1, "the first user signed in is on 88.1: \(result)")
            #expect(stations.first?.string("sessionId") == party.id, "\(result)")
            #expect(stations.first?.isNull("currentTrack") == true, "\(result)")

            try await party.play(prTrack(1))
            result = try await server.http.request("GET", "/stations", token: listener.token)
            stations = result.json?["stations"] as? [JSONObject] ?? []
            #expect(sameTrack(stations.first?.object("currentTrack"), prTrack(1)), "\(result)")
        }
    }

    @Test("GET /stations lists stations in the order their sessions were made")
    func stationsInCreationOrder() async throws {
        try await PirateServer.with { server in
            var made: [String] = []
            var sockets: [Connected] = []
            for n in 1...8 {
                let dj = try await server.http.signIn("dj\(n)")
                let session = try await server.http.createSession(dj)
                let connected = try await server.connect(dj, to: session.id)
                _ = try await connected.socket.addAndWait(prTrack(n))
                sockets.append(connected)
                made.append("dj\(n)")
                // Sessions made in the same millisecond have no order of their own.
                try await Task.sleep(for: .milliseconds(2))
            }
            let result = try await server.http.request("GET", "/stations", token: sockets[0].user.token)
            let listed = (result.json?["stations"] as? [JSONObject] ?? []).compactMap { $0.string("userId") }
            #expect(listed == made, "\(result)")
        }
    }

    @Test("POST /sessions/join with the code of a session that just ended is 404, as for any unknown code")
    func joinCodeOfAnEndedSession() async throws {
        try await PirateServer.with { server in
            let creator = try await server.http.signIn("creator1")
            let joiner = try await server.http.signIn("joiner1")
            let session = try await server.http.createSession(creator)
            let socket = try await server.connect(creator, to: session.id)
            try await socket.socket.roundTrip()
            await socket.socket.close()
            // 10 s for a busy CI machine (2 cores, ~1,150 tests at once); still far short of the 5-minute grace period.
            try await eventually("the session ends with its last socket", timeout: .seconds(10)) {
                try await server.http.get(creator, session: session.id).status == 404
            }
            let late = try await server.http.join(joiner, code: session.joinCode)
            #expect(late.status == 404, "\(late)")
            #expect(late.errorMessage != nil, "\(late)")
        }
    }

    @Test("POST /sessions/join-by-id answers as /sessions/join does; an unknown id is 404, a missing one 400")
    func joinById() async throws {
        try await PirateServer.with { server in
            let party = try await Party.start(server, members: [])
            let joiner = try await server.http.signIn("m9", displayName: "Nine")
            let result = try await server.http.send("POST", "/sessions/join-by-id", token: joiner.token, json: ["sessionId": party.id])
            #expect(result.status == 200, "\(result)")
            #expect(result.json?.string("id") == party.id, "\(result)")
            #expect(result.json?.string("joinCode") == party.session.joinCode, "\(result)")
            #expect(result.json?.string("djUserId") == "dj", "\(result)")
            #expect(result.json?.string("djDisplayName") == "Ann", "\(result)")
            #expect(result.json?.int("memberCount") != nil, "\(result)")

            let unknown = try await server.http.send("POST", "/sessions/join-by-id", token: joiner.token, json: ["sessionId": UUID().uuidString.lowercased()])
            #expect(unknown.status == 404, "\(unknown)")
            #expect(unknown.errorMessage != nil, "\(unknown)")
            let missing = try await server.http.send("POST", "/sessions/join-by-id", token: joiner.token, json: ["sessionId": 5])
            #expect(missing.status == 400, "\(missing)")
        }
    }
}
