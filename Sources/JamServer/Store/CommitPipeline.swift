import Foundation
import JamProtocol
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization

/// A session whose records the pipeline stores, told which of them are durable.
protocol CommitReceiver: AnyObject, Sendable {
    /// The loop `stored(through:)` runs on.
    var eventLoop: any EventLoop { get }
    /// The store holds every record up to `lsn`; called on `eventLoop`.
    func stored(through lsn: Int64)
    /// The session whose records these are, when the receiver is one.
    var sessionID: SessionID? { get }
    /// Another writer appended to the session first: none of its queued writes will be
    /// stored; called on `eventLoop`.
    func fenced()
    /// The store refused the session's queued writes up to record `lsn`, or has not answered
    /// for `Timing.hangLimit`: they stay queued and are tried again, but nobody should wait on
    /// them with no end; called on `eventLoop`.
    func storeRefused(through lsn: Int64)
}

extension CommitReceiver {
    var sessionID: SessionID? { nil }
    func fenced() {}
    func storeRefused(through lsn: Int64) {}
}

/// Group commit on a thread of its own.
///
/// Sessions submit writes as they happen (a lock and, for the first write of a batch, one
/// wake-up of the store's thread). The thread takes everything submitted so far, writes it
/// as one transaction, tells each session's event loop which records are durable (one hop
/// per loop, not per session), and takes the next batch at once: whatever arrived during a
/// slow fsync forms the next batch, so one slow flush never stops batches from forming.
///
/// Under load a small batch lingers (`Timing.linger`) before it is written, so more writes
/// share its fsync (which costs the machine ~0.1 ms of CPU each), until it holds
/// `Timing.batchTarget` writes; a quiet server writes at once, as the first write after a
/// pause never lingers, and so does a lone busy client: a
/// batch holding one session's turn right after a batch of that same single turn does not
/// wait, nobody else is writing (PostgreSQL's `commit_siblings`, in effect).
public final class CommitPipeline: Service, Sendable {
    /// When a batch waits for company.
    public struct Timing: Sendable {
        /// How long a small batch may wait for more writes while commits follow each other.
        public var linger: TimeAmount
        /// A batch this big never waits, and one that grows to it while waiting is written at once.
        public var batchTarget: Int
        /// Commits less than this apart count as "under load".
        public var busyWindow: TimeAmount
        /// A commit the store has not finished after this long counts as a failure to those
        /// waiting on it, and new commands are refused until it finishes (a database that
        /// hangs rather than refuses). Checked every quarter of it.
        public var hangLimit: TimeAmount

        /// Creates the timing; `linger` 0 writes every batch at once. The 2 ms default halves
        /// the commits of a busy server for ~1.4 ms more latency under load (docs/PERFORMANCE.md,
        /// "A 2 ms commit linger"); a quiet server never waits.
        public init(
            linger: TimeAmount = .milliseconds(2), batchTarget: Int = 32, busyWindow: TimeAmount = .milliseconds(2),
            hangLimit: TimeAmount = .seconds(5)
        ) {
            self.linger = linger
            self.batchTarget = batchTarget
            self.busyWindow = busyWindow
            self.hangLimit = hangLimit
        }

        /// Whether a forming batch of `pending` writes waits for company: only while commits
        /// follow each other, once per batch, when the batch is small, and not when `alone`
        /// (the batch is one turn of the session whose single turn was the last batch): a lone
        /// client waiting for its own commit would only be slowed down.
        func shouldLinger(pending: Int, alreadyLingered: Bool, sinceLastCommit: TimeAmount, alone: Bool) -> Bool {
            linger > .zero && pending > 0 && pending < batchTarget && !alreadyLingered
                && sinceLastCommit < busyWindow && !alone
        }
    }

    private let store: any SessionStore
    private let logger: Logger
    private let timing: Timing
    private let group: MultiThreadedEventLoopGroup
    /// The store's thread.
    let loop: any EventLoop
    private let queue = Mutex(CommitQueue<CheckedContinuation<Void, Never>>())
    private let lingers = Atomic<Int>(0)
    /// Set once the server stops: a batch the store keeps refusing is then given up on.
    private let stopping = Atomic<Bool>(false)
    private let stalled = Atomic<Bool>(false)
    /// The batch being written has taken longer than `Timing.hangLimit`. Set and cleared, as
    /// `stalled` is, only while holding `queue`'s lock, so a write submitted after a report
    /// always finds it set, and a commit that ends after a report always clears it.
    private let hung = Atomic<Bool>(false)
    /// Looks for a hung batch every quarter of `Timing.hangLimit`, until the pipeline stops.
    private let hangCheck = Mutex<RepeatedTask?>(nil)
    /// The last commit failed, or the one being written hangs: the store is unreachable or
    /// full, so new commands are refused with a clear error until a commit succeeds again.
    var isStalled: Bool { stalled.load(ordering: .relaxed) || hung.load(ordering: .relaxed) }
    /// Attempts at a batch, once stopping, before it is given up on.
    static let attemptsWhenStopping = 5
    /// How many batches have waited for company so far.
    var lingeredBatches: Int { lingers.load(ordering: .relaxed) }

