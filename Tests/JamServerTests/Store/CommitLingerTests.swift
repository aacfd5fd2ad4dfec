import JamTestSupport
import Logging
import NIOCore
import Testing

@testable import JamServer

/// The pipeline's linger with its thread and timer: a batch that fills while it waits is
/// written at once, not when the wait runs out.
@Suite struct CommitLingerTests {
    typealias HeldStore = CommitFlushTests.HeldStore

    @Test(.timeLimit(.minutes(1))) func aBatchThatFillsWhileItLingersIsWrittenBeforeTheLingerEnds() async throws {
        let store = HeldStore()
        // A linger far longer than the test waits: only a batch that ends it early is written in time.
        let timing = CommitPipeline.Timing(linger: .seconds(120), batchTarget: 4, busyWindow: .seconds(120))
        let pipeline = CommitPipeline(store: store, logger: Logger(label: "test"), timing: timing)
        let first = CommitFlushTests.Receiver()
        // The first batch after a pause is written at once; it makes the pipeline busy.
        pipeline.submit(CommitFlushTests.writes(CommitFlushTests.session(1), 1), receipt: (first, 1))
        try await store.waitUntilHolding(1)
        try await store.releaseOldest()
        // Another session's two writes (a snapshot and a record) wait for company.
        let second = CommitFlushTests.Receiver()
        pipeline.submit(CommitFlushTests.writes(CommitFlushTests.session(2), 1), receipt: (second, 1))
        try await eventually("the small batch never lingered", every: .milliseconds(1)) { pipeline.lingeredBatches == 1 }
        #expect(store.heldCount == 0)
        // Two more writes fill the batch to its target of four.
        let third = CommitFlushTests.Receiver()
        pipeline.submit(CommitFlushTests.writes(CommitFlushTests.session(3), 1), receipt: (third, 1))
        try await eventually("the filled batch waited for the linger to run out", timeout: .seconds(5), every: .milliseconds(1)) {
            store.heldCount == 1
        }
        try await store.releaseOldest()
        await pipeline.flush()
        #expect(try await CommitFlushTests.storedLsns(store.stored, CommitFlushTests.session(2)) == [1])
        #expect(try await CommitFlushTests.storedLsns(store.stored, CommitFlushTests.session(3)) == [1])
        #expect(pipeline.lingeredBatches == 1)
    }
}
