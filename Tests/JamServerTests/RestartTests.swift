import Foundation
import JamProtocol
import JamTestSupport
import Testing

@testable import JamServer

/// Polls `condition` every 20 ms for up to 15 s (a busy CI machine runs ~1,150 tests on 2 cores).
func waitFor(_ what: String, _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(15)
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(20))
    }
    throw TestFailure("timed out waiting for \(what)")
}

/// What a restart, graceful or not, must keep: resumable frames, answered command ids, and
/// everything acknowledged, also when the last write was torn.
@Suite(.serialized) struct RestartTests {
    /// Broadcast events (the ones a resume replays) among `envelopes`, after `seq`.
    static func broadcasts(_ envelopes: [ServerEnvelope], after seq: Int64) -> [ServerEnvelope] {
        envelopes.filter { $0.event.type.advancesSeq && $0.seq > seq }
    }

    /// Before the restart: the guest reads up to some seq and leaves; the host goes on, and
    /// records what the guest missed.
    struct Missed: Sendable {
        let id: SessionID
        let guestToken: String
        let lastSeq: Int64
        let missed: [ServerEnvelope]
    }

    static func missSomeEvents(_ server: TestServer) async throws -> Missed {
        let party = try await Party.start(server, guests: ["Gil"])
        for n in 1...3 { _ = try await server.api.add(party.host.token, party.id, testTrack(n, durationMs: 3_600_000)) }
        let guest = party.guests[0]
        try await guest.socket.next("the third add") { $0.queueItemAdded?.item.track.id == "track-3" }
        let lastSeq = try #require(Self.broadcasts(await guest.socket.received, after: 0).last?.seq)
        await guest.socket.close()
        for n in 4...6 { _ = try await server.api.add(party.host.token, party.id, testTrack(n)) }
        #expect(try await server.api.view(party.host.token, party.id).queue.count == 5)
        try await party.host.socket.next("the sixth add") { $0.queueItemAdded?.item.track.id == "track-6" }
        let missed = Self.broadcasts(await party.host.socket.received, after: lastSeq)
        #expect(missed.count >= 4, "the guest's own disconnect and three adds")
        await party.close()
        return Missed(id: party.id, guestToken: guest.token, lastSeq: lastSeq, missed: missed)
    }

    /// After the restart: the guest resumes from its last seq and must get exactly what it missed.
    static func expectResume(_ server: TestServer, _ before: Missed) async throws {
        let socket = TestSocket(server: server, session: before.id, token: before.guestToken, lastSeq: before.lastSeq)
        let last = try #require(before.missed.last?.seq)
        try await socket.next("the last missed event") { $0.seq == last && $0.event.type != .stateSync }
        let received = await socket.received
        #expect(!received.contains { $0.event.type == .stateSync }, "a resume, not the whole state")
        let replayed = Self.broadcasts(received, after: before.lastSeq).filter { $0.seq <= last }
        #expect(replayed == before.missed, "exactly the missed events, as they were sent")
        await socket.close()
    }

    @Test func aResumeAfterAGracefulRestartReplaysExactlyTheMissedSeqs() async throws {
        let directory = TestServer.makeDataDirectory()
        let before = try await TestServer.with(dataDirectory: directory) { server in try await Self.missSomeEvents(server) }
        try await TestServer.with(dataDirectory: directory) { server in try await Self.expectResume(server, before) }
    }

    @Test func aResumeAfterTwoGracefulRestartsAFewEventsApartReplaysExactlyTheMissedSeqs() async throws {
        let directory = TestServer.makeDataDirectory()
        let before = try await TestServer.with(dataDirectory: directory) { server in try await Self.missSomeEvents(server) }
        try await TestServer.with(dataDirectory: directory) { server in
            // A few events between the restarts: the guest's own add, by REST.
            _ = try await server.api.add(before.guestToken, before.id, testTrack(7))
        }
        try await TestServer.with(dataDirectory: directory) { server in try await Self.expectResume(server, before) }
    }

