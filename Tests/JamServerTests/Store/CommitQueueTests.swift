import JamProtocol
import NIOCore
import NIOPosix
import Testing

@testable import JamServer

/// The commit pipeline's queue as a value: every decision the store's thread makes, in order,
/// without threads. Waiters are plain numbers here.
@Suite struct CommitQueueTests {
    final class Receiver: CommitReceiver {
        let eventLoop: any EventLoop = MultiThreadedEventLoopGroup.singleton.next()
        let sessionID: SessionID?
        init(_ id: SessionID?) { sessionID = id }
        func stored(through lsn: Int64) {}
    }

    static let a: SessionID = "00000000-0000-0000-0007-00000000000a"
    static let b: SessionID = "00000000-0000-0000-0007-00000000000b"
    /// Writes go at once: the linger has its own tests (`CommitTimingTests`).
    static let eager = CommitPipeline.Timing(linger: .zero)

    static func write(_ id: SessionID, _ lsn: Int64) -> StoreWrite {
        .record(id, LogRecord(lsn: lsn, firstSeq: lsn - 1, lastSeq: lsn, wakeAt: nil, inputs: Array("[]".utf8)))
    }

    static func lsns(_ step: CommitQueue<Int>.Step) -> [Int64]? {
        guard case .commit(let writes, _) = step else { return nil }
        return writes.map { write in
            guard case .record(_, let record) = write else { return -1 }
            return record.lsn
        }
    }

    static func waiters(_ step: CommitQueue<Int>.Step) -> [Int]? {
        guard case .idle(let waiters) = step else { return nil }
        return waiters
    }

    /// Runs the queue's next step now, without linger.
    static func step(_ queue: inout CommitQueue<Int>) -> CommitQueue<Int>.Step {
        queue.next(now: .now(), timing: eager)
    }

    @Test func aFlushOnAnIdleQueueGoesOnAtOnceAndIsNotKept() {
        var queue = CommitQueue<Int>()
        let goesOn = queue.flush(1)
        #expect(goesOn)
        _ = queue.submit([Self.write(Self.a, 1)], receipt: nil)
        _ = Self.step(&queue)
        let idle = Self.step(&queue)
        #expect(Self.waiters(idle) == [])
    }

    @Test func aFlushWhileBusyIsLetGoOnlyByTheStepThatFindsNothingQueued() {
        var queue = CommitQueue<Int>()
        let receiver = Receiver(Self.a)
        let firstWakes = queue.submit([Self.write(Self.a, 1)], receipt: (receiver, 1))
        #expect(firstWakes, "the first submit wakes the thread")
        let goesOn = queue.flush(1)
        #expect(!goesOn)
        let first = Self.step(&queue)
        #expect(Self.lsns(first) == [1])
        let secondWakes = queue.submit([Self.write(Self.a, 2)], receipt: (receiver, 2))
        #expect(!secondWakes, "submitted while the first batch is written: the thread is awake already")
        let second = Self.step(&queue)
        #expect(Self.lsns(second) == [2])
        #expect(queue.busy)
        let idle = Self.step(&queue)
        #expect(Self.waiters(idle) == [1])
        #expect(!queue.busy)
    }

    /// The order that once let a flush return early: the thread finds the queue empty, then
    /// another thread submits and flushes before the thread has let the earlier waiters go.
    @Test func aFlushRightAfterTheQueueWentIdleWaitsForTheWriteSubmittedBeforeIt() {
        var queue = CommitQueue<Int>()
        _ = queue.submit([Self.write(Self.a, 1)], receipt: nil)
        _ = queue.flush(1)
        let first = Self.step(&queue)
        #expect(Self.lsns(first) == [1])
        let idle = Self.step(&queue)
        let wakes = queue.submit([Self.write(Self.a, 2)], receipt: nil)
        #expect(wakes, "idle again: the next submit wakes the thread")
        let goesOn = queue.flush(2)
        #expect(!goesOn, "write 2 is not stored yet")
        // Going idle handed back only the waiter from before it.
        #expect(Self.waiters(idle) == [1])
        let second = Self.step(&queue)
        #expect(Self.lsns(second) == [2])
        let idleAgain = Self.step(&queue)
        #expect(Self.waiters(idleAgain) == [2])
    }

