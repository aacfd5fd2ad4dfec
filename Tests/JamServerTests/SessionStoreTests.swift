import Foundation
import JamCore
import JamProtocol
import JamTestSupport
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import Testing

@testable import JamServer

/// The store protocol's promises, checked against every implementation alike.
@Suite struct SessionStoreTests {
    enum Kind: String, CaseIterable, CustomTestStringConvertible {
        case sqlite, memory, postgres
        var testDescription: String { rawValue }

        /// Every store this run can test: PostgreSQL when the run has a cluster (or requires one).
        static var testable: [Kind] { allCases.filter { $0 != .postgres || TestPostgres.enabled } }
    }

    /// A store of `kind`, and a way to open the same store again (for "after a restart").
    struct Subject {
        let store: any SessionStore
        let reopen: () async throws -> any SessionStore
    }

    static func subject(_ kind: Kind) async throws -> Subject {
        switch kind {
        case .sqlite:
            let path = TestServer.makeDataDirectory().appendingPathComponent("store.sqlite").path
            let open = { try SQLiteSessionStore.open(path: path, logger: Logger(label: "test")) as any SessionStore }
            return Subject(store: try open(), reopen: open)
        case .memory:
            let store = InMemorySessionStore()
            return Subject(store: store, reopen: { store })
        case .postgres:
            let location = try await TestPostgres.freshDatabase()
            let open = { try await PostgresSessionStore.open(location, logger: Logger(label: "test")) as any SessionStore }
            return Subject(store: try await open(), reopen: open)
        }
    }

    static let loop = MultiThreadedEventLoopGroup.singleton.next()

    static func id(_ n: Int) -> SessionID { JamID(String(format: "00000000-0000-0000-0003-%012d", n)) }

    static func record(_ lsn: Int64, seq: Int64, wakeAt: Millis? = nil, answer: StoredAnswer? = nil) -> LogRecord {
        LogRecord(lsn: lsn, firstSeq: seq - 1, lastSeq: seq, wakeAt: wakeAt, inputs: Array("[\(lsn)]".utf8), answer: answer)
    }

    static func snapshot(_ lsn: Int64, seq: Int64, wakeAt: Millis? = nil) -> SessionSnapshot {
        SessionSnapshot(lsn: lsn, seq: seq, wakeAt: wakeAt, state: Array("{\"at\":\(lsn)}".utf8), answers: [StoredAnswer(key: "u c\(lsn)", frame: "{}")])
    }

    func commit(_ store: any SessionStore, _ writes: [StoreWrite]) async throws {
        try await store.commit(writes, on: Self.loop).get()
    }

    @Test(arguments: Kind.testable)
    func aPurgedSessionLeavesNothingBehindAndTheOthersStay(_ kind: Kind) async throws {
        let subject = try await Self.subject(kind)
        let gone = Self.id(1), kept = Self.id(2)
        for id in [gone, kept] {
            try await commit(subject.store, [
                .index(StoredSessionEntry(id: id, joinCode: id == gone ? "ABC234" : "XYZ789", codeIssuedAt: 5, ended: id == gone, wakeAt: nil)),
                .snapshot(id, Self.snapshot(0, seq: 0)),
                .record(id, Self.record(1, seq: 1, wakeAt: 900)),
                .snapshot(id, Self.snapshot(1, seq: 1, wakeAt: 900)),
                .record(id, Self.record(2, seq: 2, wakeAt: 900)),
            ])
        }
        try await commit(subject.store, [.purge(gone)])
        try await subject.store.close()

        let store = try await subject.reopen()
        #expect(try await store.loadIndex().map(\.id) == [kept])
        #expect(try await store.loadSession(gone) == nil)
        #expect(try await store.loadSession(kept)?.records.map(\.lsn) == [1, 2])
        // A second purge of the same session (another node's, say) changes nothing.
        try await commit(store, [.purge(gone)])
        #expect(try await store.loadIndex().map(\.id) == [kept])
        try await store.close()
    }

