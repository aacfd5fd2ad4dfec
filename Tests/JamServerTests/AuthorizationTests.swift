import JamTestSupport
import Foundation
import JamProtocol
import Testing

/// Every host-only action tried by a co-host, a member, a member of another session
/// and an unauthenticated caller, over REST and the socket: refused, state unchanged.
@Suite struct AuthorizationTests {
    /// A session with a host, a co-host and a member, one item playing and one queued,
    /// plus the host of a second session.
    struct Cast {
        let party: Party
        let cohost: Party.Person
        let member: Party.Person
        let outsider: GuestAuthResponse
        let queuedItem: ItemID

        static func assemble(_ server: TestServer) async throws -> Cast {
            let party = try await Party.start(server, guests: ["Cora", "Milo"])
            let cohost = party.guests[0], member = party.guests[1]
            let promote = try await server.api.send("PUT", "/api/v1/sessions/\(party.id)/members/\(cohost.id)/role", token: party.host.token, json: RoleRequest(role: .cohost))
            #expect(promote.status == 200)
            _ = try await server.api.add(party.host.token, party.id, testTrack(1))
            let queued = try await server.api.add(party.host.token, party.id, testTrack(2)).decode(QueueItem.self)
            try await member.socket.next("track 1 committed") { $0.playCommit != nil }
            let outsider = try await server.api.guest("Otto")
            _ = try await server.api.create(outsider.token)
            return Cast(party: party, cohost: cohost, member: member, outsider: outsider, queuedItem: queued.id)
        }
    }

    struct Action: Sendable, CustomStringConvertible {
        let description: String
        let hostOnly: Bool
        let method: String
        let path: @Sendable (Cast) -> String
        let body: String?
    }

