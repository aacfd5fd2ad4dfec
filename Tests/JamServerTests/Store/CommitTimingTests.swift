import JamProtocol
import Logging
import NIOCore
import NIOPosix
import Synchronization
import Testing

@testable import JamServer

/// When a group commit waits for company, and when it must not.
@Suite struct CommitTimingTests {
    static let timing = CommitPipeline.Timing(linger: .microseconds(600), batchTarget: 32, busyWindow: .milliseconds(2))

    @Test func aSmallBatchUnderConcurrentLoadWaitsForCompanyOnce() {
        #expect(Self.timing.shouldLinger(pending: 3, alreadyLingered: false, sinceLastCommit: .microseconds(500), alone: false))
        #expect(!Self.timing.shouldLinger(pending: 3, alreadyLingered: true, sinceLastCommit: .microseconds(500), alone: false))
    }

    @Test func aLoneClientWaitingForItsOwnCommitIsNeverHeldBack() {
        #expect(!Self.timing.shouldLinger(pending: 1, alreadyLingered: false, sinceLastCommit: .microseconds(300), alone: true))
    }

    @Test func aQuietServerWritesAtOnce() {
        #expect(!Self.timing.shouldLinger(pending: 1, alreadyLingered: false, sinceLastCommit: .milliseconds(50), alone: false))
    }

    @Test func aFullBatchAnEmptyOneAndAZeroLingerNeverWait() {
        #expect(!Self.timing.shouldLinger(pending: 32, alreadyLingered: false, sinceLastCommit: .microseconds(500), alone: false))
        #expect(!Self.timing.shouldLinger(pending: 0, alreadyLingered: false, sinceLastCommit: .microseconds(500), alone: false))
        let eager = CommitPipeline.Timing(linger: .zero)
        #expect(!eager.shouldLinger(pending: 1, alreadyLingered: false, sinceLastCommit: .microseconds(500), alone: false))
    }

    /// A receiver that only counts what it is told.
    final class Receiver: CommitReceiver {
        let eventLoop: any EventLoop
        let storedLsn = Mutex<Int64>(0)
        init(eventLoop: any EventLoop) { self.eventLoop = eventLoop }
        func stored(through lsn: Int64) { storedLsn.withLock { $0 = max($0, lsn) } }
    }

    @Test func aClientCommittingAgainAndAgainAloneIsNotSlowedByTheLinger() async throws {
        // Every commit follows the last well inside the busy window.
        let timing = CommitPipeline.Timing(linger: .milliseconds(50), batchTarget: 32, busyWindow: .seconds(60))
        let pipeline = CommitPipeline(store: InMemorySessionStore(), logger: Logger(label: "test"), timing: timing)
        let receiver = Receiver(eventLoop: MultiThreadedEventLoopGroup.singleton.next())
        let id: SessionID = "00000000-0000-0000-0004-000000000001"
        for lsn in Int64(1)...3 {
            let record = LogRecord(lsn: lsn, firstSeq: lsn - 1, lastSeq: lsn, wakeAt: nil, inputs: Array("[]".utf8))
            pipeline.submit([.record(id, record)], receipt: (receiver, lsn))
            await pipeline.flush()
        }
        #expect(pipeline.lingeredBatches == 0)
        // Queued on the receiver's loop behind the pipeline's news of the last commit.
        try await receiver.eventLoop.submit {}.get()
        #expect(receiver.storedLsn.withLock { $0 } == 3)
    }

    @Test func turnsOfDifferentSessionsInQuickSuccessionStillWaitForCompany() async throws {
        let timing = CommitPipeline.Timing(linger: .milliseconds(50), batchTarget: 32, busyWindow: .seconds(60))
        let pipeline = CommitPipeline(store: InMemorySessionStore(), logger: Logger(label: "test"), timing: timing)
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let receivers = [Receiver(eventLoop: loop), Receiver(eventLoop: loop)]
        let ids: [SessionID] = ["00000000-0000-0000-0004-000000000001", "00000000-0000-0000-0004-000000000002"]
        for turn in 0..<3 {
            let record = LogRecord(lsn: Int64(turn / 2 + 1), firstSeq: 0, lastSeq: 1, wakeAt: nil, inputs: Array("[]".utf8))
            pipeline.submit([.record(ids[turn % 2], record)], receipt: (receivers[turn % 2], record.lsn))
            await pipeline.flush()
        }
        // The second and third batches each waited; the first followed no commit.
        #expect(pipeline.lingeredBatches == 2)
    }
}
