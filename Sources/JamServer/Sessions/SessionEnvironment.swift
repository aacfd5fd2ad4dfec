import JamCore
import JamProtocol
import Logging

/// Services a live session needs.
struct SessionEnvironment: Sendable {
    let clock: any ServerClock
    let ids: any IDGenerator
    let pipeline: CommitPipeline
    let logger: Logger
    let outbox: SessionOutbox.Configuration
    /// A snapshot is written after this many records at most (and after `outbox.replayLimit`
    /// events: snapshots that far apart let a recovery regenerate the whole replay ring).
    let snapshotEvery: Int
    /// The profile's timing, which a session brought back from the store takes on.
    let timing: Timing
    /// The library: what a fallback shuffle draws from (empty: no fallback), and what a
    /// library track added must be.
    var library = LibraryTracks.none
    /// The node, when several share a PostgreSQL database.
    var cluster: ClusterNode?
    /// How long an ended session's rows stay in the store; `nil` keeps them.
    var endedRetentionMs: Int64?
    /// How often the registry lets go of sessions that ended in memory.
    var endedSweepMs: Int64 = 60_000
    /// How often a node of several looks in the database for deadlines no node is serving.
    var deadlineScanMs: Int64 = 30_000
    /// How long a replica nobody here is connected to keeps following its session.
    var idleReplicaMs: Int64 = 60_000
    /// How long a caller whose command went to another node's session waits for its answer.
    var forwardAnswerMs: Int64 = 10_000
    /// How fast each member may send socket messages; `nil` for no limit.
    var commandLimits: CommandLimits?
}
