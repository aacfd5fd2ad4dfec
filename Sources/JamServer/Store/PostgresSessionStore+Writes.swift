import Foundation
import JamProtocol
import NIOCore
import PostgresNIO

/// Group commits: one transaction per batch, and a retried batch whose `COMMIT` went through.
extension PostgresSessionStore {
    /// Writes `writes` as one transaction; the future succeeds once PostgreSQL has committed it.
    public func commit(_ writes: [StoreWrite], on loop: any EventLoop) -> EventLoopFuture<Void> {
        let promise = loop.makePromise(of: Void.self)
        promise.completeWithTask { try await self.write(PostgresBatch(writes)) }
        return promise.futureResult
    }

    private func write(_ batch: PostgresBatch) async throws {
        // Before anything is written: the log's key would refuse the batch on every try, and
        // the pipeline would retry it for ever while the node refuses every command.
        guard batch.outOfOrder.isEmpty else { throw StoreConflict(sessions: Array(batch.outOfOrder)) }
        // A refused append (`StoreConflict`) reaches the caller as it is: it is the caller's to handle.
        try await client.transaction(logger: logger) { try await self.write(batch, on: $0) }
    }

    private func write(_ batch: PostgresBatch, on connection: PostgresConnection) async throws {
        // A new session's row is inserted, never written over: the rest are updates.
        let index = try await batch.index.filter { !batch.created.contains($0.id) }
            + createdAgain(batch.index.filter { batch.created.contains($0.id) }, of: batch, on: connection)
        if !index.isEmpty {
            try await connection.send(
                """
                INSERT INTO sessions (id, join_code, code_issued_at, ended)
                SELECT * FROM unnest(\(index.map(\.id.rawValue)), \(index.map(\.joinCode)), \(index.map(\.codeIssuedAt)), \(index.map(\.ended)))
                ON CONFLICT (id) DO UPDATE SET join_code = excluded.join_code, code_issued_at = excluded.code_issued_at, ended = excluded.ended
                """, logger: logger)
        }
        if !batch.dropped.isEmpty {
            // The log ends before the dropped record again, so the record that takes its number
            // appends as any other does.
            let ids = batch.dropped.map(\.id.rawValue), from = batch.dropped.map(\.from)
            try await connection.send(
                """
                WITH cut AS (SELECT * FROM unnest(\(ids), \(from)) AS v(id, first)),
                log AS (DELETE FROM session_log l USING cut c WHERE l.session_id = c.id AND l.lsn >= c.first),
                kept AS (DELETE FROM session_snapshots s USING cut c WHERE s.session_id = c.id AND s.lsn >= c.first)
                UPDATE sessions s SET last_lsn = c.first - 1 FROM cut c WHERE s.id = c.id AND s.last_lsn >= c.first
                """, logger: logger)
        }
        if !batch.appends.isEmpty {
            let moved = try await connection.send(
                """
                UPDATE sessions s SET last_lsn = v.last
                FROM unnest(\(batch.appends.map(\.id.rawValue)), \(batch.appends.map(\.first)), \(batch.appends.map(\.last))) AS v(id, first, last)
                WHERE s.id = v.id AND s.last_lsn = v.first - 1
                RETURNING s.id
                """, logger: logger)
            var followed = Set<String>()
            for try await id in moved.decode(String.self) { followed.insert(id) }
            var records = batch.records
            let unmatched = batch.appends.filter { !followed.contains($0.id.rawValue) }
            if !unmatched.isEmpty {
                let stored = try await storedAlready(unmatched, of: batch, on: connection)
                records.removeAll { entry in stored[entry.id].map { entry.record.lsn <= $0 } ?? false }
            }
            guard !records.isEmpty else { return try await finish(batch, on: connection) }
            try await connection.send(
                """
                INSERT INTO session_log (session_id, lsn, first_seq, last_seq, wake_at, inputs, answer_key, answer)
                SELECT id, lsn, first_seq, last_seq, CASE WHEN has_wake THEN wake_at END, inputs,
                    CASE WHEN has_answer THEN answer_key END, CASE WHEN has_answer THEN answer END
                FROM unnest(
                    \(records.map(\.id.rawValue)), \(records.map(\.record.lsn)), \(records.map(\.record.firstSeq)),
                    \(records.map(\.record.lastSeq)), \(records.map { $0.record.wakeAt != nil }), \(records.map { $0.record.wakeAt ?? 0 }),
                    \(records.map { ByteBuffer(bytes: $0.record.inputs) }), \(records.map { $0.record.answer != nil }),
                    \(records.map { $0.record.answer?.key ?? "" }), \(records.map { $0.record.answer?.frame ?? "" }))
                    AS v(id, lsn, first_seq, last_seq, has_wake, wake_at, inputs, has_answer, answer_key, answer)
                """, logger: logger)
        }
        try await finish(batch, on: connection)
    }