    /// Creates the pipeline and its thread around `store`.
    public init(store: any SessionStore, logger: Logger, timing: Timing = Timing()) {
        self.store = store
        self.logger = logger
        self.timing = timing
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        loop = group.next()
        // Not on the store's thread: SQLite's commit runs there, and a disk that hangs would
        // hold the check too.
        let every = TimeAmount.nanoseconds(max(timing.hangLimit.nanoseconds / 4, 1_000_000))
        let check = MultiThreadedEventLoopGroup.singleton.next().scheduleRepeatedTask(initialDelay: every, delay: every) { [weak self] task in
            guard let self else { return task.cancel() }
            self.checkForHang()
        }
        hangCheck.withLock { $0 = check }
    }

    /// Tells whoever waits on a batch the store has not finished within `Timing.hangLimit`;
    /// once stopping, gives up on it and on everything queued, so the server can stop.
    private func checkForHang() {
        let now = NIODeadline.now()
        let (report, givenUp) = queue.withLock { queue -> ((waiting: [CommitReceipt], for: TimeAmount)?, (dropped: Int, waiters: [CheckedContinuation<Void, Never>])?) in
            let report = queue.hung(now: now, limit: timing.hangLimit)
            if report != nil { hung.store(true, ordering: .relaxed) }
            guard stopping.load(ordering: .relaxed), queue.isHung(now: now, limit: timing.hangLimit) else { return (report, nil) }
            return (report, queue.giveUp())
        }
        if let report {
            logger.error(
                "the store has not finished a commit; new commands are refused until it does",
                metadata: ["waited.ms": "\(report.for.nanoseconds / 1_000_000)", "sessions.waiting": "\(report.waiting.count)"])
            tellRefused(report.waiting)
        }
        if let givenUp {
            logger.critical(
                "the store has not finished a commit while the server stopped; writes that were never acknowledged are not stored",
                metadata: ["writes.dropped": "\(givenUp.dropped)"])
            for waiter in givenUp.waiters { waiter.resume() }
        }
    }

    /// Tells each receiver, on its loop, that its writes up to its record are not stored yet.
    private func tellRefused(_ waiting: [CommitReceipt]) {
        for (receiver, lsn) in waiting { receiver.eventLoop.execute { receiver.storeRefused(through: lsn) } }
    }

    /// Queues `writes`; `receipt` is told once they are durable. Never blocks.
    func submit(_ writes: [StoreWrite], receipt: CommitReceipt?) {
        let wake = queue.withLock { $0.submit(writes, receipt: receipt, batchTarget: timing.batchTarget) }
        if wake { loop.execute { self.drain() } }
    }

    /// Writes what is queued, then looks again; on the store's loop.
    private func drain() {
        switch queue.withLock({ $0.next(now: .now(), timing: timing) }) {
        case .linger(let generation):
            lingers.add(1, ordering: .relaxed)
            // A submit that fills the batch drains it early; the timer then has nothing to do.
            loop.scheduleTask(in: timing.linger) {
                if self.queue.withLock({ $0.lingerEnded(generation) }) { self.drain() }
            }
        case .idle(let waiters):
            for waiter in waiters { waiter.resume() }
        case .commit(let writes, let receipts):
            commit(writes, receipts: receipts)
        }
    }

    /// Writes one batch, then tells its sessions and drains again (or retries it).
    private func commit(_ writes: [StoreWrite], receipts: [CommitReceipt]) {
        let handedOver = DispatchTime.now().uptimeNanoseconds
        store.commit(writes, on: loop).whenComplete { result in
            switch result {
            case .success:
                guard
                    let took = self.unlessAbandoned({ queue in
                        self.storeAnswered()
                        return queue.committed(at: .now())
                    })
                else { return }
                Metrics.persistedBatches.increment()
                Metrics.persistedRows.increment(by: writes.count)
                Metrics.batchWrites.record(writes.count)
                Metrics.commitDuration.recordNanoseconds(Int64(DispatchTime.now().uptimeNanoseconds - handedOver))
                if let took {
                    self.logger.notice("the store finished a commit that hung", metadata: ["took.ms": "\(took.nanoseconds / 1_000_000)"])
                }
                self.notify(receipts)
                // A completed future runs this inline: go round the loop rather than recurse.
                self.loop.execute {
                    self.store.afterCommit()
                    self.drain()
                }
            case .failure(let conflict as StoreConflict):
                guard self.dropFenced(conflict, writes: writes, receipts: receipts) else { return }
                self.loop.execute { self.drain() }
            case .failure(let error):
                guard
                    let (failures, waiting) = self.unlessAbandoned({ queue in
                        self.stalled.store(true, ordering: .relaxed)
                        self.hung.store(false, ordering: .relaxed)
                        return queue.failed(writes, receipts: receipts)
                    })
                else { return }
                self.tellRefused(waiting)
                if self.stopping.load(ordering: .relaxed), failures >= Self.attemptsWhenStopping {
                    self.giveUp(after: error)
                    return
                }
                let backoff = min(2_000, 50 << min(failures - 1, 6))
                self.logger.error("storing a batch failed; retrying", metadata: ["error": .loggable(error), "batch.writes": "\(writes.count)", "retry.ms": "\(backoff)"])
                self.loop.scheduleTask(in: .milliseconds(Int64(backoff))) { self.drain() }
            }
        }
    }

