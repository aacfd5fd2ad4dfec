import Foundation
import JamProtocol
import JamTestSupport
import Testing

@testable import JamServer

/// A host's new join code is the one that joins, and the old one stops joining, however the
/// request that set it ended.
@Suite struct JoinCodeRegenerationTests {
    @Test(.timeLimit(.minutes(1))) func aNewCodeWhoseCommitWentUnconfirmedJoinsOnceStoredAndTheOldOneNoLonger() async throws {
        let store = CommitFailureTests.RefusingStore()
        store.refusing.withLock { $0 = false }
        try await TestServer.with(store: store) { server in
            let host = try await server.api.guest("Host")
            let created = try await server.api.create(host.token)
            let (id, old) = (created.session.id, created.session.joinCode)
            // Applied, and its commit refused: the host hears it may still be stored.
            store.refusing.withLock { $0 = true }
            let regenerate = try await server.api.send(
                "PATCH", "/api/v1/sessions/\(id)", token: host.token, json: UpdateSessionRequest(regenerateJoinCode: true))
            #expect(regenerate.status == 503)
            #expect(regenerate.text.contains("applied on this server"), "\(regenerate.text)")
            store.refusing.withLock { $0 = false }

            let code = try await eventually("the session is readable again", timeout: .seconds(10)) {
                (try? await server.api.view(host.token, id))?.session.joinCode
            }
            #expect(code != old, "the new code is the session's")
            let guest = try await server.api.guest("Guest")
            #expect(try await server.api.join(guest.token, code: code).session.id == id, "the code the session shows joins it")
            let stale = try await server.api.send("POST", "/api/v1/sessions/join", token: guest.token, json: JoinSessionRequest(code: old))
            #expect(stale.status == 404, "the code the host replaced no longer joins: \(stale.status) \(stale.text)")
        }
    }

    @Test(.timeLimit(.minutes(1))) func twoNewCodesAskedForAtOnceLeaveTheLaterOneJoining() async throws {
        let store = StoreWaitTests.HangingStore(blocking: false)
        try await TestServer.with(store: store, configure: { $0.commitTiming.hangLimit = .seconds(20) }) { server in
            let host = try await server.api.guest("Host")
            let created = try await server.api.create(host.token)
            let (id, old) = (created.session.id, created.session.joinCode)
            // Both are applied while the store holds the first commit, and both wait for it.
            store.hang()
            defer { store.resume() }
            async let first = server.api.send(
                "PATCH", "/api/v1/sessions/\(id)", token: host.token, json: UpdateSessionRequest(regenerateJoinCode: true))
            async let second = server.api.send(
                "PATCH", "/api/v1/sessions/\(id)", token: host.token, json: UpdateSessionRequest(regenerateJoinCode: true))
            try await eventually("both changes wait for the store", timeout: .seconds(10)) { store.heldCount >= 1 }
            // The second is applied within this; should it come later, it finds the first settled.
            try await Task.sleep(for: .milliseconds(500))
            store.resume()
            let answers = try await [first, second]
            #expect(answers.map(\.status) == [200, 200], "\(answers.map(\.text))")

            let code = try await server.api.view(host.token, id).session.joinCode
            let answered = try answers.map { try $0.decode(SessionView.self).session.joinCode }
            #expect(code != old, "the session has a new code")
            #expect(Set(answered).count == 2 && answered.contains(code), "two new codes, and the session shows one of them: \(answered), \(code)")
            let guest = try await server.api.guest("Guest")
            #expect(try await server.api.join(guest.token, code: code).session.id == id, "the code the session shows joins it")
            for replaced in Set([old] + (try answers.map { try $0.decode(SessionView.self).session.joinCode })) where replaced != code {
                let stale = try await server.api.send(
                    "POST", "/api/v1/sessions/join", token: guest.token, json: JoinSessionRequest(code: replaced))
                #expect(stale.status == 404, "a replaced code no longer joins: \(replaced) \(stale.status)")
            }
        }
    }
}