    @Test func aRestartWritesNoSnapshotUntilEnoughHappenedSinceTheNewestOne() async throws {
        // A snapshot every 10 records: twelve adds leave the creation snapshot and one after
        // record 10, with a few records after it.
        let store = InMemorySessionStore()
        let directory = TestServer.makeDataDirectory()
        let (id, token) = try await Self.hostAdding(tracks: 12, store: store, directory: directory, snapshotEvery: 10)
        let before = try #require(try await store.loadSession(id))
        #expect(before.snapshots.count == 2)
        try await TestServer.with(dataDirectory: directory, store: store, configure: { $0.snapshotEvery = 10 }) { server in
            _ = try await server.api.add(token, id, testTrack(13))
        }
        let after = try #require(try await store.loadSession(id))
        #expect(after.snapshots.map(\.lsn) == before.snapshots.map(\.lsn), "the base resumes start from stays where it was")
        #expect(after.records.count > before.records.count)
    }

    @Test func aResumeAfterAKilledServerReplaysExactlyTheMissedSeqs() async throws {
        let directory = TestServer.makeDataDirectory()
        let first = try await ServerProcess(dataDirectory: directory)
        let before = try await Self.missSomeEvents(first.server)
        try await first.kill()
        try await ServerProcess.with(dataDirectory: directory) { second in try await Self.expectResume(second.server, before) }
    }

    @Test func aCommandIdRetriedAfterARestartIsAnsweredAndAppliedOnlyOnce() async throws {
        // The server dies right after the skip is sent: stored or not, the retry must skip once.
        for attempt in 0..<3 {
            let directory = TestServer.makeDataDirectory()
            let first = try await ServerProcess(dataDirectory: directory)
            let host = try await first.server.api.guest("Host")
            let id = try await first.server.api.create(host.token).session.id
            for n in 1...4 { _ = try await first.server.api.add(host.token, id, testTrack(n, durationMs: 3_600_000)) }
            let socket = TestSocket(server: first.server, session: id, token: host.token)
            // The skip names its song: once applied, the retry finds another song playing, and
            // must still get the stored answer rather than a refusal.
            let epoch = try #require(try await socket.next(.stateSync).stateSync?.nowPlaying?.epoch)
            socket.send(.skip(Skip(epoch: epoch)), id: "skip-once")
            if attempt == 0 {
                // Once with the ack in hand: the answer must come from the store.
                let ack = try await socket.next("the ack") { $0.ack?.id == "skip-once" }
                #expect(ack.ack?.id == "skip-once")
            } else {
                try await Task.sleep(for: .milliseconds(attempt * 3))
            }
            try await first.kill()
            await socket.close()

            try await ServerProcess.with(dataDirectory: directory) { second in
                let again = TestSocket(server: second.server, session: id, token: host.token)
                try await again.next(.stateSync)
                again.send(.skip(Skip(epoch: epoch)), id: "skip-once")
                let answer = try await again.next("the retried skip's answer") { $0.ack?.id == "skip-once" || $0.error?.id == "skip-once" }
                #expect(answer.ack?.id == "skip-once", "attempt \(attempt): \(answer.event)")
                let view = try await second.server.api.view(host.token, id)
                #expect(view.history.filter { $0.outcome == .skipped }.map(\.item.track.id) == ["track-1"], "attempt \(attempt): skipped once")
                #expect(view.nowPlaying?.item.track.id == "track-2", "attempt \(attempt)")
                await again.close()
            }
        }
    }