    /// Records how the batch just written ended, with `ended`, unless it was given up on while
    /// the server stopped: then its sessions are gone, nothing is retried, and the `flush`
    /// callers go on; returns nil. One lock for both, so a give-up (`checkForHang`) cannot land
    /// between the check and the record and leave the next batch taken for abandoned.
    private func unlessAbandoned<Ended: Sendable>(_ ended: (inout CommitQueue<CheckedContinuation<Void, Never>>) -> Ended) -> Ended? {
        let (waiters, value) = queue.withLock { queue -> ([CheckedContinuation<Void, Never>]?, Ended?) in
            if let waiters = queue.endAbandoned() { return (waiters, nil) }
            return (nil, ended(&queue))
        }
        for waiter in waiters ?? [] { waiter.resume() }
        return value
    }

    /// The store answered a commit: it takes writes again. Called holding `queue`'s lock.
    private func storeAnswered() {
        stalled.store(false, ordering: .relaxed)
        hung.store(false, ordering: .relaxed)
    }

    /// Another node appended to some sessions of the batch first: their writes (this batch's
    /// and any queued since, all made on a state the log has moved past) are dropped and the
    /// sessions told; the rest of the batch goes back in front of the queue. False when the
    /// batch had been given up on (nothing more is written).
    private func dropFenced(_ conflict: StoreConflict, writes: [StoreWrite], receipts: [CommitReceipt]) -> Bool {
        let fenced = Set(conflict.sessions)
        guard
            let dropped = unlessAbandoned({ queue in
                // The store answered: it is reachable.
                storeAnswered()
                return queue.dropFenced(fenced, batch: writes, receipts: receipts)
            })
        else { return false }
        logger.warning("another server wrote these sessions first; this one lets them go", metadata: ["sessions": "\(conflict.sessions)"])
        var told = Set<ObjectIdentifier>()
        for receiver in dropped where told.insert(ObjectIdentifier(receiver)).inserted {
            receiver.eventLoop.execute { receiver.fenced() }
        }
        return true
    }

    /// The server is stopping and the store keeps failing: drops what is queued (none of it was
    /// acknowledged: nothing is before it is stored) so the server can stop.
    private func giveUp(after error: any Error) {
        let (dropped, waiters) = queue.withLock { $0.giveUp() }
        logger.critical(
            "the store kept failing while the server stopped; writes that were never acknowledged are not stored",
            metadata: ["error": .loggable(error), "writes.dropped": "\(dropped)"])
        for waiter in waiters { waiter.resume() }
    }

    /// Tells each session's loop, once per loop, which records are durable.
    private func notify(_ receipts: [CommitReceipt]) {
        var byLoop: [ObjectIdentifier: (loop: any EventLoop, receipts: [ObjectIdentifier: CommitReceipt])] = [:]
        for receipt in receipts {
            let loopKey = ObjectIdentifier(receipt.receiver.eventLoop)
            let receiverKey = ObjectIdentifier(receipt.receiver)
            // Updated in place: copying the entry out and back would copy its dictionary per receipt.
            if let known = byLoop[loopKey]?.receipts[receiverKey], known.lsn >= receipt.lsn { continue }
            byLoop[loopKey, default: (receipt.receiver.eventLoop, [:])].receipts[receiverKey] = receipt
        }
        for (_, entry) in byLoop {
            let receipts = Array(entry.receipts.values)
            entry.loop.execute {
                for receipt in receipts { receipt.receiver.stored(through: receipt.lsn) }
            }
        }
    }

    /// Returns once everything submitted so far is written (or, once stopping, given up on).
    func flush() async {
        await withCheckedContinuation { continuation in
            let idleNow = queue.withLock { $0.flush(continuation) }
            if idleNow { continuation.resume() }
        }
    }

    public func run() async throws {
        // Commits go on until everything that submits writes has stopped (only the cluster node,
        // which writes nothing, stops after this service, so its leases outlast the last write).
        try? await gracefulShutdown()
        // A thread still inside a hung commit (SQLite's) would never let its group stop.
        if await stop() { try await group.shutdownGracefully() }
    }

    /// Writes what is queued — giving up on a batch the store refuses
    /// `attemptsWhenStopping` times, or that hangs — and closes the store. Returns false when
    /// a batch given up on is still being written: the store is then left open, since closing
    /// it under a commit in progress (SQLite's, on the store's thread) is not safe.
    @discardableResult
    func stop() async -> Bool {
        stopping.store(true, ordering: .relaxed)
        await flush()
        hangCheck.withLock { $0?.cancel() }
        if queue.withLock({ $0.abandoned }) {
            logger.error("the store is still writing a batch given up on; it is left open")
            return false
        }
        do {
            try await store.close()
        } catch {
            logger.error("closing the store failed", metadata: ["error": .loggable(error)])
        }
        return true
    }
}
