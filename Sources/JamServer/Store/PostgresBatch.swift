import JamProtocol

/// One group commit, regrouped into the statements the PostgreSQL store runs.
struct PostgresBatch {
    var index: [StoredSessionEntry] = []
    var records: [(id: SessionID, record: LogRecord)] = []
    /// Per session with records: its first and last record of the batch.
    var appends: [(id: SessionID, first: Int64, last: Int64)] = []
    var snapshots: [(id: SessionID, snapshot: SessionSnapshot)] = []
    var consumed: [Int64] = []
    /// Sessions whose rows go, after the batch's other writes.
    var purged: [SessionID] = []
    /// Logs cut back to before an ignored last record, before the batch's appends.
    var dropped: [(id: SessionID, from: Int64)] = []
    /// Sessions whose records in the batch do not follow on from each other: two copies of
    /// one session (one let go with writes still queued, one read again from the store) wrote
    /// the same record number. The log can hold only one; trying again cannot help.
    var outOfOrder: Set<SessionID> = []
    /// Sessions the batch creates: their first snapshot (record 0) is in it. Only a new
    /// session writes that snapshot, so its index row must not be there already.
    var created: Set<SessionID> = []

    init(_ writes: [StoreWrite]) {
        var position: [SessionID: Int] = [:]
        // One statement may change a row once: a later index row or snapshot of the same key
        // replaces an earlier one of the batch.
        var indexPosition: [SessionID: Int] = [:]
        var snapshotPosition: [String: Int] = [:]
        for write in writes {
            switch write {
            case .index(let entry):
                if let at = indexPosition[entry.id] {
                    index[at] = entry
                } else {
                    indexPosition[entry.id] = index.count
                    index.append(entry)
                }
            case .record(let id, let record):
                records.append((id, record))
                if let at = position[id] {
                    if record.lsn != appends[at].last + 1 { outOfOrder.insert(id) }
                    appends[at].last = record.lsn
                } else {
                    position[id] = appends.count
                    appends.append((id, record.lsn, record.lsn))
                }
            case .consumed(_, let inboxId):
                consumed.append(inboxId)
            case .purge(let id):
                purged.append(id)
            case .dropTail(let id, let from):
                dropped.append((id, from))
            case .snapshot(let id, let snapshot):
                if snapshot.lsn == 0 { created.insert(id) }
                let key = "\(id.rawValue) \(snapshot.lsn)"
                if let at = snapshotPosition[key] {
                    snapshots[at] = (id, snapshot)
                } else {
                    snapshotPosition[key] = snapshots.count
                    snapshots.append((id, snapshot))
                }
            }
        }
    }

    /// "session-id last-lsn" lines, cut below PostgreSQL's 8,000-byte payload limit.
    var notifications: [String] {
        var payloads: [String] = []
        var current = ""
        for append in appends {
            let line = "\(append.id.rawValue) \(append.last)"
            if current.utf8.count + line.utf8.count + 1 > PostgresSessionStore.notificationCut {
                payloads.append(current)
                current = ""
            }
            current += current.isEmpty ? line : "\n" + line
        }
        if !current.isEmpty { payloads.append(current) }
        return payloads
    }
}