    @Test func aFailedBatchGoesBackInFrontOfWhatCameSinceAndKeepsItsWaiters() {
        var queue = CommitQueue<Int>()
        let receiver = Receiver(Self.a)
        _ = queue.submit([Self.write(Self.a, 1)], receipt: (receiver, 1))
        _ = queue.flush(1)
        guard case .commit(let batch, let receipts) = Self.step(&queue) else {
            Issue.record("no batch taken")
            return
        }
        _ = queue.submit([Self.write(Self.a, 2)], receipt: (receiver, 2))
        let failures = queue.failed(batch, receipts: receipts)
        #expect(failures.attempts == 1)
        #expect(failures.waiting.map { ObjectIdentifier($0.receiver) } == [ObjectIdentifier(receiver)], "told once, though it waits on two writes")
        #expect(failures.waiting.map(\.lsn) == [2], "with its last record")
        #expect(queue.receipts.map(\.lsn) == [1, 2])
        let retry = Self.step(&queue)
        #expect(Self.lsns(retry) == [1, 2])
        queue.committed(at: .now())
        let idle = Self.step(&queue)
        #expect(Self.waiters(idle) == [1])
    }

    @Test func aFencedSessionsWritesAreDroppedAndTheOthersKeptInOrder() {
        var queue = CommitQueue<Int>()
        let (onA, onB, noSession) = (Receiver(Self.a), Receiver(Self.b), Receiver(nil))
        _ = queue.submit([Self.write(Self.a, 1)], receipt: (onA, 1))
        _ = queue.submit([Self.write(Self.b, 1)], receipt: (onB, 1))
        guard case .commit(let batch, let receipts) = Self.step(&queue) else {
            Issue.record("no batch taken")
            return
        }
        _ = queue.submit([Self.write(Self.b, 2)], receipt: (onB, 2))
        _ = queue.submit([Self.write(Self.a, 2)], receipt: (onA, 2))
        _ = queue.submit([Self.write(Self.b, 3)], receipt: (noSession, 9))
        let dropped = queue.dropFenced([Self.a], batch: batch, receipts: receipts)
        #expect(dropped.map { ObjectIdentifier($0) } == [ObjectIdentifier(onA), ObjectIdentifier(onA)])
        #expect(queue.writes.map(\.sessionID) == [Self.b, Self.b, Self.b])
        let kept = queue.writes.map { write -> Int64 in
            guard case .record(_, let record) = write else { return -1 }
            return record.lsn
        }
        #expect(kept == [1, 2, 3], "the batch's own writes first, then what came since, in order")
        // A receiver that is no session is never fenced.
        #expect(queue.receipts.map(\.lsn) == [1, 2, 9])
    }

    @Test func aStoredBatchStartsTheFailureCountAgain() {
        var queue = CommitQueue<Int>()
        _ = queue.submit([Self.write(Self.a, 1)], receipt: nil)
        guard case .commit(let batch, let receipts) = Self.step(&queue) else {
            Issue.record("no batch taken")
            return
        }
        let first = queue.failed(batch, receipts: receipts).attempts
        _ = Self.step(&queue)
        let second = queue.failed(batch, receipts: receipts).attempts
        #expect([first, second] == [1, 2])
        _ = Self.step(&queue)
        queue.committed(at: .now())
        let afterSuccess = queue.failed(batch, receipts: receipts).attempts
        #expect(afterSuccess == 1)
    }