    @Test func aCommandWhoseTurnWroteASnapshotIsAnsweredOnceAfterARestartThatReplaysFromIt() async throws {
        // Every turn writes a snapshot: the skip's own, then the disconnect's, which prunes the
        // skip's record. A restart replays from the older snapshot, the skip's.
        let directory = TestServer.makeDataDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (host, id) = try await TestServer.with(dataDirectory: directory, configure: { $0.snapshotEvery = 1 }) { server in
            let host = try await server.api.guest("Host")
            let id = try await server.api.create(host.token).session.id
            for n in 1...4 { _ = try await server.api.add(host.token, id, testTrack(n, durationMs: 3_600_000)) }
            let socket = TestSocket(server: server, session: id, token: host.token)
            try await socket.next(.stateSync)
            socket.send(.skip(Skip()), id: "skip-once")
            _ = try await socket.next("the ack") { $0.ack?.id == "skip-once" }
            await socket.close()
            try await eventually("the host's disconnect is applied", timeout: .seconds(10)) {
                try await server.api.view(host.token, id).members.first { $0.userId == host.userId }?.connected == false
            }
            return (host, id)
        }
        try await TestServer.with(dataDirectory: directory, configure: { $0.snapshotEvery = 1 }) { server in
            let again = TestSocket(server: server, session: id, token: host.token)
            try await again.next(.stateSync)
            again.send(.skip(Skip()), id: "skip-once")
            let answer = try await again.next("the retried skip's answer") { $0.ack?.id == "skip-once" || $0.error?.id == "skip-once" }
            #expect(answer.ack?.id == "skip-once", "\(answer.event)")
            let view = try await server.api.view(host.token, id)
            #expect(view.history.filter { $0.outcome == .skipped }.map(\.item.track.id) == ["track-1"], "skipped once")
            #expect(view.nowPlaying?.item.track.id == "track-2")
            await again.close()
        }
    }

    @Test func aStoredAnswerCutFromItsCommandIdIsReportedAsDamageNotRetriedOrReplayed() async throws {
        let (id, view) = try await Self.readAfterDamage("UPDATE session_log SET answer = NULL WHERE answer_key IS NOT NULL") { server, host, id in
            let socket = TestSocket(server: server, session: id, token: host.token)
            try await socket.next(.stateSync)
            socket.send(.addToQueue(AddToQueue(track: testTrack(1), nonce: "n1")), id: "add-1")
            _ = try await socket.next("the ack") { $0.ack?.id == "add-1" }
            return socket
        }
        #expect(view.status == 500)
        #expect(view.errorCode == .internal)
        #expect(view.text.contains("the session's stored data is damaged: record"), "\(view.text)")
        #expect(view.text.contains("has an answered command id without its answer"), "\(view.text) (session \(id))")
    }

    @Test func aSnapshotWhoseStateDoesNotReadIsReportedAsDamage() async throws {
        let (id, view) = try await Self.readAfterDamage("UPDATE session_snapshots SET state = x'7b22'") { _, _, _ in nil }
        #expect(view.status == 500)
        #expect(view.errorCode == .internal)
        #expect(view.text.contains("the session's stored data is damaged: the snapshot of session \(id.rawValue) at record"), "\(view.text)")
        #expect(view.text.contains("has a state that cannot be read"), "\(view.text)")
    }

    @Test func aSessionWhoseSnapshotsAreGoneIsReportedAsDamageNotAsUnknown() async throws {
        let (id, view) = try await Self.readAfterDamage("DELETE FROM session_snapshots") { _, _, _ in nil }
        #expect(view.status == 500)
        #expect(view.errorCode == .internal)
        #expect(view.text.contains("the session's stored data is damaged: the snapshots of session \(id.rawValue) are missing"), "\(view.text)")
    }

    /// A host's new session on a server that `prepare` uses and that is then killed, `damage`
    /// run on the database it left, and the session as a second server answers for it.
    static func readAfterDamage(
        _ damage: String, prepare: (TestServer, GuestAuthResponse, SessionID) async throws -> TestSocket?
    ) async throws -> (SessionID, RestResponse) {
        let directory = TestServer.makeDataDirectory()
        let first = try await ServerProcess(dataDirectory: directory)
        let host = try await first.server.api.guest("Host")
        let id = try await first.server.api.create(host.token).session.id
        let socket = try await prepare(first.server, host, id)
        // Killed: what `prepare` did stays in log records instead of going into a shutdown snapshot.
        try await first.kill()
        await socket?.close()

        let database = try SQLiteDatabase(path: directory.appendingPathComponent("openjam.sqlite").path, create: false)
        try database.run(damage)
        database.close()
        let view = try await ServerProcess.with(dataDirectory: directory) { second in
            try await second.server.api.request("GET", "/api/v1/sessions/\(id.rawValue)", token: host.token)
        }
        return (id, view)
    }

