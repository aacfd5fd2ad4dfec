import JamCore
import JamProtocol
import NIOCore
import ServiceLifecycle

/// A session as the store's index lists it: enough to find it by id or join code, and to
/// know when it must be brought back without anybody asking for it.
public struct StoredSessionEntry: Sendable, Equatable {
    /// The session.
    public var id: SessionID
    /// Its current join code.
    public var joinCode: String
    /// When that code was issued (for profiles whose codes expire).
    public var codeIssuedAt: Millis
    /// True once the session's end is stored.
    public var ended: Bool
    /// The session's next timeline deadline as of its last record, if any.
    public var wakeAt: Millis?

    /// Creates an entry.
    public init(id: SessionID, joinCode: String, codeIssuedAt: Millis, ended: Bool, wakeAt: Millis?) {
        self.id = id
        self.joinCode = joinCode
        self.codeIssuedAt = codeIssuedAt
        self.ended = ended
        self.wakeAt = wakeAt
    }
}

/// A command id answered by a logged turn, and the frame that answered it.
public struct StoredAnswer: Codable, Sendable, Equatable {
    /// "user id" of the command.
    public var key: String
    /// The answer as sent (an `ack` frame).
    public var frame: String
    /// True for an answer to a device's report, kept apart from the others
    /// (`AnswerCache.Lane`); absent for the others, and in answers stored before the two lists.
    public var report: Bool?
    /// For a socket command's answer kept in a snapshot, the fingerprint of the command it
    /// answered (16 hex digits), so the id sent with another command is refused rather than
    /// answered; absent for the others, and in answers stored before.
    public var command: String?

    /// Creates an answer.
    public init(key: String, frame: String, report: Bool? = nil, command: String? = nil) {
        self.key = key
        self.frame = frame
        self.report = report
        self.command = command
    }

    /// The answer of a stored log record from its two columns. Both or neither are set when the
    /// store wrote them; one without the other is damage, and is refused rather than read as
    /// an empty answer that a retried command would then be sent back.
    static func stored(key: String?, frame: String?, session: SessionID, lsn: Int64) throws(DamagedStoredSession) -> StoredAnswer? {
        switch (key, frame) {
        case (nil, nil): return nil
        case (let key?, let frame?): return StoredAnswer(key: key, frame: frame)
        case (_?, nil): throw DamagedStoredSession(session: session, part: .record(lsn), problem: "has an answered command id without its answer")
        case (nil, _?): throw DamagedStoredSession(session: session, part: .record(lsn), problem: "has an answer without the command id it answered")
        }
    }
}

/// Stored data the store cannot have written as it reads: the session is not loaded from it,
/// so nothing is answered or replayed from damaged data, and it stays as it is for its
/// operator to look at.
public struct DamagedStoredSession: Error, CustomStringConvertible, Equatable, Sendable {
    /// Which stored part of the session is damaged.
    public enum Part: Equatable, Sendable {
        /// The log record with this number.
        case record(Int64)
        /// The snapshot taken after this record.
        case snapshot(Int64)
        /// All of its snapshots (every stored session has at least one).
        case snapshots
    }

    /// The session the data belongs to.
    public let session: SessionID
    /// Where in it.
    public let part: Part
    /// What is wrong with it.
    public let problem: String
    public var description: String {
        switch part {
        case .record(let lsn): "record \(lsn) of session \(session.rawValue)'s log \(problem)"
        case .snapshot(let lsn): "the snapshot of session \(session.rawValue) at record \(lsn) \(problem)"
        case .snapshots: "the snapshots of session \(session.rawValue) \(problem)"
        }
    }

    /// A session in the index without a snapshot: the store writes a session's index row and
    /// its first snapshot in one commit, and removes them in one.
    static func snapshotsMissing(_ id: SessionID) -> DamagedStoredSession {
        DamagedStoredSession(session: id, part: .snapshots, problem: "are missing")
    }

    /// What a request for the session is told: not to try again, as trying cannot help.
    var refusal: JamError { JamError(.internal, "the session's stored data is damaged: \(description)") }
}

/// One entry of a session's log: what one turn of the session applied (its inputs, encoded)
/// and the command id it answered. The turn's events are not stored: replaying the inputs
/// gives them back, frames for `hello {lastSeq}` included.
public struct LogRecord: Sendable, Equatable {
    /// Record number within the session: 1, 2, 3…
    public var lsn: Int64
    /// The session's `seq` before the record; its events are `firstSeq + 1 … lastSeq`.
    public var firstSeq: Int64
    /// The session's `seq` after the record.
    public var lastSeq: Int64
    /// The session's next deadline after the record.
    public var wakeAt: Millis?
    /// `[TimedInput]`, encoded (`LogCoding`).
    public var inputs: [UInt8]
    /// The command id this turn answered, with its answer.
    public var answer: StoredAnswer?