    @Test func givingUpDropsEverythingQueuedAndLetsEveryWaiterGo() {
        var queue = CommitQueue<Int>()
        let receiver = Receiver(Self.a)
        _ = queue.submit([Self.write(Self.a, 1), Self.write(Self.b, 1)], receipt: (receiver, 1))
        guard case .commit(let batch, let receipts) = Self.step(&queue) else {
            Issue.record("no batch taken")
            return
        }
        _ = queue.failed(batch, receipts: receipts)
        _ = queue.flush(1)
        _ = queue.flush(2)
        let (dropped, waiters) = queue.giveUp()
        #expect(dropped == 2)
        #expect(waiters == [1, 2])
        #expect(!queue.busy)
        #expect(queue.writes.isEmpty && queue.receipts.isEmpty)
        let goesOn = queue.flush(3)
        #expect(goesOn)
        // The count of refused attempts starts again too.
        _ = queue.submit([Self.write(Self.a, 2)], receipt: nil)
        guard case .commit(let next, let nextReceipts) = Self.step(&queue) else {
            Issue.record("no batch taken")
            return
        }
        let failures = queue.failed(next, receipts: nextReceipts).attempts
        #expect(failures == 1)
    }

    @Test func aBatchWrittenLongerThanTheLimitNamesEverySessionWaitingOnceUntilItEnds() {
        var queue = CommitQueue<Int>()
        let (onA, onB, later) = (Receiver(Self.a), Receiver(Self.b), Receiver(Self.b))
        let start = NIODeadline.now()
        _ = queue.submit([Self.write(Self.a, 1)], receipt: (onA, 1))
        _ = queue.submit([Self.write(Self.b, 1)], receipt: (onB, 1))
        _ = queue.submit([Self.write(Self.a, 2)], receipt: (onA, 2))
        guard case .commit = queue.next(now: start, timing: Self.eager) else {
            Issue.record("no batch taken")
            return
        }
        _ = queue.submit([Self.write(Self.b, 2)], receipt: (later, 2))
        #expect(queue.hung(now: start + .milliseconds(999), limit: .seconds(1)) == nil, "within the limit")
        let report = queue.hung(now: start + .seconds(1), limit: .seconds(1))
        #expect(report?.waiting.map { ObjectIdentifier($0.receiver) } == [onA, onB, later].map { ObjectIdentifier($0) }, "the batch's and what queued behind it, each once")
        #expect(report?.waiting.map(\.lsn) == [2, 1, 2], "each with its last record")
        #expect(report?.for == .seconds(1))
        #expect(queue.hung(now: start + .seconds(9), limit: .seconds(1)) == nil, "told once per hang")
        #expect(queue.committed(at: start + .seconds(3)) == .seconds(3), "how long the hung batch took")
        #expect(queue.hung(now: start + .seconds(20), limit: .seconds(1)) == nil, "nothing in flight between batches")
    }

    @Test func givingUpOnAHungBatchDropsItWithWhatQueuedAndWritesNothingBesideIt() {
        var queue = CommitQueue<Int>()
        let start = NIODeadline.now()
        _ = queue.submit([Self.write(Self.a, 1), Self.write(Self.a, 2)], receipt: (Receiver(Self.a), 2))
        guard case .commit = queue.next(now: start, timing: Self.eager) else {
            Issue.record("no batch taken")
            return
        }
        _ = queue.submit([Self.write(Self.b, 1)], receipt: (Receiver(Self.b), 1))
        _ = queue.flush(1)
        #expect(!queue.isHung(now: start + .milliseconds(999), limit: .seconds(1)))
        #expect(queue.isHung(now: start + .seconds(1), limit: .seconds(1)))
        _ = queue.hung(now: start + .seconds(1), limit: .seconds(1))
        #expect(queue.isHung(now: start + .seconds(2), limit: .seconds(1)), "still hung once reported")

        let (dropped, waiters) = queue.giveUp()
        #expect(dropped == 3, "the hung batch's two writes and the one queued behind it")
        #expect(waiters == [1])
        #expect(!queue.isHung(now: start + .seconds(9), limit: .seconds(1)))
        // The hung batch may still end: until it does, a new write wakes nobody, and a flush
        // does not wait for it.
        #expect(queue.busy && queue.abandoned)
        let wakes = queue.submit([Self.write(Self.b, 2)], receipt: nil)
        #expect(!wakes, "no second batch beside the hung one")
        let waits = !queue.flush(2)
        #expect(!waits)
        // Its end, stored or not, writes nothing more.
        #expect(queue.endAbandoned() == [])
        #expect(!queue.busy && !queue.abandoned)
        #expect(queue.writes.isEmpty && queue.receipts.isEmpty)
        #expect(queue.endAbandoned() == nil, "a batch not given up on ends as usual")
    }