    @Test func aRecordThatDoesNotReadBeforeOthersThatDoIsReportedAsDamageAndLeftAlone() async throws {
        let store = InMemorySessionStore()
        let directory = TestServer.makeDataDirectory()
        let (id, token) = try await Self.hostAdding(tracks: 4, store: store, directory: directory)
        let records = try #require(try await store.loadSession(id)?.records)
        let cut = records[records.count - 2]
        #expect(try Self.addedTrack(cut) == "track-3")
        store.damageRecord(id, lsn: cut.lsn, keepingBytes: cut.inputs.count / 2)

        try await TestServer.with(dataDirectory: directory, store: store) { server in
            let view = try await server.api.request("GET", "/api/v1/sessions/\(id.rawValue)", token: token)
            #expect(view.status == 500)
            #expect(view.errorCode == .internal)
            #expect(view.text.contains("the session's stored data is damaged: record \(cut.lsn) of session \(id.rawValue)'s log has inputs that cannot be read"), "\(view.text)")
            // Remembered, not retried: the second request is refused the same way.
            let again = try await server.api.request("GET", "/api/v1/sessions/\(id.rawValue)", token: token)
            #expect(again.status == 500)
        }
        let after = try #require(try await store.loadSession(id))
        #expect(after.records.map(\.lsn) == records.map(\.lsn), "nothing was written over the damaged log")
        #expect(after.records.first { $0.lsn == cut.lsn }?.inputs.count == cut.inputs.count / 2)
    }

    @Test func aTornLastRecordIsIgnoredAndTheSessionCarriesOn() async throws {
        let store = InMemorySessionStore()
        let directory = TestServer.makeDataDirectory()
        struct Before: Sendable {
            let id: SessionID
            let token: String
            let lastLsn: Int64
        }
        let (id, token) = try await TestServer.with(dataDirectory: directory, store: store) { server in
            let host = try await server.api.guest("Host")
            let id = try await server.api.create(host.token).session.id
            _ = try await server.api.add(host.token, id, testTrack(1, durationMs: 3_600_000))
            // Once track 1 plays, nothing else happens on its own for an hour.
            try await waitFor("track 1 playing") { try await server.api.view(host.token, id).nowPlaying?.state == .playing }
            for n in 2...5 { _ = try await server.api.add(host.token, id, testTrack(n, durationMs: 3_600_000)) }
            return (id, host.token)
        }
        // The add of track 5 was the last record; as if the process had died writing it.
        let last = try #require(try await store.loadSession(id)?.records.last)
        let inputs = try LogCoding.decodeInputs(last.inputs)
        guard case .command(.add(let added, _, _), _) = inputs.first?.input else {
            Issue.record("the last record is not the add of track 5: \(inputs)")
            return
        }
        #expect(added.id == "track-5")
        store.damageRecord(id, lsn: last.lsn, keepingBytes: last.inputs.count / 2)
        let before = Before(id: id, token: token, lastLsn: last.lsn)

        try await TestServer.with(dataDirectory: directory, store: store) { server in
            let view = try await server.api.view(before.token, before.id)
            let tracks = [view.nowPlaying?.item.track.id].compactMap { $0 } + view.queue.map(\.track.id)
            #expect(tracks == ["track-1", "track-2", "track-3", "track-4"])
            // The session carries on: the next record takes the torn one's number.
            _ = try await server.api.add(before.token, before.id, testTrack(9))
            let after = try await server.api.view(before.token, before.id)
            #expect(after.queue.map(\.track.id) == ["track-2", "track-3", "track-4", "track-9"])
        }
        try await TestServer.with(dataDirectory: directory, store: store) { server in
            let view = try await server.api.view(before.token, before.id)
            #expect(view.queue.map(\.track.id) == ["track-2", "track-3", "track-4", "track-9"], "and it is all there after the next restart")
        }
    }

