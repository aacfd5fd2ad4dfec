import Foundation
import JamTestSupport
import Logging
import NIOCore
import NIOPosix
import Testing

@testable import JamServer

/// The SQLite store's write-ahead log written out to full size when it opens
/// (`SQLiteLogReserve`), and what must not change because of it.
@Suite struct LogReserveTests {
    static let loop = MultiThreadedEventLoopGroup.singleton.next()
    static let id = SessionStoreTests.id(1)

    static var reservedBytes: Int {
        SQLiteLogReserve.bytes(frames: Int(SQLiteSessionStore.resetFrames + SQLiteSessionStore.reserveSlackFrames), pageSize: 4096)
    }

    func size(_ path: String) throws -> Int { try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? -1 }

    func commit(_ store: SQLiteSessionStore, _ writes: [StoreWrite]) async throws {
        try await store.commit(writes, on: Self.loop).get()
    }

    func newSession(_ store: SQLiteSessionStore) async throws {
        try await commit(store, [
            .index(StoredSessionEntry(id: Self.id, joinCode: "ABC234", codeIssuedAt: 5, ended: false, wakeAt: nil)),
            .snapshot(Self.id, SessionStoreTests.snapshot(0, seq: 0)),
        ])
    }

    @Test func aStoreOpenedWithAReservedLogHasItWrittenOutBeforeItsFirstCommit() async throws {
        let reserved = TestServer.makeDataDirectory().appendingPathComponent("store.sqlite").path
        let store = try SQLiteSessionStore.open(path: reserved, logger: Logger(label: "test"), reserveLog: true)
        #expect(try size(reserved + "-wal") == Self.reservedBytes)
        try await newSession(store)
        #expect(try size(reserved + "-wal") == Self.reservedBytes, "the first commits write inside the reserved log")
        try await store.close()

        let plain = TestServer.makeDataDirectory().appendingPathComponent("store.sqlite").path
        let unreserved = try SQLiteSessionStore.open(path: plain, logger: Logger(label: "test"))
        try await newSession(unreserved)
        #expect(try size(plain + "-wal") < 100_000, "without it the log is as long as what was written")
        try await unreserved.close()
    }

    @Test func aKilledStoreWithAReservedLogComesBackWithEveryCommitAndNothingElse() async throws {
        let folder = TestServer.makeDataDirectory()
        let path = folder.appendingPathComponent("store.sqlite").path
        let store = try SQLiteSessionStore.open(path: path, logger: Logger(label: "test"), reserveLog: true)
        try await newSession(store)
        for lsn in 1...50 { try await commit(store, [.record(Self.id, SessionStoreTests.record(Int64(lsn), seq: Int64(lsn)))]) }

        // The files as a kill -9 leaves them: every commit fsynced in the log, nothing
        // checkpointed, no shared-memory index (recovery rebuilds it from the log).
        let killed = TestServer.makeDataDirectory().appendingPathComponent("store.sqlite").path
        try FileManager.default.copyItem(atPath: path, toPath: killed)
        try FileManager.default.copyItem(atPath: path + "-wal", toPath: killed + "-wal")
        try await store.close()

        let recovered = try SQLiteSessionStore.open(path: killed, logger: Logger(label: "test"), reserveLog: true)
        #expect(try size(killed + "-wal") == Self.reservedBytes, "a log that long already is left as it is")
        let stored = try #require(try await recovered.loadSession(Self.id))
        #expect(stored.records == (1...50).map { SessionStoreTests.record(Int64($0), seq: Int64($0)) })
        try await commit(recovered, [.record(Self.id, SessionStoreTests.record(51, seq: 51))])
        try await recovered.close()

        let reopened = try SQLiteSessionStore.open(path: killed, logger: Logger(label: "test"), reserveLog: true)
        #expect(try await reopened.loadSession(Self.id)?.records.map(\.lsn) == Array(1...51))
        try await reopened.close()
    }

    @Test func reservingAFileKeepsWhatItHoldsAndOnlyAddsZeros() throws {
        let path = TestServer.makeDataDirectory().appendingPathComponent("log").path
        let held = [UInt8](repeating: 0xAB, count: 100)
        #expect(FileManager.default.createFile(atPath: path, contents: Data(held)))

        #expect(try SQLiteLogReserve.reserve(path: path, bytes: 5_000) == 4_900)
        let reserved = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(reserved.count == 5_000)
        #expect(Array(reserved.prefix(100)) == held)
        #expect(reserved.dropFirst(100).allSatisfy { $0 == 0 })

        #expect(try SQLiteLogReserve.reserve(path: path, bytes: 3_000) == 0, "a longer file is not cut back")
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))) == reserved)
    }

    @Test func aLogThatCannotBeOpenedIsAnErrorNamingTheFileAndTheStep() throws {
        let path = TestServer.makeDataDirectory().appendingPathComponent("missing-wal").path
        #expect(throws: LogReserveFailure(path: path, step: "open", errno: ENOENT)) { try SQLiteLogReserve.reserve(path: path, bytes: 4_096) }
        #expect(LogReserveFailure(path: path, step: "open", errno: ENOENT).description.hasSuffix("(open): No such file or directory"))
    }

    @Test func theLogStartsOverBetweenBatchesNotInsideOne() async throws {
        let path = TestServer.makeDataDirectory().appendingPathComponent("store.sqlite").path
        let store = try SQLiteSessionStore.open(path: path, logger: Logger(label: "test"), reserveLog: true)
        try await newSession(store)
        // Big records, a few to a batch, until the log passes the mark (no checkpointer runs here).
        let big = [UInt8](repeating: 0x5A, count: 6_000)
        var lsn: Int64 = 0
        while store.logFrames < SQLiteSessionStore.resetFrames {
            var batch: [StoreWrite] = []
            for _ in 0..<8 {
                lsn += 1
                batch.append(.record(Self.id, LogRecord(lsn: lsn, firstSeq: lsn - 1, lastSeq: lsn, wakeAt: nil, inputs: big)))
            }
            try await commit(store, batch)
        }
        // The batch that crosses the mark is answered with the checkpoint still to come: its
        // fsync of the database file is no part of the batch's wait.
        let crossed = store.logFrames
        lsn += 1
        try await commit(store, [.record(Self.id, SessionStoreTests.record(lsn, seq: lsn))])
        #expect(store.logFrames > crossed, "the log grew: nothing was checkpointed inside the commit")
        store.afterCommit()
        lsn += 1
        try await commit(store, [.record(Self.id, SessionStoreTests.record(lsn, seq: lsn))])
        #expect(store.logFrames < 16, "the log started over after the upkeep between batches: \(store.logFrames) frames")
        #expect(try await store.loadSession(Self.id)?.records.count == Int(lsn))
        try await store.close()
    }
}
