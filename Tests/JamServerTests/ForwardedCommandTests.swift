import Foundation
import JamCore
import JamProtocol
import JamTestSupport
import Logging
import NIOConcurrencyHelpers
import PostgresNIO
import Synchronization
import Testing

@testable import JamServer

/// The owner's inbox: forwarded commands are applied once each, whatever order the nodes
/// that forwarded them commit in.
@Suite(.serialized, .enabled(if: TestPostgres.enabled, "needs PostgreSQL (JAM_TEST_DATABASE_URL)"))
struct ForwardedCommandTests {
    /// Inserts `command` into the inbox inside an open transaction of `connection`.
    static func insert(_ command: ForwardedCommand, on connection: PostgresConnection) async throws {
        try await connection.query(
            """
            INSERT INTO session_inbox (session_id, origin, connection, reply_id, input, created_at)
            VALUES (\(command.session.rawValue), \(command.origin), NULL, \(command.replyId), \(ByteBuffer(bytes: command.encodedInput)), 0)
            """, logger: Logger(label: "test"))
    }

    @Test func aCommandCommittedAfterALaterOneIsStillApplied() async throws {
        let location = try await TestPostgres.freshDatabase()
        let store = try await PostgresSessionStore.open(location, logger: Logger(label: "test"))
        try await TestServer.with(store: store) { server in
            let host = try await server.api.guest("Host")
            let created = try await server.api.create(host.token)
            let id = created.session.id
            let logger = Logger(label: "test")
            let configuration = try location.testConnectionConfiguration()
            let early = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
            let late = try await PostgresConnection.connect(configuration: configuration, id: 2, logger: logger)
            do {
                try await Self.commitOutOfIdOrder(server, host: host, id: id, early: early, late: late)
            } catch {
                // A connection must be closed before it goes, also when the test fails.
                try? await early.close()
                try? await late.close()
                throw error
            }
            try await early.close()
            try await late.close()
        }
    }

    private static func commitOutOfIdOrder(
        _ server: TestServer, host: GuestAuthResponse, id: SessionID, early: PostgresConnection, late: PostgresConnection
    ) async throws {
        let logger = Logger(label: "test")
        func add(_ name: String) -> ForwardedCommand {
            ForwardedCommand(
                inboxId: 0, session: id, origin: "another-node", connection: nil, replyId: "fwd-\(name)",
                command: .add(track: Track(id: name, name: name, artist: "A", durationMs: 200_000), nonce: name, itemId: JamID(UUID().uuidString.lowercased())),
                user: host.userId)
        }
        // Node A takes the smaller row id but commits after node B's larger one has been applied.
        try await early.query("BEGIN", logger: logger)
        try await insert(add("first-in-id-order"), on: early)
        try await late.query("BEGIN", logger: logger)
        try await insert(add("committed-first"), on: late)
        try await late.query("SELECT pg_notify('jam_inbox', \(id.rawValue))", logger: logger)
        try await late.query("COMMIT", logger: logger)
        try await server.waitForQueue(host.token, id, containing: ["committed-first"], timeout: .seconds(5))
        try await early.query("SELECT pg_notify('jam_inbox', \(id.rawValue))", logger: logger)
        try await early.query("COMMIT", logger: logger)
        let view = try await server.waitForQueue(host.token, id, containing: ["committed-first", "first-in-id-order"], timeout: .seconds(5))
        let tracks = view.queue.map(\.track.id) + [view.nowPlaying?.item.track.id].compactMap { $0 }
        #expect(tracks.filter { $0 == "committed-first" }.count == 1)
        #expect(tracks.filter { $0 == "first-in-id-order" }.count == 1)
        // Both rows go once applied.
        var left = -1
        try await eventually("applied commands leave the inbox; \(left) left", timeout: .seconds(20)) {
            let rows = try await early.query("SELECT count(*) FROM session_inbox", logger: logger)
            for try await count in rows.decode(Int64.self) { left = Int(count) }
            return left == 0
        }
    }

