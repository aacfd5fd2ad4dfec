import Foundation
import Testing

@Suite("PirateRadio: GET /sessions/{id}")
struct SnapshotTests {
    static let snapshotKeys: Set<String> = [
        "id", "joinCode", "creatorId", "djUserId", "members", "epoch", "sequence",
        "currentTrack", "isPlaying", "positionMs", "positionTimestamp", "queue",
    ]

    @Test("A new session's snapshot: epoch 0, sequence 0, no track, not playing, position 0, empty queue")
    func newSessionSnapshot() async throws {
        try await PirateServer.with { server in
            let creator = try await server.http.signIn("creator1", displayName: "Ann")
            let session = try await server.http.createSession(creator)
            let result = try await server.http.get(creator, session: session.id)
            #expect(result.status == 200, "\(result)")
            let snapshot = try #require(result.json, "\(result)")

            let missing = Self.snapshotKeys.subtracting(snapshot.keys)
            #expect(missing.isEmpty, "snapshot lacks \(missing.sorted()): \(result)")
            #expect(snapshot.string("id") == session.id)
            #expect(snapshot.string("joinCode") == session.joinCode)
            #expect(snapshot.string("creatorId") == "creator1")
            #expect(snapshot.string("djUserId") == "creator1")
            let members = try #require(snapshot.objects("members"), "members is not a list of objects: \(result)")
            #expect(members.count == 1)
            #expect(members.first?.string("userId") == "creator1")
            #expect(members.first?.string("displayName") == "Ann")
            #expect(snapshot.int("epoch") == 0)
            #expect(snapshot.int("sequence") == 0)
            #expect(snapshot.isNull("currentTrack"), "currentTrack must be present and null: \(result)")
            #expect(snapshot.bool("isPlaying") == false)
            #expect(snapshot.int("positionMs") == 0)
            #expect(snapshot.number("positionTimestamp") != nil, "positionTimestamp must be a number: \(result)")
            let queue = try #require(snapshot["queue"] as? [Any], "queue is not a list: \(result)")
            #expect(queue.isEmpty)
        }
    }

    @Test("GET /sessions/{id} is 404 for an unknown or malformed id")
    func unknownAndMalformedIdsAre404() async throws {
        try await PirateServer.with { server in
            let creator = try await server.http.signIn("creator1")
            let session = try await server.http.createSession(creator)
            let ids = [
                UUID().uuidString.lowercased(), UUID().uuidString, "nope", "12345", session.joinCode,
                session.id + "x", String(repeating: "z", count: 300), "not%20an%20id",
            ]
            for id in ids {
                let result = try await server.http.request("GET", "/sessions/\(id)", token: creator.token)
                #expect(result.status == 404, "id \(id): \(result)")
                #expect(result.errorMessage != nil, "id \(id): the body should be {\"error\": string}: \(result)")
            }
            #expect(try await server.http.get(creator, session: session.id).status == 200)
        }
    }
}
