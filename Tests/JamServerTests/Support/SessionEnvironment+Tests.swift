import JamCore
import Logging

@testable import JamServer

extension SessionEnvironment {
    /// The environment of a session a test builds by hand: the system clock, random ids, an
    /// outbox that keeps 100 frames, and `pipeline` (an in-memory store's by default);
    /// `cluster` when the session belongs to a node of several.
    static func forTests(logger: Logger, pipeline: CommitPipeline? = nil, cluster: ClusterNode? = nil) -> SessionEnvironment {
        var environment = SessionEnvironment(
            clock: SystemClock(), ids: RandomIDGenerator(), pipeline: pipeline ?? CommitPipeline(store: InMemorySessionStore(), logger: logger),
            logger: logger, outbox: SessionOutbox.Configuration(replayLimit: 100, backlogLimit: 100, stallTimeoutMs: 10_000),
            snapshotEvery: 1_000, timing: Timing())
        environment.cluster = cluster
        return environment
    }
}