    @Test(arguments: Kind.testable)
    func aSessionComesBackAsItsSnapshotAndTheRecordsAfterIt(_ kind: Kind) async throws {
        let subject = try await Self.subject(kind)
        let id = Self.id(1)
        try await commit(subject.store, [
            .index(StoredSessionEntry(id: id, joinCode: "ABC234", codeIssuedAt: 5, ended: false, wakeAt: nil)),
            .snapshot(id, Self.snapshot(0, seq: 0)),
        ])
        try await commit(subject.store, (1...5).map { .record(id, Self.record($0, seq: $0 * 2, answer: $0 == 3 ? StoredAnswer(key: "u c", frame: "{\"ack\":3}") : nil)) })
        try await subject.store.close()

        let store = try await subject.reopen()
        let index = try await store.loadIndex()
        #expect(index == [StoredSessionEntry(id: id, joinCode: "ABC234", codeIssuedAt: 5, ended: false, wakeAt: nil)])
        let stored = try #require(try await store.loadSession(id))
        #expect(stored.snapshots == [Self.snapshot(0, seq: 0)])
        #expect(stored.records == (1...5).map { Self.record($0, seq: $0 * 2, answer: $0 == 3 ? StoredAnswer(key: "u c", frame: "{\"ack\":3}") : nil) })
        #expect(try await store.loadSession(Self.id(2)) == nil)
        try await store.close()
    }

    @Test(arguments: Kind.testable)
    func aSessionInTheIndexWithoutASnapshotIsDamageNotUnknown(_ kind: Kind) async throws {
        let subject = try await Self.subject(kind)
        let id = Self.id(1)
        try await commit(subject.store, [.index(StoredSessionEntry(id: id, joinCode: "ABC234", codeIssuedAt: 5, ended: false, wakeAt: nil))])
        await #expect(throws: DamagedStoredSession.snapshotsMissing(id)) { try await subject.store.loadSession(id) }
        #expect(try await subject.store.loadSession(Self.id(2)) == nil, "a session the store never had is unknown")
        try await subject.store.close()
    }

    @Test func aReadTransactionSeesTheDatabaseAsItsFirstReadDidWhateverIsCommittedMeanwhile() async throws {
        let path = TestServer.makeDataDirectory().appendingPathComponent("store.sqlite").path
        try await SQLiteSessionStore.open(path: path, logger: Logger(label: "test")).close()
        let reader = try SQLiteDatabase(path: path, create: false)
        let writer = try SQLiteDatabase(path: path, create: false)
        let count = { try reader.query("SELECT count(*) FROM sessions") { $0.integer(0) }.first ?? -1 }
        let (before, during) = try reader.readTransaction {
            let before = try count()
            try writer.run("INSERT INTO sessions (id, join_code, code_issued_at) VALUES ('s', 'ABC234', 1)")
            return (before, try count())
        }
        #expect(before == 0 && during == 0, "a write committed inside the read is not seen by it")
        #expect(try count() == 1, "the next read sees it")
        reader.close()
        writer.close()
    }

    /// A SQLite store holding session 1 (its creation snapshot, then `records`), closed again,
    /// with `damage` run on its file: where the store is, to open again.
    func damagedStore(records: [LogRecord], damage: String) async throws -> String {
        let path = TestServer.makeDataDirectory().appendingPathComponent("store.sqlite").path
        let store = try SQLiteSessionStore.open(path: path, logger: Logger(label: "test"))
        let id = Self.id(1)
        try await commit(store, [
            .index(StoredSessionEntry(id: id, joinCode: "ABC234", codeIssuedAt: 5, ended: false, wakeAt: nil)),
            .snapshot(id, Self.snapshot(0, seq: 0)),
        ])
        if !records.isEmpty { try await commit(store, records.map { .record(id, $0) }) }
        try await store.close()
        let database = try SQLiteDatabase(path: path, create: false)
        try database.run(damage)
        database.close()
        return path
    }

    @Test(arguments: [("answer", "has an answered command id without its answer"), ("answer_key", "has an answer without the command id it answered")])
    func aLogRecordWithHalfAnAnswerIsRefusedNotReadAsAnEmptyAnswer(column: String, problem: String) async throws {
        let id = Self.id(1)
        let path = try await damagedStore(
            records: (1...3).map { Self.record($0, seq: $0, answer: StoredAnswer(key: "u c\($0)", frame: "{\"ack\":\($0)}")) },
            damage: "UPDATE session_log SET \(column) = NULL WHERE lsn = 2")

        let reopened = try SQLiteSessionStore.open(path: path, logger: Logger(label: "test"))
        await #expect(throws: DamagedStoredSession(session: id, part: .record(2), problem: problem)) { try await reopened.loadSession(id) }
        try await reopened.close()
    }

