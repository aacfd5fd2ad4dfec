import Foundation
import JamCore
import JamProtocol
import JamTestSupport
import Logging
import Testing

@testable import JamServer

/// Ended sessions leave the store (and the server's memory) once their retention is over.
@Suite struct EndedSessionPurgeTests {
    /// The ids of the sessions in the data folder's SQLite store (read after the server stopped).
    static func storedIds(in folder: URL) async throws -> [SessionID] {
        let store = try SQLiteSessionStore.open(path: folder.appendingPathComponent("openjam.sqlite").path, logger: Logger(label: "test"))
        let ids = try await store.loadIndex().map(\.id)
        try await store.close()
        return ids
    }

    static func status(_ server: TestServer, _ token: String, _ id: SessionID) async throws -> Int {
        try await server.api.request("GET", "/api/v1/sessions/\(id)", token: token).status
    }

    @Test func anEndedSessionAnswers410UntilItsRetentionIsOverThen404AndLeavesTheStore() async throws {
        let folder = TestServer.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (ended, kept) = try await TestServer.with(dataDirectory: folder, configure: {
            // 5 s, so the first 410 is seen inside the retention on a busy CI machine (2 cores, ~1,150 tests at once).
            $0.endedRetentionMs = 5_000
            $0.endedSweepMs = 100
        }) { server in
            let host = try await server.api.guest("Host")
            let ended = try await server.api.create(host.token, CreateSessionRequest()).session.id
            let kept = try await server.api.create(host.token, CreateSessionRequest()).session.id
            let end = try await server.api.request("DELETE", "/api/v1/sessions/\(ended)", token: host.token)
            #expect(end.status == 200 || end.status == 204)
            #expect(try await Self.status(server, host.token, ended) == 410)
            // The 5 s retention plus 10 s of slack for a busy CI machine.
            let deadline = ContinuousClock.now + .seconds(15)
            while try await Self.status(server, host.token, ended) == 410, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(try await Self.status(server, host.token, ended) == 404)
            #expect(try await Self.status(server, host.token, kept) == 200)
            return (ended, kept)
        }
        let stored = try await Self.storedIds(in: folder)
        #expect(!stored.contains(ended))
        #expect(stored.contains(kept))
    }

    @Test func aSessionThatEndedBeforeARestartIsPurgedAtItsStoredTimeNotARetentionAfterTheRestart() async throws {
        let folder = TestServer.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let configure: (inout ServerConfiguration) -> Void = {
            // 10 s (with 6 s allowed below) for a busy CI machine (2 cores, ~1,150 tests at once).
            $0.endedRetentionMs = 10_000
            $0.endedSweepMs = 100
        }
        let (token, ended, endedAt) = try await TestServer.with(dataDirectory: folder, configure: configure) { server in
            let host = try await server.api.guest("Host")
            let ended = try await server.api.create(host.token, CreateSessionRequest()).session.id
            _ = try await server.api.request("DELETE", "/api/v1/sessions/\(ended)", token: host.token)
            return (host.token, ended, ContinuousClock.now)
        }
        #expect(try await Self.storedIds(in: folder).contains(ended))
        // The purge is overdue when the server comes back: it happens at once, where a
        // retention counted from the restart would keep the session another 10 s.
        try await Task.sleep(until: endedAt + .milliseconds(10_500))
        try await TestServer.with(dataDirectory: folder, configure: configure) { server in
            let deadline = ContinuousClock.now + .milliseconds(6_000)
            while try await Self.status(server, token, ended) == 410, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(try await Self.status(server, token, ended) == 404)
        }
        #expect(try await !Self.storedIds(in: folder).contains(ended))
    }

    @Test func withoutARetentionEndedSessionsStay() async throws {
        let folder = TestServer.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let ended = try await TestServer.with(dataDirectory: folder, configure: {
            $0.endedRetentionMs = nil
            $0.endedSweepMs = 100
        }) { server in
            let host = try await server.api.guest("Host")
            let ended = try await server.api.create(host.token, CreateSessionRequest()).session.id
            _ = try await server.api.request("DELETE", "/api/v1/sessions/\(ended)", token: host.token)
            try await Task.sleep(for: .milliseconds(800))
            #expect(try await Self.status(server, host.token, ended) == 410)
            return ended
        }
        #expect(try await Self.storedIds(in: folder).contains(ended))
    }
}