    /// Inserts the index rows of the sessions the batch creates; returns those already there
    /// that are the batch's own, stored by an earlier try whose answer was lost, for updating
    /// as any other row. Such a row's snapshots are all the batch's, byte for byte: its first
    /// (record 0), or, when the batch also snapshotted the session twice more and the first
    /// was pruned, those. Any other row is another node's session under the same id (a create
    /// sent again, with the same idempotency key, to another node while this one could not
    /// reach the database): `StoreConflict`, and the other session stays as it is.
    private func createdAgain(
        _ entries: [StoredSessionEntry], of batch: PostgresBatch, on connection: PostgresConnection
    ) async throws -> [StoredSessionEntry] {
        guard !entries.isEmpty else { return [] }
        let inserted = try await connection.send(
            """
            INSERT INTO sessions (id, join_code, code_issued_at, ended)
            SELECT * FROM unnest(\(entries.map(\.id.rawValue)), \(entries.map(\.joinCode)), \(entries.map(\.codeIssuedAt)), \(entries.map(\.ended)))
            ON CONFLICT (id) DO NOTHING
            RETURNING id
            """, logger: logger)
        var new = Set<String>()
        for try await id in inserted.decode(String.self) { new.insert(id) }
        let existing = entries.filter { !new.contains($0.id.rawValue) }
        guard !existing.isEmpty else { return [] }
        // Locked, so the session's own node cannot move it on between this look and the update.
        let stored = try await connection.send(
            """
            SELECT s.id, p.lsn, p.seq, p.state FROM sessions s
            LEFT JOIN session_snapshots p ON p.session_id = s.id
            WHERE s.id = ANY(\(existing.map(\.id.rawValue))) FOR UPDATE OF s
            """, logger: logger)
        var ours: [String: [Int64: SessionSnapshot]] = [:]
        for (id, snapshot) in batch.snapshots { ours[id.rawValue, default: [:]][snapshot.lsn] = snapshot }
        var matched = Set<String>()
        var differs = Set<String>()
        for try await (id, lsn, seq, state) in stored.decode((String, Int64?, Int64?, ByteBuffer?).self) {
            guard let lsn, let seq, let state, let mine = ours[id]?[lsn], mine.seq == seq, state.readableBytesView.elementsEqual(mine.state) else {
                differs.insert(id)
                continue
            }
            matched.insert(id)
        }
        let others = existing.filter { !matched.contains($0.id.rawValue) || differs.contains($0.id.rawValue) }
        guard others.isEmpty else { throw StoreConflict(sessions: others.map(\.id)) }
        return existing
    }

    /// Sessions of `unmatched` whose log does not end where the batch expects: where each one's
    /// log ends, when that is one of the batch's own records and every record of the batch up to
    /// it is stored as the batch has it, byte for byte. A batch whose `COMMIT` went through while
    /// its answer was lost finds its records there when it is tried again; that is no other
    /// node's write. The rest of such a session's records follow on from there. Throws
    /// `StoreConflict` for every session another node wrote.
    private func storedAlready(
        _ unmatched: [(id: SessionID, first: Int64, last: Int64)], of batch: PostgresBatch, on connection: PostgresConnection
    ) async throws -> [SessionID: Int64] {
        // Locked, so no other node moves them on between this look and the writes after it.
        let ends = try await connection.send(
            "SELECT id, last_lsn FROM sessions WHERE id = ANY(\(unmatched.map(\.id.rawValue))) FOR UPDATE", logger: logger)
        var end: [String: Int64] = [:]
        for try await (id, lsn) in ends.decode((String, Int64).self) { end[id] = lsn }
        let candidates = unmatched.filter { append in end[append.id.rawValue].map { (append.first...append.last).contains($0) } ?? false }
        var stored: [SessionID: Int64] = [:]
        if !candidates.isEmpty {
            let rows = try await connection.send(
                """
                SELECT l.session_id, l.lsn, l.first_seq, l.last_seq, l.wake_at, l.inputs, l.answer_key, l.answer
                FROM unnest(\(candidates.map(\.id.rawValue)), \(candidates.map(\.first)), \(candidates.map { end[$0.id.rawValue]! }))
                    AS v(id, first, last)
                JOIN session_log l ON l.session_id = v.id AND l.lsn >= v.first AND l.lsn <= v.last
                """, logger: logger)
            var ours: [SessionID: [Int64: LogRecord]] = [:]
            for entry in batch.records { ours[entry.id, default: [:]][entry.record.lsn] = entry.record }
            var differs = Set<String>()
            var seenEnd = Set<String>()
            for try await (id, lsn, firstSeq, lastSeq, wakeAt, inputs, key, answer) in rows.decode(
                (String, Int64, Int64, Int64, Int64?, ByteBuffer, String?, String?).self)
            {
                guard let record = ours[JamID(id)]?[lsn], record.firstSeq == firstSeq, record.lastSeq == lastSeq, record.wakeAt == wakeAt,
                    record.answer?.key == key, record.answer?.frame == answer, inputs.readableBytesView.elementsEqual(record.inputs)
                else {
                    differs.insert(id)
                    continue
                }
                if lsn == end[id] { seenEnd.insert(id) }
            }
            // Records before the end may have been pruned by the batch's own snapshot; the
            // end is never pruned, and every record still there must be the batch's.
            for append in candidates where seenEnd.contains(append.id.rawValue) && !differs.contains(append.id.rawValue) {
                stored[append.id] = end[append.id.rawValue]
            }
        }
        let conflicts = unmatched.map(\.id).filter { stored[$0] == nil }
        guard conflicts.isEmpty else { throw StoreConflict(sessions: conflicts) }
        let rest = unmatched.filter { stored[$0.id]! < $0.last }
        guard !rest.isEmpty else { return stored }
        let moved = try await connection.send(
            """
            UPDATE sessions s SET last_lsn = v.last
            FROM unnest(\(rest.map(\.id.rawValue)), \(rest.map { stored[$0.id]! }), \(rest.map(\.last))) AS v(id, stored, last)
            WHERE s.id = v.id AND s.last_lsn = v.stored
            RETURNING s.id
            """, logger: logger)
        var followed = Set<String>()
        for try await id in moved.decode(String.self) { followed.insert(id) }
        let overtaken = rest.map(\.id).filter { !followed.contains($0.rawValue) }
        guard overtaken.isEmpty else { throw StoreConflict(sessions: overtaken) }
        return stored
    }

