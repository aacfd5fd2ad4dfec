import JamCore
import Logging

/// Records written by another build: applying a record's inputs with this build's rules can
/// give a different number of events (a release changed what a command sends) than the
/// build that wrote it stored, and members may hold that build's numbers.
extension LiveSession {
    /// After `record`'s inputs were applied to `state`: when its stored numbering differs,
    /// the stored one wins (members hold it, and records written after go on from it), and
    /// true says that frames this build numbered for the record, or kept before it, must
    /// reach nobody (the caller drops them, so members behind get the whole state).
    static func adoptNumbering(of record: LogRecord, into state: inout SessionState, logger: Logger) -> Bool {
        guard state.seq != record.lastSeq else { return false }
        logger.warning(
            "a record's events are numbered differently by this build; members resuming from before it get the whole state",
            metadata: ["record.lsn": "\(record.lsn)", "record.lastSeq": "\(record.lastSeq)", "applied.seq": "\(state.seq)"])
        state.seq = record.lastSeq
        return true
    }
}
