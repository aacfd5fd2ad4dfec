import JamProtocol
import JamTestSupport

extension Party {
    /// A host and Eli with track 1 queued over REST, after Eli's socket sent a vote on a
    /// malformed item id and was refused; returns the party and the refusal's code.
    static func withARefusedVote(_ server: TestServer) async throws -> (party: Party, code: ErrorCode) {
        let party = try await Party.start(server, guests: ["Eli"])
        _ = try await server.api.add(party.host.token, party.id, testTrack(1))
        let eli = party.guests[0].socket
        eli.send(.vote(Vote(itemId: "not-a-uuid", value: 1)), id: "bad")
        let refusal = try await eli.next("refusal") { $0.error?.id == "bad" }
        guard let code = refusal.error?.code else { throw TestFailure("the bad vote was answered with \(refusal.event.type)") }
        return (party, code)
    }
}