    @Test(.timeLimit(.minutes(1))) func aRefusedForwardIsAnsweredOnlyOnceItsInboxRowsDeletionIsStored() async throws {
        let location = try await TestPostgres.freshDatabase()
        let store = try await PostgresSessionStore.open(location, logger: Logger(label: "test"))
        try await TestServer.with(store: store) { server in
            let host = try await server.api.guest("Host")
            let id = try await server.api.create(host.token).session.id
            let logger = Logger(label: "test")
            let configuration = try location.testConnectionConfiguration()
            let writer = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
            let holder = try await PostgresConnection.connect(configuration: configuration, id: 2, logger: logger)
            let listener = try await PostgresConnection.connect(configuration: configuration, id: 3, logger: logger)
            let replies = NIOLockedValueBox<[String]>([])
            let answered = { replies.withLockedValue { $0.contains { $0.contains("fwd-refused") } } }
            do {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    let (listening, started) = AsyncStream.makeStream(of: Void.self)
                    group.addTask {
                        try await listener.listen(on: "jam_reply") { notifications in
                            started.yield()
                            for try await notification in notifications { replies.withLockedValue { $0.append(notification.payload) } }
                        }
                    }
                    for await _ in listening { break }
                    // Another node forwards a vote on an item the session does not hold.
                    let vote = ForwardedCommand(
                        inboxId: 0, session: id, origin: "another-node", connection: nil, replyId: "fwd-refused",
                        command: .vote(itemId: "00000000-0000-0000-0017-000000000001", value: 1), user: host.userId)
                    try await writer.query("BEGIN", logger: logger)
                    try await Self.insert(vote, on: writer)
                    try await writer.query("COMMIT", logger: logger)
                    // The test holds the row, so deleting it waits.
                    try await holder.query("BEGIN", logger: logger)
                    let locked = try await holder.query("SELECT id FROM session_inbox WHERE reply_id = 'fwd-refused' FOR UPDATE", logger: logger)
                    var rows = 0
                    for try await _ in locked.decode(Int64.self) { rows += 1 }
                    #expect(rows == 1)
                    try await writer.query("SELECT pg_notify('jam_inbox', \(id.rawValue))", logger: logger)
                    try await eventually("the owner's deletion of the row waits on the test's lock") {
                        // A row lock is waited for on the transaction that holds it.
                        try await !writer.backends(running: "DELETE FROM session_inbox", waitingFor: "transactionid").isEmpty
                    }
                    #expect(!answered(), "the refusal was answered while its row could still be applied by another owner")
                    try await holder.query("ROLLBACK", logger: logger)
                    try await eventually("the refusal reached the node that forwarded it") { answered() }
                    let refusal = replies.withLockedValue { $0.first { $0.contains("fwd-refused") } } ?? ""
                    #expect(refusal.contains("notFound"), "\(refusal)")
                    group.cancelAll()
                }
            } catch {
                for connection in [writer, holder, listener] { try? await connection.close() }
                throw error
            }
            for connection in [writer, holder, listener] { try await connection.close() }
        }
    }

    /// Two nodes on a fresh database: a guest of the first node's session, joined through the
    /// second, whose commands the second forwards; and a connection of the test's own.
    private static func withForwardingNode(
        _ body: @Sendable (_ replica: TestServer, _ guest: String, _ id: SessionID, _ other: PostgresConnection) async throws -> Void
    ) async throws {
        let location = try await TestPostgres.freshDatabase()
        let configure: @Sendable (inout ServerConfiguration) -> Void = { $0.database = location }
        try await TestServer.with(configure: configure) { owner in
            try await TestServer.with(configure: configure) { replica in
                let host = try await owner.api.guest("Host")
                let created = try await owner.api.create(host.token)
                let guest = try await replica.api.guest("Guest")
                _ = try await replica.api.join(guest.token, code: created.session.joinCode)
                let other = try await PostgresConnection.connect(
                    configuration: try location.testConnectionConfiguration(), id: 4, logger: Logger(label: "test"))
                do {
                    try await body(replica, guest.token, created.session.id, other)
                } catch {
                    try? await other.close()
                    throw error
                }
                try await other.close()
            }
        }
    }

    @Test func aForwardTheDatabaseRefusesIsAnsweredAtOnceAsNotApplied() async throws {
        try await Self.withForwardingNode { replica, guest, id, other in
            let logger = Logger(label: "test")
            try await other.query("ALTER TABLE session_inbox ADD CONSTRAINT jam_test_refuse CHECK (false) NOT VALID", logger: logger)
            let started = ContinuousClock.now
            let refused = try await replica.api.add(guest, id, testTrack(1))
            #expect(ContinuousClock.now - started < .seconds(3), "not at the forward's 10 s limit")
            #expect(refused.status == 503, "\(refused.status) \(refused.text)")
            #expect(refused.text.contains("was not applied"), "\(refused.text)")
            try await other.query("ALTER TABLE session_inbox DROP CONSTRAINT jam_test_refuse", logger: logger)
            let next = try await replica.api.add(guest, id, testTrack(2))
            #expect(next.status == 201, "\(next.status) \(next.text)")
            // The refused add left nothing behind; the next one plays (nothing did before).
            let view = try await replica.api.view(guest, id)
            #expect(view.queue.map(\.track.id) + [view.nowPlaying?.item.track.id].compactMap { $0 } == [testTrack(2).id])
        }
    }

    @Test func aReplicaWhoseLogReadFailedReadsItAgainWithoutAnotherChange() async throws {
        let location = try await TestPostgres.freshDatabase()
        let logger = Logger(label: "test")
        // The replica signs in to the database as a role of its own, whose reads the test can refuse.
        let role = "jam_replica_" + UUID().uuidString.prefix(8).lowercased()
        try await TestServer.with(configure: { $0.database = location }) { owner in
            let host = try await owner.api.guest("Host")
            let created = try await owner.api.create(host.token)
            try await location.withTestConnection(id: 7) { sql in
                try await sql.query(PostgresQuery(unsafeSQL: "CREATE ROLE \(role) LOGIN"), logger: logger)
                // Opening a store checks its migrations (CREATE … IF NOT EXISTS needs the schema's).
                try await sql.query(PostgresQuery(unsafeSQL: "GRANT ALL ON SCHEMA public TO \(role)"), logger: logger)
                try await sql.query(PostgresQuery(unsafeSQL: "GRANT ALL ON ALL TABLES IN SCHEMA public TO \(role)"), logger: logger)
                try await sql.query(PostgresQuery(unsafeSQL: "GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO \(role)"), logger: logger)
                let replicaLocation = try PostgresLocation(url: try location.url.replacingOccurrences(of: "://postgres@", with: "://\(role)@"))
                try await TestServer.with(configure: { $0.database = replicaLocation }) { replica in
                    let guest = try await replica.api.guest("Guest")
                    _ = try await replica.api.join(guest.token, code: created.session.joinCode)
                    let socket = TestSocket(server: replica, session: created.session.id, token: guest.token)
                    try await socket.next(.stateSync)
                    try await sql.query(PostgresQuery(unsafeSQL: "REVOKE SELECT ON session_log FROM \(role)"), logger: logger)
                    #expect(try await owner.api.add(host.token, created.session.id, testTrack(1)).status == 201)
                    /// The track an envelope announces, if it announces one.
                    @Sendable func announced(_ envelope: ServerEnvelope) -> String? {
                        if case .queueItemAdded(let added) = envelope.event { return added.item.track.id }
                        if case .playPrepare(let prepare) = envelope.event { return prepare.item.track.id }
                        return nil
                    }
                    // The notification comes, the read is refused; then reads are allowed again.
                    try await Task.sleep(for: .seconds(1))
                    #expect(await socket.received.allSatisfy { announced($0) == nil }, "the add reached the replica, whose log read was refused")
                    try await sql.query(PostgresQuery(unsafeSQL: "GRANT SELECT ON session_log TO \(role)"), logger: logger)
                    let added = try await socket.next("the add, read again", timeout: .seconds(10)) { announced($0) != nil }
                    #expect(announced(added) == testTrack(1).id)
                    await socket.close()
                }
            }
        }
    }

    @Test func aSocketCommandWhoseAnswerNeverComesIsAnsweredAtTheForwardLimit() async throws {
        try await Self.withForwardingNode { replica, guest, id, other in
            let logger = Logger(label: "test")
            let socket = TestSocket(server: replica, session: id, token: guest)
            try await socket.next(.stateSync)
            // The forward is stored as far as the replica can tell, and the owner never sees it:
            // as when its reply notification is lost, or it dies after storing the command.
            try await other.query("CREATE FUNCTION jam_test_swallow() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RETURN NULL; END'", logger: logger)
            try await other.query("CREATE TRIGGER jam_test_swallow BEFORE INSERT ON session_inbox FOR EACH ROW EXECUTE FUNCTION jam_test_swallow()", logger: logger)
            let sent = ContinuousClock.now
            socket.send(.addToQueue(AddToQueue(track: testTrack(1), nonce: "lost")), id: "lost")
            let answer = try await socket.next("the add's answer", timeout: .seconds(25)) { $0.error?.id == "lost" || $0.ack?.id == "lost" }
            #expect(answer.error?.code == .unavailable, "\(answer)")
            #expect(answer.error?.message.contains("may still be applied") == true, "\(answer)")
            #expect(ContinuousClock.now - sent >= .seconds(9), "at the forward's limit, not before")
            await socket.close()
        }
    }

    @Test func aForwardCutOffBeforeItsCommitWasNotApplied() async throws {
        try await Self.withForwardingNode { replica, guest, id, other in
            let logger = Logger(label: "test")
            // The insert waits for a lock; its connection is cut before it commits.
            try await other.query("BEGIN", logger: logger)
            try await other.query("LOCK TABLE session_inbox IN ACCESS EXCLUSIVE MODE", logger: logger)
            let started = ContinuousClock.now
            async let cutOff = replica.api.add(guest, id, testTrack(1))
            let waiting = try await eventually("the forward waits for the lock", timeout: .seconds(5)) {
                let pids = try await other.backends(running: "INSERT INTO session_inbox", waitingFor: "relation")
                return pids.isEmpty ? nil : pids
            }
            for pid in waiting {
                for try await _ in try await other.query("SELECT pg_terminate_backend(\(pid))", logger: logger) {}
            }
            let answer = try await cutOff
            try await other.query("ROLLBACK", logger: logger)
            #expect(answer.status == 503, "\(answer.status) \(answer.text)")
            #expect(answer.text.contains("the command was not applied"), "\(answer.text)")
            #expect(ContinuousClock.now - started < .seconds(8), "answered before the forward's time limit")
            // The node carries on with a fresh connection.
            let next = try await replica.api.add(guest, id, testTrack(2))
            #expect(next.status == 201, "\(next.status) \(next.text)")
            let view = try await replica.api.view(guest, id)
            #expect(view.queue.map(\.track.id) + [view.nowPlaying?.item.track.id].compactMap { $0 } == [testTrack(2).id])
        }
    }

    @Test func aForwardCutOffDuringItsCommitMayStillBeApplied() async throws {
        try await Self.withForwardingNode { replica, guest, id, other in
            let logger = Logger(label: "test")
            // A check deferred to the commit that takes its time: the forward's COMMIT is sent
            // and waits there when its connection is cut.
            try await other.query(
                """
                CREATE FUNCTION jam_test_slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN PERFORM pg_sleep(30); RETURN NULL; END $$
                """, logger: logger)
            try await other.query(
                """
                CREATE CONSTRAINT TRIGGER jam_test_slow_commit AFTER INSERT ON session_inbox
                DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION jam_test_slow_commit()
                """, logger: logger)
            let started = ContinuousClock.now
            async let cutOff = replica.api.add(guest, id, testTrack(1))
            let committing = try await eventually("the forward's commit waits", timeout: .seconds(5)) {
                let pids = try await other.backends(running: "COMMIT", waitingFor: "PgSleep")
                return pids.isEmpty ? nil : pids
            }
            for pid in committing {
                for try await _ in try await other.query("SELECT pg_terminate_backend(\(pid))", logger: logger) {}
            }
            let answer = try await cutOff
            try await other.query("DROP TRIGGER jam_test_slow_commit ON session_inbox", logger: logger)
            #expect(answer.status == 503, "\(answer.status) \(answer.text)")
            // Not one of the time limits' answers, which say "may still be applied" too.
            #expect(answer.text.contains("the connection to the database broke; the command may still be applied"), "\(answer.text)")
            #expect(ContinuousClock.now - started < .seconds(8), "answered before the forward's time limit")
            let next = try await replica.api.add(guest, id, testTrack(2))
            #expect(next.status == 201, "\(next.status) \(next.text)")
        }
    }

    @Test func anEndedSessionGivesUpItsLease() async throws {
        try await Self.withOwnedSession { server, host, id, other, _ in
            #expect(try await other.leaseIsFree(id) == false, "the node that created the session owns it")
            #expect(try await server.api.request("DELETE", "/api/v1/sessions/\(id)", token: host.token).status == 204)
            try await eventually("an ended session's lock-table slot is given back", timeout: .seconds(5)) { try await other.leaseIsFree(id) }
        }
    }

    @Test(.timeLimit(.minutes(1))) func aNodeFollowingASessionThatEndsDoesNotTakeItOver() async throws {
        try await Self.withOwnedSession { server, host, id, other, location in
            // A member listens through a second node, which follows the session and tries for
            // its lease every half second.
            let follower = try await ServerProcess(dataDirectory: TestServer.makeDataDirectory(), extraArguments: ["--database", try location.url])
            let code = try await server.api.view(host.token, id).session.joinCode
            let guest = try await follower.server.api.guest("Guest")
            _ = try await follower.server.api.join(guest.token, code: code)
            let socket = TestSocket(server: follower.server, session: id, token: guest.token)
            try await socket.next(.stateSync)
            #expect(try await server.api.request("DELETE", "/api/v1/sessions/\(id)", token: host.token).status == 204)
            try await socket.next(.sessionEnded)
            // The owner gives the lease back as it ends the session; the follower may take it at
            // its next poll, but not keep it: an ended session has nothing to own. (A follower that
            // applied the end polls for it no more; one that had not finds the end as it reads
            // the log in `promote`, and gives the lease back.)
            try await eventually("the ended session's lease is free", timeout: .seconds(10)) { try await other.leaseIsFree(id) }
            try await Task.sleep(for: .seconds(2)) // four polls of the follower
            try await eventually("the ended session's lease is still free", timeout: .seconds(5)) { try await other.leaseIsFree(id) }
            _ = await socket.close()
            _ = try await follower.terminate()
        }
    }

    @Test func aSessionLetGoBecauseAnotherWriterOvertookItGivesUpItsLease() async throws {
        try await Self.withOwnedSession { server, host, id, other, _ in
            #expect(try await other.leaseIsFree(id) == false, "the node that created the session owns it")
            // Another writer's record (an old owner's late commit): the node's next append is refused.
            try await other.query("UPDATE sessions SET last_lsn = last_lsn + 1 WHERE id = \(id.rawValue)", logger: Logger(label: "test"))
            let add = try await server.api.add(host.token, id, testTrack(1))
            #expect(add.status == 503, "\(add.status) \(add.text)")
            // Kept, the lease would keep every node from a session this one no longer serves.
            try await eventually("the lease of a session let go is given back", timeout: .seconds(5)) { try await other.leaseIsFree(id) }
        }
    }

    @Test(.timeLimit(.minutes(1))) func aSessionCreatedWhileTheLeaseConnectionBrokeIsCreatedWithItsLeaseOrNotAtAll() async throws {
        let logger = Logger(label: "test")
        try await Self.withOwnedSession { server, host, _, other, location in
            // Holds the creation at its join-code check (a read of `sessions`).
            let blocker = try await PostgresConnection.connect(configuration: try location.testConnectionConfiguration(), id: 5, logger: logger)
            do {
                try await blocker.query("BEGIN", logger: logger)
                try await blocker.query("LOCK TABLE sessions IN ACCESS EXCLUSIVE MODE", logger: logger)
                async let created = server.api.send("POST", "/api/v1/sessions", token: host.token, json: CreateSessionRequest())
                try await eventually("the creation waits for the table", timeout: .seconds(10)) {
                    try await Self.count("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'", other) >= 1
                }
                // The node's lease connection breaks (it is idle between its heartbeats); the
                // waiting statement and the two test connections stay.
                let terminated = try await Self.count(
                    """
                    SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
                    WHERE datname = current_database() AND state = 'idle' AND pid <> pg_backend_pid() AND pid <> \(try await Self.pid(blocker))
                    """, other)
                #expect(terminated >= 1, "the node's idle lease connection was broken")
                try await Task.sleep(for: .seconds(1))
                try await blocker.query("COMMIT", logger: logger)
                let answer = try await created
                if answer.status == 201 {
                    let id = try answer.decode(SessionView.self).session.id
                    #expect(try await other.leaseIsFree(id) == false, "a session this node serves is one it holds the lease of")
                } else {
                    #expect(answer.status == 503, "\(answer.status) \(answer.text)")
                }
            } catch {
                try? await blocker.close()
                throw error
            }
            try await blocker.close()
        }
    }

    /// The one number `sql` answers.
    private static func count(_ sql: String, _ connection: PostgresConnection) async throws -> Int {
        let rows = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: Logger(label: "test"))
        var count = 0
        for try await n in rows.decode(Int64.self) { count = Int(n) }
        return count
    }

    /// The server process behind `connection`.
    private static func pid(_ connection: PostgresConnection) async throws -> Int {
        try await count("SELECT pg_backend_pid()::bigint", connection)
    }

    /// Runs `body` with a server on PostgreSQL, a session it created (and owns), and a
    /// connection of the test's own to the same database.
    private static func withOwnedSession(
        _ body: @Sendable (TestServer, GuestAuthResponse, SessionID, PostgresConnection, PostgresLocation) async throws -> Void
    ) async throws {
        let location = try await TestPostgres.freshDatabase()
        let store = try await PostgresSessionStore.open(location, logger: Logger(label: "test"))
        try await TestServer.with(store: store) { server in
            let host = try await server.api.guest("Host")
            let id = try await server.api.create(host.token).session.id
            let other = try await PostgresConnection.connect(configuration: try location.testConnectionConfiguration(), id: 3, logger: Logger(label: "test"))
            do {
                try await body(server, host, id, other, location)
            } catch {
                try? await other.close()
                throw error
            }
            try await other.close()
        }
    }


    @Test(.timeLimit(.minutes(1))) func forwardsForMoreSessionsThanOneNotificationNamesAreStoredAndAnnounced() async throws {
        let location = try await TestPostgres.freshDatabase()
        let logger = Logger(label: "test")
        let store = try await PostgresSessionStore.open(location, logger: logger)
        let node = ClusterNode(store: store, logger: logger)
        // 300 session ids are ~11,100 bytes: more than one notification's 8,000.
        let sessions = (1...300).map { SessionID(String(format: "00000000-0000-0000-0015-%012d", $0)) }
        let refusals = Mutex<[String]>([])
        // Queued before the node runs, so that its forwarder sends them in one statement.
        for session in sessions {
            node.forward(
                ForwardedCommand(
                    inboxId: 0, session: session, origin: node.nodeID, connection: nil, replyId: "r-\(session)",
                    command: .vote(itemId: "00000000-0000-0000-0015-100000000000", value: 1), user: "00000000-0000-0000-0015-200000000000"),
                failed: { error in refusals.withLock { $0.append(error.message) } })
        }
        let announced = NIOLockedValueBox<Set<SessionID>>([])
        let other = try await PostgresConnection.connect(configuration: try location.testConnectionConfiguration(), id: 4, logger: logger)
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                let (listening, started) = AsyncStream.makeStream(of: Void.self)
                group.addTask {
                    try await other.listen(on: "jam_inbox") { notifications in
                        started.yield()
                        for try await notification in notifications {
                            let named = notification.payload.split(separator: "\n").map { SessionID(String($0)) }
                            announced.withLockedValue { $0.formUnion(named) }
                        }
                    }
                }
                for await _ in listening { break }
                group.addTask { try await node.run() }
                try await eventually("every session is announced", timeout: .seconds(20)) {
                    announced.withLockedValue { $0 } == Set(sessions) || !refusals.withLock { $0 }.isEmpty
                }
                let refused = refusals.withLock { $0 }
                #expect(refused.count == 0, "forwards refused: \(refused.first ?? "")")
                let everyOne = announced.withLockedValue { $0 } == Set(sessions)
                #expect(everyOne, "every session is announced")
                let rows = try await other.query("SELECT count(DISTINCT session_id) FROM session_inbox", logger: logger)
                var stored = 0
                for try await count in rows.decode(Int64.self) { stored = Int(count) }
                #expect(stored == sessions.count, "every forward is stored")
                group.cancelAll()
            }
        } catch {
            try? await other.close()
            try? await store.close()
            throw error
        }
        try await other.close()
        try await store.close()
    }
}

