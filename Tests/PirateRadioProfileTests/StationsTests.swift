import Foundation
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
