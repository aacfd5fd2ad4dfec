import JamCore
import JamProtocol

/// What a session writes to the store: a record per turn, its index row when it changes, and
/// snapshots.
extension LiveSession {
    /// Writes the turn's record (and the index row or a snapshot when due) to the pipeline.
    func log(inputs: [TimedInput], firstSeq: Int64, answer: StoredAnswer?, lsn: Int64, consumes inboxId: Int64? = nil) {
        let record = LogRecord(
            lsn: lsn, firstSeq: firstSeq, lastSeq: state.seq, wakeAt: storedWakeAt, inputs: LogCoding.encode(inputs), answer: answer)
        var writes: [StoreWrite] = []
        let entry = indexEntry()
        if entry != indexed {
            writes.append(.index(entry))
            indexed = entry
        }
        writes.append(.record(id, record))
        if let inboxId { writes.append(.consumed(id, inboxId: inboxId)) }
        recordsSinceSnapshot += 1
        eventsSinceSnapshot += Int(state.seq - firstSeq)
        if recordsSinceSnapshot >= environment.snapshotEvery || eventsSinceSnapshot >= environment.outbox.replayLimit || state.hasEnded {
            writes.append(snapshotWrite(lsn: lsn))
        }
        environment.pipeline.submit(writes, receipt: (self, lsn))
    }

    /// When the store must hand the session back without anybody asking: its next deadline,
    /// or once it has ended, when its retention is over and its rows are purged.
    var storedWakeAt: Millis? {
        if let endedAt = state.endedAt { return environment.endedRetentionMs.map { endedAt + $0 } }
        return state.nextDeadline()
    }

    /// The index row as the session stands.
    func indexEntry() -> StoredSessionEntry {
        StoredSessionEntry(
            id: id, joinCode: state.joinCode, codeIssuedAt: indexed?.joinCode == state.joinCode ? indexed?.codeIssuedAt ?? state.createdAt : environment.clock.now(),
            ended: state.hasEnded, wakeAt: nil)
    }

    /// A snapshot of the state after record `lsn`.
    func snapshotWrite(lsn: Int64) -> StoreWrite {
        recordsSinceSnapshot = 0
        eventsSinceSnapshot = 0
        let snapshot = SessionSnapshot(
            lsn: lsn, seq: state.seq, wakeAt: storedWakeAt, state: LogCoding.encode(state), answers: answers.stored)
        return .snapshot(id, snapshot)
    }
}
