import JamProtocol
import NIOCore

/// A session told once its writes up to `lsn` are durable.
typealias CommitReceipt = (receiver: any CommitReceiver, lsn: Int64)

/// What `CommitPipeline` has queued, and what its thread does next: a value, so every
/// decision is made in one step under the pipeline's lock and tested without threads.
///
/// `Waiter` is what a `flush` caller leaves behind (a continuation in the server).
struct CommitQueue<Waiter> {
    /// What the store's thread does next.
    enum Step {
        /// Wait `Timing.linger` for company, then look again; `lingerEnded(generation)` says
        /// whether the wait is still on when its timer runs out.
        case linger(generation: Int)
        /// Nothing is queued: the queue is idle, and these `flush` callers may go on.
        case idle(waiters: [Waiter])
        /// Write this batch.
        case commit(writes: [StoreWrite], receipts: [CommitReceipt])
    }

    /// Writes submitted and not yet taken, in order.
    private(set) var writes: [StoreWrite] = []
    /// Who is told once `writes` are stored, in order.
    private(set) var receipts: [CommitReceipt] = []
    /// A drain is scheduled or a batch is being written.
    private(set) var busy = false
    /// Callers of `flush` waiting for `busy` to end. Kept with `busy`, so a caller is let go
    /// only in the step that finds nothing queued, never by a drain that went idle just before
    /// the caller's own submit.
    private var flushWaiters: [Waiter] = []
    /// Attempts in a row that the store refused.
    private var failures = 0
    /// When the last batch was written.
    private var lastCommit = NIODeadline.distantPast
    /// The batch now forming has waited for company already.
    private var lingered = false
    /// The forming batch waits for company now: until its timer runs out or a submit fills it.
    private var lingering = false
    /// Counts the waits, so a timer whose wait a submit ended cannot end a later one.
    private var lingerGeneration = 0
    /// The session whose single turn was the whole last batch, if it was.
    private var lastLoneWriter: ObjectIdentifier?
    /// When the batch being written was taken, and who waits on it; nil between batches.
    private var inFlight: (since: NIODeadline, writes: Int, receipts: [CommitReceipt])?
    /// The batch being written was found hung and its sessions told so.
    private var hangReported = false
    /// The batch being written was given up on (the server stops): whatever its end, nothing
    /// more is written.
    private(set) var abandoned = false

    /// The forming batch is one turn of the same session as the last batch's single turn.
    private var alone: Bool {
        guard let last = lastLoneWriter, receipts.count == 1 else { return false }
        return ObjectIdentifier(receipts[0].receiver) == last
    }

    /// Queues `writes`; true when the thread must be woken to drain: it is idle, or the batch
    /// waiting for company has grown to `batchTarget`. A batch that big never waits, and
    /// holding it for the rest of the linger only kept clients that wait on their acks waiting
    /// (docs/PERFORMANCE.md, "a batch that fills ends its linger").
    /// Without a `batchTarget` (tests of other steps) a waiting batch waits for its timer.
    mutating func submit(_ writes: [StoreWrite], receipt: CommitReceipt?, batchTarget: Int = .max) -> Bool {
        self.writes += writes
        if let receipt { receipts.append(receipt) }
        if lingering, self.writes.count >= batchTarget {
            lingering = false
            return true
        }
        guard !busy else { return false }
        busy = true
        return true
    }

    /// The timer of wait `generation` ran out: true when the batch still waits on it, so the
    /// thread drains now; false when a submit ended that wait early (the thread drains already,
    /// and a later wait has a timer of its own).
    mutating func lingerEnded(_ generation: Int) -> Bool {
        guard lingering, generation == lingerGeneration else { return false }
        lingering = false
        return true
    }

    /// A `flush` caller: true when nothing is queued or being written, so it may go on at once;
    /// otherwise `waiter` is kept until the queue goes idle.
    mutating func flush(_ waiter: Waiter) -> Bool {
        guard busy, !abandoned else { return true }
        flushWaiters.append(waiter)
        return false
    }

    /// Takes the next step at `now`: lingers, goes idle, or takes the batch.
    mutating func next(now: NIODeadline, timing: CommitPipeline.Timing) -> Step {
        if timing.shouldLinger(
            pending: writes.count, alreadyLingered: lingered, sinceLastCommit: now - lastCommit, alone: alone)
        {
            lingered = true
            lingering = true
            lingerGeneration += 1
            return .linger(generation: lingerGeneration)
        }
        lingered = false
        // Receipts without writes (none are submitted today) are committed as an empty batch,
        // so they are still told.
        guard !writes.isEmpty || !receipts.isEmpty else {
            busy = false
            defer { flushWaiters.removeAll() }
            return .idle(waiters: flushWaiters)
        }
        let taken = (writes, receipts)
        lastLoneWriter = taken.1.count == 1 ? ObjectIdentifier(taken.1[0].receiver) : nil
        writes.removeAll(keepingCapacity: true)
        receipts.removeAll(keepingCapacity: true)
        inFlight = (now, taken.0.count, taken.1)
        return .commit(writes: taken.0, receipts: taken.1)
    }