    static let actions: [Action] = [
        Action(description: "promote a member", hostOnly: true, method: "PUT", path: { "/api/v1/sessions/\($0.party.id)/members/\($0.member.id)/role" }, body: #"{"role":"cohost"}"#),
        Action(description: "kick a member", hostOnly: true, method: "DELETE", path: { "/api/v1/sessions/\($0.party.id)/members/\($0.member.id)" }, body: nil),
        Action(description: "regenerate the join code", hostOnly: true, method: "PATCH", path: { "/api/v1/sessions/\($0.party.id)" }, body: #"{"regenerateJoinCode":true}"#),
        Action(description: "end the session", hostOnly: true, method: "DELETE", path: { "/api/v1/sessions/\($0.party.id)" }, body: nil),
        Action(description: "skip", hostOnly: false, method: "POST", path: { "/api/v1/sessions/\($0.party.id)/skip" }, body: nil),
        Action(description: "pause", hostOnly: false, method: "PATCH", path: { "/api/v1/sessions/\($0.party.id)" }, body: #"{"playback":"pause"}"#),
        Action(description: "lock", hostOnly: false, method: "PATCH", path: { "/api/v1/sessions/\($0.party.id)" }, body: #"{"settings":{"locked":true}}"#),
        Action(description: "seek", hostOnly: false, method: "PATCH", path: { "/api/v1/sessions/\($0.party.id)" }, body: #"{"seekMs":1000}"#),
        Action(description: "remove another member's item", hostOnly: false, method: "DELETE", path: { "/api/v1/sessions/\($0.party.id)/queue/\($0.queuedItem)" }, body: nil),
    ]

    enum Caller: String, CaseIterable, Sendable {
        case cohost, member, outsider, unauthenticated, badToken
    }

    @Test(arguments: Caller.allCases)
    func restRefusesHostActions(caller: Caller) async throws {
        try await TestServer.with { server in
            let cast = try await Cast.assemble(server)
            let before = try await server.api.view(cast.party.host.token, cast.party.id)
            for action in Self.actions {
                let token: String?
                let expected: (Int, ErrorCode)?
                switch caller {
                case .cohost:
                    token = cast.cohost.token
                    expected = action.hostOnly ? (403, .forbidden) : nil
                case .member:
                    token = cast.member.token
                    expected = (403, .forbidden)
                case .outsider:
                    token = cast.outsider.token
                    expected = (403, .notMember)
                case .unauthenticated:
                    token = nil
                    expected = (401, .unauthorized)
                case .badToken:
                    token = cast.member.token + "x"
                    expected = (401, .unauthorized)
                }
                guard let expected else { continue }
                let response = try await server.api.request(action.method, action.path(cast), token: token, body: action.body.map { Data($0.utf8) })
                #expect(response.status == expected.0, "\(caller) \(action): \(response.status) \(response.text)")
                #expect(response.errorCode == expected.1, "\(caller) \(action): \(response.text)")
                let after = try await server.api.view(cast.party.host.token, cast.party.id)
                #expect(after == before, "\(caller) \(action) changed the session")
            }
            await cast.party.close()
        }
    }

    @Test func cohostMayUseHostControlsButNotHostOnlyActions() async throws {
        try await TestServer.with { server in
            let cast = try await Cast.assemble(server)
            let lock = try await server.api.send("PATCH", "/api/v1/sessions/\(cast.party.id)", token: cast.cohost.token, json: UpdateSessionRequest(settings: SettingsPatch(locked: true)))
            #expect(lock.status == 200)
            #expect(try lock.decode(SessionView.self).session.settings.locked)
            let skip = try await server.api.request("POST", "/api/v1/sessions/\(cast.party.id)/skip", token: cast.cohost.token)
            #expect(skip.status == 200)
            #expect(try skip.decode(SessionView.self).nowPlaying?.item.id == cast.queuedItem)
            await cast.party.close()
        }
    }

    @Test func socketRefusesHostActionsFromCohostAndMember() async throws {
        try await TestServer.with { server in
            let cast = try await Cast.assemble(server)
            let before = try await server.api.view(cast.party.host.token, cast.party.id)
            let hostOnly: [ClientCommand] = [.promote(Promote(userId: cast.member.id)), .kick(UserRef(userId: cast.member.id))]
            let controls: [ClientCommand] = [
                .skip(Skip()), .pause(Pause()), .seek(Seek(positionMs: 1000)), .updateSettings(SettingsPatch(locked: true)),
                .removeFromQueue(ItemRef(itemId: cast.queuedItem)),
            ]
            for (person, commands) in [(cast.cohost, hostOnly), (cast.member, hostOnly + controls)] {
                for (index, command) in commands.enumerated() {
                    let id = "\(person.auth.displayName)-\(index)"
                    person.socket.send(command, id: id)
                    let reply = try await person.socket.next("reply \(id)") { $0.error?.id == id || $0.ack?.id == id }
                    #expect(reply.error?.code == .forbidden, "\(person.auth.displayName) \(command.type)")
                }
            }
            let after = try await server.api.view(cast.party.host.token, cast.party.id)
            #expect(after == before)
            await cast.party.close()
        }
    }

    @Test func socketRefusesOutsidersAndUnauthenticatedCallers() async throws {
        try await TestServer.with { server in
            let cast = try await Cast.assemble(server)
            let outsider = TestSocket(server: server, session: cast.party.id, token: cast.outsider.token)
            let refusal = try await outsider.next(.error)
            #expect(refusal.error?.code == .notMember)
            #expect(try await outsider.closedByServer()?.closeCode == .init(codeNumber: 4403))

            let anonymous = TestSocket(server: server, session: cast.party.id, token: nil)
            #expect(try await anonymous.next(.error).error?.code == .unauthorized)
            #expect(try await anonymous.closedByServer()?.closeCode == .init(codeNumber: 4401))

            let forged = TestSocket(server: server, session: cast.party.id, token: cast.member.token.replacingOccurrences(of: "v1.", with: "v1.e"))
            #expect(try await forged.next(.error).error?.code == .unauthorized)
            #expect(try await forged.closedByServer()?.closeCode == .init(codeNumber: 4401))
            await cast.party.close()
        }
    }
}