    /// Creates a record.
    public init(lsn: Int64, firstSeq: Int64, lastSeq: Int64, wakeAt: Millis?, inputs: [UInt8], answer: StoredAnswer? = nil) {
        self.lsn = lsn
        self.firstSeq = firstSeq
        self.lastSeq = lastSeq
        self.wakeAt = wakeAt
        self.inputs = inputs
        self.answer = answer
    }
}

/// A session's state as of one record: recovery starts here and replays the log after it.
public struct SessionSnapshot: Sendable, Equatable {
    /// The last record the snapshot includes (0: none yet).
    public var lsn: Int64
    /// The session's `seq` at the snapshot.
    public var seq: Int64
    /// The session's next deadline at the snapshot.
    public var wakeAt: Millis?
    /// The encoded `SessionState`.
    public var state: [UInt8]
    /// Recently answered command ids, oldest first.
    public var answers: [StoredAnswer]

    /// Creates a snapshot.
    public init(lsn: Int64, seq: Int64, wakeAt: Millis?, state: [UInt8], answers: [StoredAnswer]) {
        self.lsn = lsn
        self.seq = seq
        self.wakeAt = wakeAt
        self.state = state
        self.answers = answers
    }
}

/// What the store has of one session: its two newest snapshots and every record after the
/// older one.
///
/// Recovery starts from the older snapshot so that replaying the records regenerates at
/// least the last `replayLimit` events' frames (snapshots are taken that many events
/// apart), which is what a client resuming across a restart asks for.
public struct StoredSession: Sendable {
    /// Oldest first; one or two.
    public var snapshots: [SessionSnapshot]
    /// The records after the oldest snapshot, in order.
    public var records: [LogRecord]

    /// Creates the stored form.
    public init(snapshots: [SessionSnapshot], records: [LogRecord]) {
        self.snapshots = snapshots
        self.records = records
    }
}

/// One write of a group commit; a batch is applied in order, in one transaction.
public enum StoreWrite: Sendable, Equatable {
    /// A new session, or its new join code or end: the index row.
    case index(StoredSessionEntry)
    /// A record appended to a session's log.
    case record(SessionID, LogRecord)
    /// A new snapshot; the store keeps it and the one before, and drops older snapshots and
    /// the records they include.
    case snapshot(SessionID, SessionSnapshot)
    /// A command another node forwarded is applied (or refused): its inbox row goes, in the
    /// same transaction as the record that applied it, so it is applied exactly once.
    case consumed(SessionID, inboxId: Int64)
    /// An ended session's retention is over: its index row, snapshots, log (and inbox) go.
    case purge(SessionID)
    /// Recovery ignored the session's last record, at `from`, because it did not read: that
    /// record goes, and every snapshot from it on (written after it, they hold its change), so
    /// the record that takes its number is the one a later recovery replays.
    case dropTail(SessionID, from: Int64)
}

extension StoreWrite {
    /// The session the write belongs to.
    var sessionID: SessionID {
        switch self {
        case .index(let entry): entry.id
        case .record(let id, _), .snapshot(let id, _), .consumed(let id, _), .purge(let id), .dropTail(let id, _): id
        }
    }
}

/// Where sessions live between restarts: an index of sessions, and per session a log of
/// records with snapshots. Writes come as group commits from one pipeline, in order.
///
/// `commit` is called on the commit pipeline's event loop, one batch at a time, and its
/// future completes once the batch is durable. An embedded store does the work right there
/// (the loop is the store's own thread); a networked one returns when the server confirms.
public protocol SessionStore: Sendable {
    /// Every session the store knows.
    func loadIndex() async throws -> [StoredSessionEntry]
    /// One session's snapshots and log, or nil when the store does not have it. One its index
    /// holds without a snapshot is damage (`DamagedStoredSession.snapshotsMissing`), not unknown.
    func loadSession(_ id: SessionID) async throws -> StoredSession?
    /// Writes one batch in one transaction; the future succeeds once it is durable.
    func commit(_ writes: [StoreWrite], on loop: any EventLoop) -> EventLoopFuture<Void>
    /// Upkeep after a batch, once its sessions have been told it is stored, on the loop
    /// that commits: work here delays the next batch, never the last one's answers.
    func afterCommit()
    /// The store's own long-lived work (an embedded store's checkpoints), run beside the server.
    var services: [any Service] { get }
    /// Releases the store; called once nothing commits any more.
    func close() async throws
}

extension SessionStore {
    /// Most stores need no upkeep between batches.
    public func afterCommit() {}
}
