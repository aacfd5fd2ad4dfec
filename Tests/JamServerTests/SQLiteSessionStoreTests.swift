import Foundation
import JamProtocol
import JamTestSupport
import Logging
import Testing

@testable import JamServer

/// The embedded store's batch writes (group commit).
@Suite struct SQLiteSessionStoreTests {
    static func row(_ n: Int, seq: Int64, ended: Bool = false) -> StoredSession {
        StoredSession(
            id: JamID(String(format: "00000000-0000-0000-0003-%012d", n)), joinCode: "C\(n)", seq: seq, ended: ended,
            state: Array("{\"n\":\(n),\"seq\":\(seq)}".utf8))
    }

    @Test(arguments: [1, 100, SQLiteSessionStore.rowsPerStatement + 1, 2 * SQLiteSessionStore.rowsPerStatement + 7])
    func aBatchIsStoredWholeAndALaterBatchUpdatesItsRows(count: Int) async throws {
        let directory = TestServer.makeDataDirectory()
        let path = directory.appendingPathComponent("store.sqlite").path
        let store = try await SQLiteSessionStore.open(path: path, logger: Logger(label: "test"))
        try await store.write((0..<count).map { Self.row($0, seq: 1) })
        // Half the sessions move on (one ends); the rest keep their rows.
        try await store.write((0..<count).filter { $0 % 2 == 0 }.map { Self.row($0, seq: 7, ended: $0 == 0) })
        try await store.write([])
        try await store.close()

        let reopened = try await SQLiteSessionStore.open(path: path, logger: Logger(label: "test"))
        let rows = try await reopened.loadAll()
        try await reopened.close()
        #expect(rows.count == count)
        let byId = Dictionary(uniqueKeysWithValues: rows.map { ($0.id, $0) })
        for n in Set([0, 1, count / 2, count - 1]) where n < count {
            let stored = try #require(byId[Self.row(n, seq: 0).id])
            let expected = Self.row(n, seq: n % 2 == 0 ? 7 : 1, ended: n == 0)
            #expect(stored.seq == expected.seq)
            #expect(stored.ended == expected.ended)
            #expect(stored.joinCode == expected.joinCode)
            #expect(stored.state == expected.state)
        }
    }
}