    /// The batch taken last is stored, at `now`. Returns how long it was written for when it
    /// had been reported hung (so the pipeline can say the store answers again), else nil.
    @discardableResult
    mutating func committed(at now: NIODeadline) -> TimeAmount? {
        failures = 0
        lastCommit = now
        defer { clearFlight() }
        guard hangReported, let flight = inFlight else { return nil }
        return now - flight.since
    }

    /// The batch taken last failed: it goes back in front of what came since, in order.
    /// Returns how many attempts in a row have failed, and every session waiting on a write
    /// not stored (each once, with its last record queued), which the pipeline tells the store
    /// refused.
    mutating func failed(_ batch: [StoreWrite], receipts batchReceipts: [CommitReceipt]) -> (attempts: Int, waiting: [CommitReceipt]) {
        writes = batch + writes
        receipts = batchReceipts + receipts
        failures += 1
        clearFlight()
        return (failures, Self.distinct(receipts))
    }

    /// At `now`, whether the batch being written has taken longer than `limit`: the first time,
    /// every session waiting on a write not stored (each once, with its last record queued) and
    /// how long the batch has been written for; otherwise nil.
    mutating func hung(now: NIODeadline, limit: TimeAmount) -> (waiting: [CommitReceipt], for: TimeAmount)? {
        guard let flight = inFlight, !hangReported, now - flight.since >= limit else { return nil }
        hangReported = true
        return (Self.distinct(flight.receipts + receipts), now - flight.since)
    }

    /// At `now`, whether the batch being written has taken longer than `limit` (reported or not).
    func isHung(now: NIODeadline, limit: TimeAmount) -> Bool {
        guard let flight = inFlight else { return false }
        return now - flight.since >= limit
    }

    /// The batch in flight is done with, stored or not.
    private mutating func clearFlight() {
        inFlight = nil
        hangReported = false
    }

    /// Each receiver of `receipts` once, in order of first appearance, with its highest record.
    private static func distinct(_ receipts: [CommitReceipt]) -> [CommitReceipt] {
        var position: [ObjectIdentifier: Int] = [:]
        var result: [CommitReceipt] = []
        for receipt in receipts {
            let key = ObjectIdentifier(receipt.receiver)
            if let index = position[key] {
                result[index].lsn = max(result[index].lsn, receipt.lsn)
            } else {
                position[key] = result.count
                result.append(receipt)
            }
        }
        return result
    }

    /// Another writer appended to `fenced` sessions first: their writes, in `batch` and queued
    /// since, are dropped, and the rest of the batch goes back in front. Returns the receiver
    /// of each dropped receipt (once per receipt, so a receiver may repeat).
    mutating func dropFenced(_ fenced: Set<SessionID>, batch: [StoreWrite], receipts batchReceipts: [CommitReceipt]) -> [any CommitReceiver] {
        clearFlight()
        let keep: (StoreWrite) -> Bool = { !fenced.contains($0.sessionID) }
        writes = batch.filter(keep) + writes.filter(keep)
        let all = batchReceipts + receipts
        receipts = all.filter { $0.receiver.sessionID.map { !fenced.contains($0) } ?? true }
        return all.filter { $0.receiver.sessionID.map { fenced.contains($0) } ?? false }.map(\.receiver)
    }

    /// Drops everything queued (the server is stopping and the store keeps refusing, or hangs)
    /// and lets every `flush` caller go. Returns how many writes were dropped, the batch being
    /// written included, and the waiters.
    ///
    /// A batch still being written (a hung one) is abandoned: the queue stays busy, so nothing
    /// is written beside it, and its end (`endAbandoned`) writes nothing more.
    mutating func giveUp() -> (dropped: Int, waiters: [Waiter]) {
        let writing = inFlight != nil
        let dropped = writes.count + (inFlight?.writes ?? 0)
        abandoned = writing
        // Never waiting here today (a give-up follows a commit), but a timer still to run
        // must find nothing to wait for.
        lingering = false
        clearFlight()
        defer {
            writes.removeAll()
            receipts.removeAll()
            flushWaiters.removeAll()
            failures = 0
            busy = writing
        }
        return (dropped, flushWaiters)
    }

    /// The batch that just ended, stored or not: when it had been given up on, drops whatever
    /// was submitted since and returns the `flush` callers to let go (the server is stopping,
    /// and none of it was acknowledged); nil when the batch was not abandoned.
    mutating func endAbandoned() -> [Waiter]? {
        guard abandoned else { return nil }
        abandoned = false
        busy = false
        writes.removeAll()
        receipts.removeAll()
        defer { flushWaiters.removeAll() }
        return flushWaiters
    }
}