    @Test func aSnapshotWhoseAnswersCannotBeReadIsRefusedAsDamage() async throws {
        let id = Self.id(1)
        let path = try await damagedStore(records: [], damage: "UPDATE session_snapshots SET answers = X'7B6E6F' WHERE lsn = 0")

        let reopened = try SQLiteSessionStore.open(path: path, logger: Logger(label: "test"))
        do {
            _ = try await reopened.loadSession(id)
            Issue.record("a snapshot with unreadable answers loaded")
        } catch let damage as DamagedStoredSession {
            #expect(damage.session == id)
            #expect(damage.part == .snapshot(0))
            #expect(damage.problem.hasPrefix("has answers that cannot be read"))
        }
        try await reopened.close()
    }

    @Test func aSnapshotAnswerWhoseCommandFingerprintCannotBeReadIsDamageNotAnAnswerToAnything() throws {
        let good = StoredAnswer(key: "u web-1", frame: "{}", command: RequestFingerprint.text(RequestFingerprint.forSocket(.skip)))
        let bytes = LogCoding.encode([good, StoredAnswer(key: "u web-2", frame: "{}", command: "not hex")])
        #expect(throws: DamagedStoredSession(
            session: Self.id(1), part: .snapshot(4),
            problem: #"has answers that cannot be read (the command fingerprint of u web-2 is "not hex")"#)) {
            try LogCoding.decodeAnswers(bytes, session: Self.id(1), snapshotAt: 4)
        }
        #expect(try LogCoding.decodeAnswers(LogCoding.encode([good]), session: Self.id(1), snapshotAt: 4) == [good])
    }

    @Test(arguments: Kind.testable)
    func theStoreKeepsTheTwoNewestSnapshotsAndTheRecordsAfterTheOlder(_ kind: Kind) async throws {
        let subject = try await Self.subject(kind)
        let id = Self.id(1)
        try await commit(subject.store, [.index(StoredSessionEntry(id: id, joinCode: "X", codeIssuedAt: 0, ended: false, wakeAt: nil)), .snapshot(id, Self.snapshot(0, seq: 0))])
        try await commit(subject.store, (1...10).map { .record(id, Self.record($0, seq: $0)) })
        try await commit(subject.store, [.snapshot(id, Self.snapshot(4, seq: 4))])
        var stored = try #require(try await subject.store.loadSession(id))
        #expect(stored.snapshots.map(\.lsn) == [0, 4])
        #expect(stored.records.map(\.lsn) == Array(1...10))
        // A third snapshot: the first and the records it included go.
        try await commit(subject.store, [.snapshot(id, Self.snapshot(8, seq: 8)), .record(id, Self.record(11, seq: 11))])
        stored = try #require(try await subject.store.loadSession(id))
        #expect(stored.snapshots.map(\.lsn) == [4, 8])
        #expect(stored.records.map(\.lsn) == Array(5...11))
        try await subject.store.close()
    }

    @Test(arguments: Kind.testable)
    func aDroppedTailTakesTheSnapshotsFromItAndTheNextRecordTakesItsNumber(_ kind: Kind) async throws {
        let subject = try await Self.subject(kind)
        let id = Self.id(1), other = Self.id(2)
        for session in [id, other] {
            try await commit(subject.store, [
                .index(StoredSessionEntry(id: session, joinCode: session == id ? "ABC234" : "XYZ789", codeIssuedAt: 0, ended: false, wakeAt: nil)),
                .snapshot(session, Self.snapshot(0, seq: 0)),
            ])
            try await commit(subject.store, (1...5).map { .record(session, Self.record($0, seq: $0)) } + [.snapshot(session, Self.snapshot(2, seq: 2)), .snapshot(session, Self.snapshot(5, seq: 5))])
        }
        let replacement = LogRecord(lsn: 5, firstSeq: 4, lastSeq: 5, wakeAt: nil, inputs: Array("[new]".utf8), answer: nil)
        try await commit(subject.store, [.dropTail(id, from: 5), .record(id, replacement), .record(id, Self.record(6, seq: 6))])
        try await subject.store.close()

        let store = try await subject.reopen()
        let stored = try #require(try await store.loadSession(id))
        #expect(stored.snapshots.map(\.lsn) == [2], "the snapshot written after the dropped record is gone")
        #expect(stored.records == [Self.record(3, seq: 3), Self.record(4, seq: 4), replacement, Self.record(6, seq: 6)])
        let untouched = try #require(try await store.loadSession(other))
        #expect(untouched.snapshots.map(\.lsn) == [2, 5])
        #expect(untouched.records.map(\.lsn) == [3, 4, 5])
        try await store.close()
    }

    @Test(arguments: Kind.testable)
    func theIndexSaysWhenEachSessionNextWakesAndWhichHaveEnded(_ kind: Kind) async throws {
        let subject = try await Self.subject(kind)
        let (a, b, c) = (Self.id(1), Self.id(2), Self.id(3))
        try await commit(subject.store, [
            .index(StoredSessionEntry(id: a, joinCode: "A", codeIssuedAt: 1, ended: false, wakeAt: nil)),
            .snapshot(a, Self.snapshot(0, seq: 0, wakeAt: 100)),
            .index(StoredSessionEntry(id: b, joinCode: "B", codeIssuedAt: 2, ended: false, wakeAt: nil)),
            .snapshot(b, Self.snapshot(0, seq: 0, wakeAt: 100)),
            .record(b, Self.record(1, seq: 1, wakeAt: 250)),
            .record(b, Self.record(2, seq: 2, wakeAt: nil)),
            .index(StoredSessionEntry(id: c, joinCode: "C", codeIssuedAt: 3, ended: false, wakeAt: nil)),
            .snapshot(c, Self.snapshot(0, seq: 0)),
        ])
        try await commit(subject.store, [.index(StoredSessionEntry(id: c, joinCode: "C2", codeIssuedAt: 9, ended: true, wakeAt: nil))])
        let index = Dictionary(uniqueKeysWithValues: try await subject.store.loadIndex().map { ($0.id, $0) })
        #expect(index[a]?.wakeAt == 100, "the snapshot's deadline when no record follows it")
        #expect(index[b]?.wakeAt == nil, "the newest record's: nothing to wake for")
        #expect(index[c] == StoredSessionEntry(id: c, joinCode: "C2", codeIssuedAt: 9, ended: true, wakeAt: nil))
        try await subject.store.close()
    }

    @Test(arguments: Kind.testable)
    func aBatchOfThousandsOfWritesIsOneCommit(_ kind: Kind) async throws {
        let subject = try await Self.subject(kind)
        var writes: [StoreWrite] = []
        for n in 0..<2_000 {
            let id = Self.id(n)
            writes += [.index(StoredSessionEntry(id: id, joinCode: "C\(n)", codeIssuedAt: 0, ended: false, wakeAt: nil)),
                       .snapshot(id, Self.snapshot(0, seq: 0)), .record(id, Self.record(1, seq: 1))]
        }
        try await commit(subject.store, writes)
        #expect(try await subject.store.loadIndex().count == 2_000)
        #expect(try await subject.store.loadSession(Self.id(1_999))?.records.map(\.lsn) == [1])
        try await subject.store.close()
    }

    @Test func checkpointsMoveTheWriteAheadLogIntoTheDatabaseBesideTheCommits() async throws {
        let directory = TestServer.makeDataDirectory()
        let path = directory.appendingPathComponent("store.sqlite").path
        let store = try SQLiteSessionStore.open(path: path, logger: Logger(label: "test"))
        let id = Self.id(1)
        try await commit(store, [.index(StoredSessionEntry(id: id, joinCode: "X", codeIssuedAt: 0, ended: false, wakeAt: nil)), .snapshot(id, Self.snapshot(0, seq: 0))])
        for lsn in 1...200 { try await commit(store, [.record(id, Self.record(Int64(lsn), seq: Int64(lsn)))]) }
        let sizeBefore = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
        let result = try store.checkpointNow()
        #expect(result.walPages > 0)
        #expect(result.checkpointed == result.walPages, "a passive checkpoint with no reader in the way takes the whole log")
        let sizeAfter = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
        #expect(sizeAfter > sizeBefore)
        // The log starts over after a complete checkpoint: the next commit writes at its start.
        try await commit(store, [.record(id, Self.record(201, seq: 201))])
        #expect(try store.checkpointNow().walPages <= 4)
        #expect(try await store.loadSession(id)?.records.count == 201)
        try await store.close()
    }

    @Test func aDataFolderOfTheReleaseBeforeTheLogOpensWithEverySessionAsItsFirstSnapshot() async throws {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/release-2026-11")
        let copy = TestServer.makeDataDirectory().appendingPathComponent("openjam.sqlite")
        try FileManager.default.copyItem(at: fixture.appendingPathComponent("openjam.sqlite"), to: copy)
        let store = try SQLiteSessionStore.open(path: copy.path, logger: Logger(label: "test"))
        let index = try await store.loadIndex()
        #expect(index.count == 4)
        #expect(index.filter(\.ended).count == 1)
        for entry in index where !entry.ended {
            let stored = try #require(try await store.loadSession(entry.id))
            #expect(stored.snapshots.count == 1)
            let snapshot = try #require(stored.snapshots.first)
            let state = try LogCoding.decodeState(snapshot.state)
            #expect(state.id == entry.id)
            #expect(state.joinCode == entry.joinCode)
            #expect(entry.codeIssuedAt == state.createdAt)
            #expect(snapshot.seq == state.seq)
            #expect(entry.wakeAt == state.nextDeadline())
            #expect(stored.records.isEmpty)
        }
        try await store.close()
        // Opening it again applies nothing twice.
        let again = try SQLiteSessionStore.open(path: copy.path, logger: Logger(label: "test"))
        #expect(try await again.loadIndex().count == 4)
        try await again.close()
    }
}