    /// The batch's writes after its records: snapshots, the inbox, purges, notifications.
    private func finish(_ batch: PostgresBatch, on connection: PostgresConnection) async throws {
        let snapshots = batch.snapshots
        if !snapshots.isEmpty {
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            try await connection.send(
                """
                INSERT INTO session_snapshots (session_id, lsn, seq, wake_at, state, answers, written_at)
                SELECT id, lsn, seq, CASE WHEN has_wake THEN wake_at END, state, answers, \(now)
                FROM unnest(
                    \(snapshots.map(\.id.rawValue)), \(snapshots.map(\.snapshot.lsn)), \(snapshots.map(\.snapshot.seq)),
                    \(snapshots.map { $0.snapshot.wakeAt != nil }), \(snapshots.map { $0.snapshot.wakeAt ?? 0 }),
                    \(snapshots.map { ByteBuffer(bytes: $0.snapshot.state) }), \(snapshots.map { ByteBuffer(bytes: LogCoding.encode($0.snapshot.answers)) }))
                    AS v(id, lsn, seq, has_wake, wake_at, state, answers)
                ON CONFLICT (session_id, lsn) DO UPDATE SET seq = excluded.seq, wake_at = excluded.wake_at, state = excluded.state,
                    answers = excluded.answers, written_at = excluded.written_at
                """, logger: logger)
            // Each session's second-newest snapshot is now the oldest kept: older ones, and the
            // records it includes, go.
            try await connection.send(
                """
                WITH ranked AS (
                    SELECT session_id, lsn, row_number() OVER (PARTITION BY session_id ORDER BY lsn DESC) AS n
                    FROM session_snapshots WHERE session_id = ANY(\(Array(Set(snapshots.map(\.id.rawValue)))))),
                kept AS (SELECT session_id, lsn FROM ranked WHERE n = 2),
                old AS (DELETE FROM session_snapshots s USING kept k WHERE s.session_id = k.session_id AND s.lsn < k.lsn)
                DELETE FROM session_log l USING kept k WHERE l.session_id = k.session_id AND l.lsn <= k.lsn
                """, logger: logger)
        }
        if !batch.consumed.isEmpty {
            try await connection.send("DELETE FROM session_inbox WHERE id = ANY(\(batch.consumed))", logger: logger)
        }
        if !batch.purged.isEmpty {
            let ids = batch.purged.map(\.rawValue)
            try await connection.send("DELETE FROM session_inbox WHERE session_id = ANY(\(ids))", logger: logger)
            try await connection.send("DELETE FROM session_log WHERE session_id = ANY(\(ids))", logger: logger)
            try await connection.send("DELETE FROM session_snapshots WHERE session_id = ANY(\(ids))", logger: logger)
            try await connection.send("DELETE FROM sessions WHERE id = ANY(\(ids))", logger: logger)
        }
        for payload in batch.notifications {
            try await connection.send("SELECT pg_notify(\(Self.logChannel), \(payload))", logger: logger)
        }
    }
}