    @Test func aWholeLastRecordThisBuildCannotReadIsKeptNotIgnored() async throws {
        let store = InMemorySessionStore()
        let directory = TestServer.makeDataDirectory()
        let (id, token) = try await Self.hostAdding(tracks: 3, store: store, directory: directory)
        let last = try #require(try await store.loadSession(id)?.records.last)
        // What a newer build might log: whole JSON, an input this build does not know.
        let newer = Array(#"[{"at":1,"input":{"somethingNewer":{"x":1}}}]"#.utf8)
        store.rewriteRecord(id, lsn: last.lsn, inputs: newer)
        try await TestServer.with(dataDirectory: directory, store: store) { server in
            let view = try await server.api.request("GET", "/api/v1/sessions/\(id.rawValue)", token: token)
            #expect(view.status == 500)
            #expect(view.text.contains("record \(last.lsn) of session \(id.rawValue)'s log has inputs that cannot be read"), "\(view.text)")
        }
        let after = try #require(try await store.loadSession(id))
        #expect(after.records.last?.lsn == last.lsn)
        #expect(after.records.last?.inputs == newer, "another build's record is left for that build")
    }

    @Test func aSnapshotWrittenAfterAnIgnoredLastRecordNeverBecomesTheBase() async throws {
        let store = InMemorySessionStore()
        let directory = TestServer.makeDataDirectory()
        // A snapshot after every record: one is written with the add of track 5, which then no
        // longer reads (a file damaged later).
        let (id, token) = try await Self.hostAdding(tracks: 5, store: store, directory: directory, snapshotEvery: 1)
        let stored = try #require(try await store.loadSession(id))
        let last = try #require(stored.records.last)
        #expect(try Self.addedTrack(last) == "track-5")
        #expect(stored.snapshots.last?.lsn == last.lsn, "the newest snapshot includes the last record")
        store.damageRecord(id, lsn: last.lsn, keepingBytes: last.inputs.count / 2, keepingSnapshots: true)

        try await TestServer.with(dataDirectory: directory, store: store) { server in
            let view = try await server.api.view(token, id)
            #expect(view.queue.map(\.track.id) == ["track-2", "track-3", "track-4"])
            for n in [9, 10] { _ = try await server.api.add(token, id, testTrack(n)) }
        }
        try await TestServer.with(dataDirectory: directory, store: store) { server in
            let view = try await server.api.view(token, id)
            #expect(view.queue.map(\.track.id) == ["track-2", "track-3", "track-4", "track-9", "track-10"], "the ignored add stays out after the next restart too")
        }
    }

    /// A session whose host added tracks 1…`tracks` (an hour long each), on a server that has
    /// stopped again: its id and the host's token. Track 1 plays before track 2 is added, so
    /// the adds after the first are the log's last records, one each.
    static func hostAdding(tracks: Int, store: InMemorySessionStore, directory: URL, snapshotEvery: Int? = nil) async throws -> (SessionID, String) {
        try await TestServer.with(dataDirectory: directory, store: store, configure: { if let snapshotEvery { $0.snapshotEvery = snapshotEvery } }) { server in
            let host = try await server.api.guest("Host")
            let id = try await server.api.create(host.token).session.id
            _ = try await server.api.add(host.token, id, testTrack(1, durationMs: 3_600_000))
            try await waitFor("track 1 playing") { try await server.api.view(host.token, id).nowPlaying?.state == .playing }
            for n in stride(from: 2, through: tracks, by: 1) { _ = try await server.api.add(host.token, id, testTrack(n, durationMs: 3_600_000)) }
            return (id, host.token)
        }
    }

    /// The track `record` adds, when it is one add.
    static func addedTrack(_ record: LogRecord) throws -> String? {
        let inputs = try LogCoding.decodeInputs(record.inputs)
        guard inputs.count == 1, case .command(.add(let track, _, _), _) = inputs[0].input else { return nil }
        return track.id
    }

    @Test func recordsNumberedByAnotherBuildKeepResumesAboveTheirNumbers() async throws {
        // A release that sends a different number of events for the same command (a vote's
        // move in its update, say) replays an older build's log with numbers of its own.
        let store = InMemorySessionStore()
        let directory = TestServer.makeDataDirectory()
        let (id, token) = try await Self.hostAdding(tracks: 3, store: store, directory: directory)
        // As if the build that wrote the last add had sent ten more events for it, and died.
        let last = try #require(try await store.loadSession(id)?.records.last)
        store.renumberRecords(id, from: last.lsn, by: 10)
        let stored = last.lastSeq + 10

        try await TestServer.with(dataDirectory: directory, store: store) { server in
            // A member who saw everything the old build sent is up to date, and what comes next
            // is numbered above it (numbered anew, it would look like frames they already have).
            let current = TestSocket(server: server, session: id, token: token, lastSeq: stored)
            _ = try await server.api.add(token, id, testTrack(4))
            let added = try await current.next("the add of track 4") { $0.queueItemAdded?.item.track.id == "track-4" }
            #expect(added.seq > stored)
            #expect(await current.received.allSatisfy { $0.seq > stored }, "nothing is numbered at or below what the member has")
            // A member who resumes from inside the renumbered record gets the whole state.
            let behind = TestSocket(server: server, session: id, token: token, lastSeq: last.firstSeq)
            let first = try await behind.next("the first frame") { _ in true }
            #expect(first.stateSync?.queue.map(\.track.id) == ["track-2", "track-3", "track-4"])
            await current.close()
            await behind.close()
        }
    }

    @Test func aRecordNumberedByAnotherBuildInTheMiddleOfTheLogKeepsResumesAfterItExact() async throws {
        let store = InMemorySessionStore()
        let directory = TestServer.makeDataDirectory()
        let (id, token) = try await Self.hostAdding(tracks: 5, store: store, directory: directory)
        // The add of track 3 was numbered by a build that sent ten more events for it; the
        // records after it go on from its numbers.
        let records = try #require(try await store.loadSession(id)?.records)
        let (third, fourth, fifth) = (records[records.count - 3], records[records.count - 2], records[records.count - 1])
        #expect(try [third, fourth, fifth].map(Self.addedTrack) == ["track-3", "track-4", "track-5"])
        store.renumberRecords(id, from: third.lsn, by: 10)
        let resumeAfterThird = third.lastSeq + 10
        let fourthAndFifthSeqs = Array((fourth.firstSeq + 11)...(fifth.lastSeq + 10))
        let resumeAfterFourth = fourth.lastSeq + 10
        let fifthLastSeq = fifth.lastSeq + 10
        let fifthSeqs = Array((fifth.firstSeq + 11)...fifthLastSeq)
        let resumeBeforeThird = third.firstSeq

        try await TestServer.with(dataDirectory: directory, store: store) { server in
            // Resuming after the fourth add replays the fifth with its stored numbers, no state.
            let after = TestSocket(server: server, session: id, token: token, lastSeq: resumeAfterFourth)
            _ = try await after.next("the add of track 5") { $0.queueItemAdded?.item.track.id == "track-5" }
            let received = await after.received
            #expect(!received.contains { $0.stateSync != nil }, "a resume after the renumbered record needs no whole state")
            let replayed = Self.broadcasts(received, after: resumeAfterFourth).map(\.seq).filter { $0 <= fifthLastSeq }
            #expect(replayed == fifthSeqs)
            // Right at the renumbered record's end: what followed it, with its stored numbers.
            let atEnd = TestSocket(server: server, session: id, token: token, lastSeq: resumeAfterThird)
            _ = try await atEnd.next("the add of track 5") { $0.queueItemAdded?.item.track.id == "track-5" }
            let fromEnd = await atEnd.received
            #expect(!fromEnd.contains { $0.stateSync != nil })
            #expect(Self.broadcasts(fromEnd, after: resumeAfterThird).map(\.seq).filter { $0 <= fifthLastSeq } == fourthAndFifthSeqs)
            await atEnd.close()
            // Frames numbered before the renumbered record serve nobody: the whole state instead.
            let before = TestSocket(server: server, session: id, token: token, lastSeq: resumeBeforeThird)
            let first = try await before.next("the first frame") { _ in true }
            #expect(first.stateSync?.queue.map(\.track.id) == ["track-2", "track-3", "track-4", "track-5"])
            await after.close()
            await before.close()
        }
    }

    /// Where the frames of SQLite's write-ahead log at `url` end, its salts and page size: frames
    /// follow its 32-byte header back to back, and belong to it while they carry its salts
    /// (header bytes 16–23, frame bytes 8–15).
    static func endOfFrames(inLog url: URL) throws -> (end: Int, salts: [UInt8], pageSize: Int) {
        let log = try [UInt8](Data(contentsOf: url))
        let magic = log.prefix(4)
        try #require(magic == [0x37, 0x7F, 0x06, 0x82] || magic == [0x37, 0x7F, 0x06, 0x83], "a write-ahead log's header")
        let encoded = Int(log[8]) << 24 | Int(log[9]) << 16 | Int(log[10]) << 8 | Int(log[11])
        let pageSize = encoded == 1 ? 65_536 : encoded
        let frame = 24 + pageSize
        let salts = Array(log[16..<24])
        var end = 32
        while end + frame <= log.count, Array(log[(end + 8)..<(end + 16)]) == salts { end += frame }
        return (end, salts, pageSize)
    }

    @Test func aTornWriteAtTheEndOfTheWriteAheadLogLosesNothingAcknowledged() async throws {
        let directory = TestServer.makeDataDirectory()
        let first = try await ServerProcess(dataDirectory: directory)
        let host = try await first.server.api.guest("Host")
        let id = try await first.server.api.create(host.token).session.id
        for n in 1...6 { _ = try await first.server.api.add(host.token, id, testTrack(n, durationMs: 3_600_000)) }
        try await first.kill()
        // A commit the process was writing when it died: right after the log's last frame, a
        // commit frame with the log's salts whose page was only half written, so that only
        // its checksum tells it apart (the log is reserved: zeros follow it).
        let wal = directory.appendingPathComponent("openjam.sqlite-wal")
        let (end, salts, pageSize) = try Self.endOfFrames(inLog: wal)
        #expect(end > 32, "the log holds the commits")
        let header: [UInt8] = [0, 0, 0, 1, 0, 0, 0, 9] + salts + [0x12, 0x34, 0x56, 0x78, 0x9A, 0xBC, 0xDE, 0xF0]
        let halfPage = (0..<(pageSize / 2)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let handle = try FileHandle(forWritingTo: wal)
        try handle.seek(toOffset: UInt64(end))
        try handle.write(contentsOf: Data(header + halfPage + [UInt8](repeating: 0, count: pageSize - halfPage.count)))
        try handle.close()
        #expect(try Self.endOfFrames(inLog: wal).end == end + 24 + pageSize, "the torn frame passes the salt check")

        try await ServerProcess.with(dataDirectory: directory) { second in
            let view = try await second.server.api.view(host.token, id)
            let tracks = [view.nowPlaying?.item.track.id].compactMap { $0 } + view.queue.map(\.track.id)
            #expect(tracks == (1...6).map { "track-\($0)" })
        }
    }
}
