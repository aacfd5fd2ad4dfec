import JamProtocol
import NIOCore
import ServiceLifecycle
import Synchronization

/// A store that keeps everything in memory, with the same semantics as the SQLite store:
/// for tests and for throwaway servers. Nothing survives the process.
public final class InMemorySessionStore: SessionStore, Sendable {
    private struct Contents {
        var index: [SessionID: StoredSessionEntry] = [:]
        /// Oldest first, at most two.
        var snapshots: [SessionID: [SessionSnapshot]] = [:]
        var logs: [SessionID: [Int64: LogRecord]] = [:]
    }

    private let contents = Mutex(Contents())

    /// Creates an empty store.
    public init() {}

    public var services: [any Service] { [] }

    public func loadIndex() async throws -> [StoredSessionEntry] {
        contents.withLock { contents in
            contents.index.values.map { entry in
                var entry = entry
                let lastRecord = contents.logs[entry.id]?.values.max { $0.lsn < $1.lsn }
                let snapshot = contents.snapshots[entry.id]?.last
                if let lastRecord, lastRecord.lsn > snapshot?.lsn ?? -1 {
                    entry.wakeAt = lastRecord.wakeAt
                } else {
                    entry.wakeAt = snapshot?.wakeAt
                }
                return entry
            }
        }
    }

    public func loadSession(_ id: SessionID) async throws -> StoredSession? {
        try contents.withLock { contents in
            guard let snapshots = contents.snapshots[id], let oldest = snapshots.first else {
                if contents.index[id] != nil { throw DamagedStoredSession.snapshotsMissing(id) }
                return nil
            }
            let records = (contents.logs[id] ?? [:]).values.filter { $0.lsn > oldest.lsn }.sorted { $0.lsn < $1.lsn }
            return StoredSession(snapshots: snapshots, records: records)
        }
    }

    public func commit(_ writes: [StoreWrite], on loop: any EventLoop) -> EventLoopFuture<Void> {
        contents.withLock { contents in
            for write in writes {
                switch write {
                case .index(let entry):
                    contents.index[entry.id] = entry
                case .record(let id, let record):
                    contents.logs[id, default: [:]][record.lsn] = record
                case .consumed:
                    // Only nodes sharing PostgreSQL forward commands.
                    break
                case .purge(let id):
                    contents.index[id] = nil
                    contents.logs[id] = nil
                    contents.snapshots[id] = nil
                case .dropTail(let id, let from):
                    contents.logs[id] = contents.logs[id]?.filter { $0.value.lsn < from }
                    contents.snapshots[id]?.removeAll { $0.lsn >= from }
                case .snapshot(let id, let snapshot):
                    var kept = (contents.snapshots[id] ?? []).filter { $0.lsn != snapshot.lsn } + [snapshot]
                    kept.sort { $0.lsn < $1.lsn }
                    kept = Array(kept.suffix(2))
                    contents.snapshots[id] = kept
                    if let oldest = kept.first { contents.logs[id] = contents.logs[id]?.filter { $0.value.lsn > oldest.lsn } }
                }
            }
        }
        return loop.makeSucceededVoidFuture()
    }

    /// Numbers the events of one record, and of every record after it, `extra` higher, as a
    /// build that sent more events for the same inputs would have stored them (tests).
    /// Snapshots from that record on go too, as if the process had died before writing them.
    public func renumberRecords(_ id: SessionID, from lsn: Int64, by extra: Int64) {
        contents.withLock { contents in
            guard var log = contents.logs[id] else { return }
            for (key, record) in log where record.lsn >= lsn {
                var renumbered = record
                if record.lsn > lsn { renumbered.firstSeq += extra }
                renumbered.lastSeq += extra
                log[key] = renumbered
            }
            contents.logs[id] = log
            contents.snapshots[id]?.removeAll { $0.lsn >= lsn }
        }
    }

    /// Puts `inputs` in place of one record's stored inputs, as a build that logs inputs this
    /// one cannot read would have written them (tests).
    public func rewriteRecord(_ id: SessionID, lsn: Int64, inputs: [UInt8]) {
        contents.withLock { contents in contents.logs[id]?[lsn]?.inputs = inputs }
    }

    /// Cuts the stored inputs of one record short, as a write torn when the process died would
    /// have left them (tests). Snapshots that include the record go too, as they could only
    /// have been written after it, unless `keepingSnapshots` (a file damaged later).
    public func damageRecord(_ id: SessionID, lsn: Int64, keepingBytes count: Int, keepingSnapshots: Bool = false) {
        contents.withLock { contents in
            guard var record = contents.logs[id]?[lsn] else { return }
            record.inputs = Array(record.inputs.prefix(count))
            contents.logs[id]?[lsn] = record
            if !keepingSnapshots { contents.snapshots[id]?.removeAll { $0.lsn >= lsn } }
        }
    }

    public func close() async throws {}
}