    @Test func aBatchThatEndsInTimeIsNeverReportedHung() {
        var queue = CommitQueue<Int>()
        let start = NIODeadline.now()
        _ = queue.submit([Self.write(Self.a, 1)], receipt: (Receiver(Self.a), 1))
        guard case .commit(let batch, let receipts) = queue.next(now: start, timing: Self.eager) else {
            Issue.record("no batch taken")
            return
        }
        #expect(queue.committed(at: start + .milliseconds(1)) == nil)
        #expect(queue.hung(now: start + .seconds(60), limit: .seconds(1)) == nil)
        // A refused batch is not in flight while it waits to be tried again.
        _ = queue.submit(batch, receipt: receipts.first)
        _ = queue.next(now: start + .seconds(61), timing: Self.eager)
        _ = queue.failed(batch, receipts: receipts)
        #expect(queue.hung(now: start + .seconds(120), limit: .seconds(1)) == nil)
    }

    /// Lingers 5 ms while commits are less than a minute apart.
    static let lingering = CommitPipeline.Timing(linger: .milliseconds(5), batchTarget: 32, busyWindow: .seconds(60))

    /// A queue whose last batch, stored at `now`, was `receiver`'s single turn.
    static func afterALoneTurn(of receiver: Receiver, at now: NIODeadline) -> CommitQueue<Int> {
        var queue = CommitQueue<Int>()
        _ = queue.submit([write(receiver.sessionID!, 1)], receipt: (receiver, 1))
        _ = queue.next(now: now, timing: lingering)
        queue.committed(at: now)
        return queue
    }

    @Test func aLoneClientsNextTurnIsNotHeldBackButAnotherSessionsIs() {
        let timing = Self.lingering
        let now = NIODeadline.now()
        let (onA, onB) = (Receiver(Self.a), Receiver(Self.b))
        var queue = Self.afterALoneTurn(of: onA, at: now)
        // The same session's single turn again: nobody else is writing, so no wait.
        _ = queue.submit([Self.write(Self.a, 2)], receipt: (onA, 2))
        let own = queue.next(now: now, timing: timing)
        #expect(Self.lsns(own) == [2])
        queue.committed(at: now)
        _ = queue.submit([Self.write(Self.b, 1)], receipt: (onB, 1))
        guard case .linger = queue.next(now: now, timing: timing) else {
            Issue.record("another session's turn did not wait for company")
            return
        }
    }

    @Test func aLingeringBatchKeepsItsWaitersUntilItIsWritten() {
        let timing = Self.lingering
        let now = NIODeadline.now()
        // Both kept alive: a freed receiver's identity could be reused by the next one.
        let (onA, onB) = (Receiver(Self.a), Receiver(Self.b))
        var queue = Self.afterALoneTurn(of: onA, at: now)
        _ = queue.next(now: now, timing: timing)
        // Under load (the last commit was just now) a small batch waits once for company.
        _ = queue.submit([Self.write(Self.b, 2)], receipt: (onB, 2))
        let goesOn = queue.flush(1)
        #expect(!goesOn)
        guard case .linger = queue.next(now: now, timing: timing) else {
            Issue.record("the batch did not wait")
            return
        }
        let batch = queue.next(now: now, timing: timing)
        #expect(Self.lsns(batch) == [2])
        let idle = queue.next(now: now, timing: timing)
        #expect(Self.waiters(idle) == [1])
    }