/// How a forwarded command is kept in the inbox.
@Suite struct ForwardedCommandEncodingTests {
    @Test func aForwardedCommandReadsBackAsItWasWritten() throws {
        let command = ForwardedCommand(
            inboxId: 0, session: "00000000-0000-0000-0009-000000000001", origin: "node-a", connection: 7, replyId: "c-1",
            command: .vote(itemId: "00000000-0000-0000-0009-000000000002", value: -1), user: "00000000-0000-0000-0009-000000000003")
        let read = try ForwardedCommand.decode(
            inboxId: 12, session: command.session, origin: "node-a", connection: 7, replyId: "c-1", input: command.encodedInput)
        var expected = command
        expected.inboxId = 12
        #expect(read == expected)
    }

    @Test func aRowThatIsNotOneCommandIsRefused() {
        let two = LogCoding.encode([TimedInput(at: 0, .advance), TimedInput(at: 0, .advance)])
        #expect(throws: (any Error).self) {
            try ForwardedCommand.decode(inboxId: 1, session: "00000000-0000-0000-0009-000000000001", origin: "n", connection: nil, replyId: nil, input: two)
        }
        #expect(throws: (any Error).self) {
            try ForwardedCommand.decode(inboxId: 1, session: "00000000-0000-0000-0009-000000000001", origin: "n", connection: nil, replyId: nil, input: Array("{".utf8))
        }
    }

    @Test func logNotificationsStayUnderPostgreSQLsPayloadLimit() {
        let writes = (0..<400).map { n in
            StoreWrite.record(JamID(String(format: "00000000-0000-0000-0009-%012d", n)), LogRecord(lsn: 1, firstSeq: 0, lastSeq: 1, wakeAt: nil, inputs: []))
        }
        let payloads = PostgresBatch(writes).notifications
        #expect(payloads.count > 1)
        #expect(payloads.allSatisfy { $0.utf8.count < 8_000 })
        #expect(payloads.flatMap { $0.split(separator: "\n") }.count == 400, "every session once")
    }
}