/// What only a store shared by several nodes promises.
@Suite(.enabled(if: TestPostgres.enabled, "needs PostgreSQL (JAM_TEST_DATABASE_URL)"))
struct SharedStoreTests {
    static let loop = MultiThreadedEventLoopGroup.singleton.next()

    func commit(_ store: any SessionStore, _ writes: [StoreWrite]) async throws {
        try await store.commit(writes, on: Self.loop).get()
    }

    func newSession(_ id: SessionID, code: String) -> [StoreWrite] {
        [.index(StoredSessionEntry(id: id, joinCode: code, codeIssuedAt: 7, ended: false, wakeAt: nil)), .snapshot(id, SessionStoreTests.snapshot(0, seq: 0))]
    }

    @Test func aBatchThatDoesNotFollowTheStoredLogIsRefusedWhole() async throws {
        let location = try await TestPostgres.freshDatabase()
        let (nodeA, nodeB) = (try await PostgresSessionStore.open(location, logger: Logger(label: "a")), try await PostgresSessionStore.open(location, logger: Logger(label: "b")))
        let (id, other) = (SessionStoreTests.id(1), SessionStoreTests.id(2))
        try await commit(nodeA, newSession(id, code: "AAAA") + newSession(other, code: "BBBB"))
        try await commit(nodeA, (1...3).map { .record(id, SessionStoreTests.record($0, seq: $0)) })
        // Node B, behind, appends its own record 3 together with a change to another session.
        await #expect(throws: StoreConflict.self) {
            try await commit(nodeB, [.record(other, SessionStoreTests.record(1, seq: 1)), .record(id, SessionStoreTests.record(3, seq: 99))])
        }
        #expect(try await nodeA.loadSession(id)?.records.map(\.lastSeq) == [1, 2, 3], "the first writer's record stands")
        #expect(try await nodeA.loadSession(other)?.records.isEmpty == true, "nothing of the refused batch is stored")
        // A gap is refused too: record 5 cannot follow record 3.
        await #expect(throws: StoreConflict.self) { try await commit(nodeB, [.record(id, SessionStoreTests.record(5, seq: 5))]) }
        try await commit(nodeB, [.record(id, SessionStoreTests.record(4, seq: 4))])
        #expect(try await nodeA.records(id, after: 2).map(\.lsn) == [3, 4])
        try await nodeA.close()
        try await nodeB.close()
    }

    @Test func aBatchWithOneRecordNumberTwiceIsAConflictNotAFailureToRetry() async throws {
        let location = try await TestPostgres.freshDatabase()
        let node = try await PostgresSessionStore.open(location, logger: Logger(label: "a"))
        let (id, other) = (SessionStoreTests.id(6), SessionStoreTests.id(7))
        try await commit(node, newSession(id, code: "TWICE1") + newSession(other, code: "TWICE2"))
        // A copy let go still had record 1 queued when the session, read again, wrote its own.
        let twice: [StoreWrite] = [
            .record(id, SessionStoreTests.record(1, seq: 1)), .record(other, SessionStoreTests.record(1, seq: 1)),
            .record(id, SessionStoreTests.record(1, seq: 7)),
        ]
        let conflict = await #expect(throws: StoreConflict.self) { try await commit(node, twice) }
        #expect(conflict?.sessions == [id])
        #expect(try await node.records(other, after: 0).isEmpty, "nothing of the refused batch is stored")
        // Without the session's writes the rest goes through, as the pipeline tries it again.
        try await commit(node, [.record(other, SessionStoreTests.record(1, seq: 1))])
        try await commit(node, [.record(id, SessionStoreTests.record(1, seq: 7))])
        #expect(try await node.records(id, after: 0).map(\.lastSeq) == [7])
        try await node.close()
    }

    @Test func aBatchTriedAgainAfterItsCommitWentThroughIsTakenAsStored() async throws {
        let location = try await TestPostgres.freshDatabase()
        let node = try await PostgresSessionStore.open(location, logger: Logger(label: "a"))
        let id = SessionStoreTests.id(5)
        try await commit(node, newSession(id, code: "AGAIN1"))
        let batch: [StoreWrite] = (1...2).map { .record(id, SessionStoreTests.record($0, seq: $0)) }
        try await commit(node, batch)
        // The commit's answer was lost: the same batch comes again, then with what came since.
        try await commit(node, batch)
        try await commit(node, batch + [.record(id, SessionStoreTests.record(3, seq: 3))])
        #expect(try await node.records(id, after: 0).map(\.lsn) == [1, 2, 3])
        // Another node's record in the same place is still a conflict, and changes nothing.
        await #expect(throws: StoreConflict.self) { try await commit(node, [.record(id, SessionStoreTests.record(3, seq: 99))]) }
        await #expect(throws: StoreConflict.self) {
            try await commit(node, [.record(id, SessionStoreTests.record(3, seq: 99)), .record(id, SessionStoreTests.record(4, seq: 100))])
        }
        // So is a batch that ends in the stored record but differs before it.
        await #expect(throws: StoreConflict.self) {
            try await commit(node, [.record(id, SessionStoreTests.record(2, seq: 50)), .record(id, SessionStoreTests.record(3, seq: 3))])
        }
        #expect(try await node.records(id, after: 0).map(\.lastSeq) == [1, 2, 3])
        try await node.close()
    }

    @Test func aSessionCreatedUnderAnIdAnotherNodeCreatedFirstIsRefusedAndChangesNothing() async throws {
        let location = try await TestPostgres.freshDatabase()
        let (nodeA, nodeB) = (try await PostgresSessionStore.open(location, logger: Logger(label: "a")), try await PostgresSessionStore.open(location, logger: Logger(label: "b")))
        let (id, other) = (SessionStoreTests.id(8), SessionStoreTests.id(9))
        try await commit(nodeA, newSession(other, code: "OTHER9"))
        // The create was sent again, with its idempotency key, to node B while node A could not
        // reach the database; node B created the session and went on with it.
        try await commit(nodeB, newSession(id, code: "NODEB8") + [.record(id, SessionStoreTests.record(1, seq: 1))])
        // Node A's own create of that id gets through once the database is back.
        let nodeAsCreate: [StoreWrite] = [
            .index(StoredSessionEntry(id: id, joinCode: "NODEA8", codeIssuedAt: 9, ended: false, wakeAt: nil)),
            .snapshot(id, SessionSnapshot(lsn: 0, seq: 0, wakeAt: nil, state: Array("{\"node\":\"a\"}".utf8), answers: [])),
            .record(other, SessionStoreTests.record(1, seq: 1)),
        ]
        let conflict = await #expect(throws: StoreConflict.self) { try await commit(nodeA, nodeAsCreate) }
        #expect(conflict?.sessions == [id])
        #expect(try await nodeA.entry(id)?.joinCode == "NODEB8", "node B's index row stands")
        #expect(try await nodeA.entry(code: "NODEA8") == nil)
        let stored = try await nodeA.loadSession(id)
        #expect(stored?.snapshots.map(\.state) == [SessionStoreTests.snapshot(0, seq: 0).state], "node B's first snapshot stands")
        #expect(stored?.records.map(\.lsn) == [1])
        #expect(try await nodeA.records(other, after: 0).isEmpty, "nothing of the refused batch is stored")
        try await nodeA.close()
        try await nodeB.close()
    }

    @Test func aCreateTriedAgainAfterItsCommitWentThroughIsTakenAsStored() async throws {
        let location = try await TestPostgres.freshDatabase()
        let node = try await PostgresSessionStore.open(location, logger: Logger(label: "a"))
        let id = SessionStoreTests.id(10)
        try await commit(node, newSession(id, code: "AGAIN8"))
        // The commit's answer was lost: the same create comes again, with a new code queued since.
        let since = StoreWrite.index(StoredSessionEntry(id: id, joinCode: "AGAIN9", codeIssuedAt: 11, ended: false, wakeAt: nil))
        try await commit(node, newSession(id, code: "AGAIN8") + [since, .record(id, SessionStoreTests.record(1, seq: 1))])
        #expect(try await node.entry(id)?.joinCode == "AGAIN9")
        #expect(try await node.records(id, after: 0).map(\.lsn) == [1])
        // A create whose batch also snapshotted the session twice more: its first snapshot was
        // pruned when it went through, and the same batch tried again is still its own.
        let ended = SessionStoreTests.id(11)
        let whole: [StoreWrite] = newSession(ended, code: "AGAIN7") + [
            .record(ended, SessionStoreTests.record(1, seq: 1)), .snapshot(ended, SessionStoreTests.snapshot(1, seq: 1)),
            .record(ended, SessionStoreTests.record(2, seq: 2)), .snapshot(ended, SessionStoreTests.snapshot(2, seq: 2)),
        ]
        try await commit(node, whole)
        #expect(try await node.loadSession(ended)?.snapshots.map(\.lsn) == [1, 2])
        try await commit(node, whole)
        #expect(try await node.records(ended, after: 1).map(\.lsn) == [2])
        try await node.close()
    }

    @Test func aTransactionANodeLeavesOpenIsEndedSoAnotherNodesCommitGoesThrough() async throws {
        let location = try await TestPostgres.freshDatabase()
        let (nodeA, nodeB) = (try await PostgresSessionStore.open(location, logger: Logger(label: "a")), try await PostgresSessionStore.open(location, logger: Logger(label: "b")))
        let id = SessionStoreTests.id(4)
        try await commit(nodeA, newSession(id, code: "IDLE42"))
        // Node A takes the session's row as a commit does, then falls silent: a node cut off
        // by the network half-way through a commit.
        let (rowTaken, taken) = AsyncStream.makeStream(of: Void.self)
        let silent = Task {
            try await nodeA.closingOnCancel { connection in
                try await connection.query("BEGIN", logger: Logger(label: "a"))
                try await connection.query("UPDATE sessions SET last_lsn = last_lsn WHERE id = \(id.rawValue)", logger: Logger(label: "a"))
                taken.yield()
                try await Task.sleep(for: .seconds(60))
            }
        }
        for await _ in rowTaken { break }
        // Node B, which took the session over, commits its next record.
        let started = ContinuousClock.now
        let (committed, took) = try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await self.commit(nodeB, [.record(id, SessionStoreTests.record(1, seq: 1))])
                return true
            }
            group.addTask {
                // Cancelled once the commit is through: the limit ends early then.
                try? await Task.sleep(for: .seconds(20))
                return false
            }
            let first = try await group.next() ?? false
            let took = ContinuousClock.now - started
            // Without the limit the commit waits until the test lets go of the row.
            silent.cancel()
            group.cancelAll()
            try await group.waitForAll()
            return (first, took)
        }
        #expect(committed, "the commit waited \(took) for the silent node's transaction")
        #expect(took < .seconds(15), "PostgreSQL ends a transaction left idle after 8 s")
        #expect(try await nodeB.loadSession(id)?.records.map(\.lsn) == [1])
        _ = await silent.result
        try await nodeA.close()
        try await nodeB.close()
    }

    @Test func aNodeFindsASessionAnotherNodeCreatedByIdAndByCode() async throws {
        let location = try await TestPostgres.freshDatabase()
        let (nodeA, nodeB) = (try await PostgresSessionStore.open(location, logger: Logger(label: "a")), try await PostgresSessionStore.open(location, logger: Logger(label: "b")))
        let id = SessionStoreTests.id(3)
        try await commit(nodeA, newSession(id, code: "CODE42"))
        #expect(try await nodeB.entry(code: "CODE42")?.id == id)
        #expect(try await nodeB.entry(id)?.joinCode == "CODE42")
        #expect(try await nodeB.entry(code: "NOPE") == nil)
        try await commit(nodeA, [.index(StoredSessionEntry(id: id, joinCode: "CODE42", codeIssuedAt: 7, ended: true, wakeAt: nil))])
        #expect(try await nodeB.entry(code: "CODE42") == nil, "an ended session is not found by its code")
        try await nodeA.close()
        try await nodeB.close()
    }

    @Test func nodesStartingTogetherMigrateTheDatabaseOnce() async throws {
        let location = try await TestPostgres.freshDatabase()
        let stores = try await withThrowingTaskGroup(of: PostgresSessionStore.self) { group in
            for n in 0..<4 { group.addTask { try await PostgresSessionStore.open(location, logger: Logger(label: "node\(n)")) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let rows = try await stores[0].client.query("SELECT count(*) FROM schema_migrations")
        for try await count in rows.decode(Int64.self) { #expect(Int(count) == PostgresMigrations.all.count) }
        for store in stores { try await store.close() }
    }
}

/// Reading `--database` URLs.
@Suite struct PostgresLocationTests {
    @Test(arguments: [
        ("mysql://root@localhost/x", "the database URL must look like postgres://user:password@host:5432/database"),
        ("postgres://localhost/x", "the database URL names no user"),
        ("postgres://u@localhost:99999/x", "the database URL's port 99999 is not a port"),
        ("postgres://u@localhost/x?sslmode=sometimes", "sslmode sometimes is not one of disable, allow, prefer, require, verify-ca, verify-full"),
        ("postgres://u@localhost/x?sslmod=require", "the database URL's setting \"sslmod\" is not one OpenJam reads (it reads sslmode and host)"),
        ("postgres://u@localhost/x?ssl=true", "the database URL's setting \"ssl\" is not one OpenJam reads (it reads sslmode and host)"),
        ("postgres://u@localhost/x?sslmode=", "the database URL's setting sslmode has no value"),
        ("postgres://u@localhost/x?sslmode=require&sslmode=disable", "the database URL gives sslmode more than once"),
    ])
    func aWrongDatabaseURLSaysWhatIsWrong(url: String, message: String) {
        #expect(throws: JamError(.invalidField, message)) { try PostgresLocation(url: url) }
    }

    @Test func theURLsSettingsChooseEncryptionAndTheSocketFolder() throws {
        let location = try PostgresLocation(url: "postgres://jam:s%40cret@127.0.0.1:6543/openjam?sslmode=verify-ca")
        #expect(location.tlsMode == .verifyCA)
        #expect(location.password == "s@cret")
        #expect(!location.redacted.contains("s%40cret"))
        #expect(location.redacted.contains("127.0.0.1:6543/openjam"))
        #expect(try PostgresLocation(url: "postgres://u@localhost/x").tlsMode == .disable)
        #expect(try PostgresLocation(url: "postgres://u@localhost/x?sslmode=allow").tlsMode == .prefer)
        let socket = try PostgresLocation(url: "postgres://u@/x?host=/run/postgresql")
        #expect(socket.socketFolder == "/run/postgresql")
        #expect(socket.host == nil)
    }

    @Test(arguments: [
        ("disable", CertificateVerification.none), ("allow", .none), ("prefer", .none), ("require", .none),
        ("verify-ca", .noHostnameVerification), ("verify-full", .fullVerification),
    ])
    func sslmodeChecksTheCertificateAsLibpqDoes(mode: String, verification: CertificateVerification) throws {
        // As psql: require encrypts without checking, so a database with a self-signed certificate still connects.
        #expect(try PostgresLocation(url: "postgres://u@db.example/x?sslmode=\(mode)").certificateVerification == verification)
        let location = try PostgresLocation(url: "postgres://u@db.example/x?sslmode=\(mode)")
        #expect(try PostgresLocation(url: try location.url).tlsMode == location.tlsMode, "the URL handed to another process keeps the mode")
    }
}