    /// Submits record `lsn` of session `b` for `receiver` and takes the next step at `now`: the
    /// wait's generation when the batch lingers, else nil (recorded as an issue).
    static func lingers(_ queue: inout CommitQueue<Int>, _ receiver: Receiver, _ lsn: Int64, at now: NIODeadline, timing: CommitPipeline.Timing) -> Int? {
        _ = queue.submit([write(b, lsn)], receipt: (receiver, lsn))
        guard case .linger(let generation) = queue.next(now: now, timing: timing) else {
            Issue.record("the small batch with record \(lsn) did not wait")
            return nil
        }
        return generation
    }

    @Test func aLingeringBatchThatGrowsToItsTargetIsWrittenAtOnce() {
        let timing = Self.lingering
        let now = NIODeadline.now()
        let onA = Receiver(Self.a)
        var queue = Self.afterALoneTurn(of: onA, at: now)
        let others = (1...timing.batchTarget).map { _ in Receiver(Self.b) }
        guard let generation = Self.lingers(&queue, others[0], 1, at: now, timing: timing) else { return }
        // One short of the target the batch keeps waiting; the write that fills it wakes the thread.
        for (offset, receiver) in others.dropFirst().enumerated() {
            let lsn = Int64(offset + 2)
            let wake = queue.submit([Self.write(Self.b, lsn)], receipt: (receiver, lsn), batchTarget: timing.batchTarget)
            #expect(wake == (lsn == Int64(timing.batchTarget)), "write \(lsn) of \(timing.batchTarget)")
        }
        // The timer that runs out later finds the batch taken and drains nothing more.
        let batch = queue.next(now: now, timing: timing)
        #expect(Self.lsns(batch) == Array(1...Int64(timing.batchTarget)))
        let timerDrains = queue.lingerEnded(generation)
        #expect(!timerDrains)
    }

    @Test func aLingerThatRunsOutDrainsOnce() {
        let timing = Self.lingering
        let now = NIODeadline.now()
        let (onA, onB) = (Receiver(Self.a), Receiver(Self.b))
        var queue = Self.afterALoneTurn(of: onA, at: now)
        guard let generation = Self.lingers(&queue, onB, 1, at: now, timing: timing) else { return }
        // Below the target a submit leaves the batch waiting for its timer.
        let wake = queue.submit([Self.write(Self.b, 2)], receipt: (onB, 2), batchTarget: timing.batchTarget)
        #expect(!wake)
        let (first, second) = (queue.lingerEnded(generation), queue.lingerEnded(generation))
        #expect(first && !second)
        let batch = queue.next(now: now, timing: timing)
        #expect(Self.lsns(batch) == [1, 2])
    }

    @Test func aTimerWhoseWaitWasEndedEarlyDoesNotEndTheNextWait() {
        let timing = CommitPipeline.Timing(linger: .milliseconds(5), batchTarget: 2, busyWindow: .seconds(60))
        let now = NIODeadline.now()
        let (onA, onB) = (Receiver(Self.a), Receiver(Self.b))
        var queue = Self.afterALoneTurn(of: onA, at: now)
        guard let first = Self.lingers(&queue, onB, 1, at: now, timing: timing) else { return }
        // The second write fills the batch: it goes at once, before the first timer runs out.
        let wake = queue.submit([Self.write(Self.b, 2)], receipt: (onB, 2), batchTarget: timing.batchTarget)
        #expect(wake)
        #expect(Self.lsns(queue.next(now: now, timing: timing)) == [1, 2])
        queue.committed(at: now)
        guard let second = Self.lingers(&queue, onB, 3, at: now, timing: timing) else { return }
        // The first timer runs out now: the second wait goes on until its own timer.
        let (staleEnds, ownEnds) = (queue.lingerEnded(first), queue.lingerEnded(second))
        #expect(!staleEnds && ownEnds)
    }
}
