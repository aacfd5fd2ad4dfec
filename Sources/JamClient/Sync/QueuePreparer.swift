import JamProtocol
import Logging
import Synchronization

/// Makes a track ready to start without delay (download, decode, cache).
///
/// Must be idempotent and should end promptly when its task is cancelled.
public protocol TrackPreparer: Sendable {
    /// Prepares `track`; throws when it cannot be prepared.
    func prepare(_ track: Track) async throws
}

/// Prepares the tracks a session is about to play: the current and the next one
/// first, so a start never waits for the rest, then the rest of the queue in the
/// background.
///
/// `update(current:queue:)` prepares the head itself (the caller awaits it) and hands
/// the tail to `run()`, a loop the owner runs in its own task (e.g. a task group
/// next to the connection). Updates may overlap: a newer one does not wait for an older
/// one's head. An update with other tracks cancels the work under way (an older update's
/// head or the background's) on a track it no longer lists, and on any track outside its
/// own head while that head still needs preparing (the head goes first); a track still
/// listed keeps its work under way, so a queue that votes reorder does not start a long
/// download over. Tracks already prepared are skipped, and a failure is recorded per track
/// (retried on later updates up to `maxAttempts`), never fatal.
public actor QueuePreparer {
    /// Tuning knobs.
    public struct Configuration: Sendable {
        /// Tracks prepared first, as `update`'s own work: the current and the next.
        public var headCount: Int = 2
        /// Most tracks of the tail prepared in the background (nil: all).
        public var tailLimit: Int?
        /// Attempts per track before it is left alone.
        public var maxAttempts: Int = 3

        /// Creates a configuration with the defaults.
        public init(headCount: Int = 2, tailLimit: Int? = nil, maxAttempts: Int = 3) {
            self.headCount = headCount
            self.tailLimit = tailLimit
            self.maxAttempts = maxAttempts
        }
    }

    private let preparer: any TrackPreparer
    private let configuration: Configuration
    private let logger: Logger
    private let signal = GenerationSignal()

    private var generation = 0
    /// The background plan: bumped whenever an update changes it.
    private var tailGeneration = 0
    private var tail: [Track] = []
    /// The tail's tracks the background loop has tried under the current tail.
    private var triedInTail: Set<String> = []
    /// The prepares under way that a later update may stop (the background's, and each
    /// update's head): their track, and whether an update has since stopped wanting it
    /// (decided as the update is made, not when the work next looks).
    private var watched: [Int: (id: String, unwanted: Bool)] = [:]
    private var nextWatch = 0
    /// The tracks of the last update whose head was prepared (in order), and whose tail the
    /// background loop has.
    private var settledIds: [String]?
    /// The tracks of the latest update while its head is being prepared.
    private var pendingIds: [String]?
    private var attempts: [String: Int] = [:]
    private var inFlight: Set<String> = []
    /// Callers waiting for a track's prepare under way to end before they look at it again.
    private var waitingOnFlight: [String: [CheckedContinuation<Void, Never>]] = [:]

    /// IDs of the tracks prepared so far, in the order they became ready.
    public private(set) var prepared: [String] = []
    private var preparedSet: Set<String> = []
    /// The last failure per track ID (cleared when a later attempt succeeds).
    public private(set) var failures: [String: String] = [:]

    /// Creates a preparer.
    public init(
        preparer: any TrackPreparer, configuration: Configuration = Configuration(),
        logger: Logger = Logger(label: "openjam.queuepreparer")
    ) {
        self.preparer = preparer
        self.configuration = configuration
        self.logger = logger
    }

    /// True when `trackId` has been prepared.
    public func isPrepared(_ trackId: String) -> Bool { preparedSet.contains(trackId) }

    /// Sets what is playing and what follows. Prepares the current and the next
    /// track before it returns (unless a newer update supersedes it, or an update under way
    /// already prepares these same tracks), then leaves the rest to `run()`; work under way on
    /// a track this update no longer lists (or on any outside its head, while that head needs
    /// preparing) is cancelled.
    public func update(current: Track?, queue: [Track]) async {
        guard let plan = accept(current: current, queue: queue) else { return }
        await prepareHead(of: plan)
    }

    /// An accepted update: its place among updates, and what it prepares first and after.
    struct Plan: Sendable {
        let generation: Int
        let ids: [String]
        let head: [Track]
        let rest: [Track]
        let listed: Set<String>
    }

    /// The first half of `update`, without waiting: makes the list the latest and stops the
    /// work it no longer wants. Nil when the list changes nothing. A caller that must not
    /// wait for a head (a feed of lists) accepts each in order and prepares heads beside.
    func accept(current: Track?, queue: [Track]) -> Plan? {
        var seen: Set<String> = []
        let ordered = ([current].compactMap { $0 } + queue).filter { seen.insert($0.id).inserted }
        // The same tracks again (a vote on another song, someone connecting): the work under
        // way is the right work, and cancelling it would start a long download over at every
        // event. Only a failure with attempts left makes the same list go again, once the
        // update preparing it is done.
        let ids = ordered.map(\.id)
        if ids == pendingIds { return nil }
        if ids == settledIds, !ordered.contains(where: { failures[$0.id] != nil && attempts[$0.id, default: 0] < configuration.maxAttempts }) {
            return nil
        }
        generation += 1
        pendingIds = ids
        // Until this head is done, the tail the loop has is not this list's: the list that
        // settled before must go again if a later update brings it back.
        settledIds = nil
        // An older update's head waiting on another's download leaves it now (see `prepareOne`).
        wakeWaiters()
        let headCount = max(0, configuration.headCount)
        let head = Array(ordered.prefix(headCount))
        let afterHead = ordered.dropFirst(headCount)
        let rest = Array(configuration.tailLimit.map { afterHead.prefix($0) } ?? afterHead)
        let listed = Set(head.map(\.id)).union(rest.map(\.id))
        // Work on a track no longer listed stops now; while the head needs work, so does any
        // outside it, so that it does not compete with the head.
        let headReady = head.allSatisfy { preparedSet.contains($0.id) || attempts[$0.id, default: 0] >= configuration.maxAttempts }
        publishTail([], wanted: headReady ? listed : Set(head.map(\.id)))
        return Plan(generation: generation, ids: ids, head: head, rest: rest, listed: listed)
    }

    /// The second half of `update`: prepares the plan's head, then hands its tail to `run()`,
    /// unless a newer update has come meanwhile.
    func prepareHead(of plan: Plan) async {
        for track in plan.head {
            guard generation == plan.generation, !Task.isCancelled else { break }
            await prepareWatched(track, for: plan.generation)
        }
        guard generation == plan.generation else { return } // a newer update owns the tail
        pendingIds = nil
        settledIds = Task.isCancelled ? nil : plan.ids
        publishTail(plan.rest, wanted: plan.listed)
    }

    /// Hands the background loop `tracks`; work under way goes on only on a track in
    /// `wanted` (the head, and the tail once the head is prepared).
    private func publishTail(_ tracks: [Track], wanted: Set<String>) {
        tail = tracks
        for (watch, work) in watched where !wanted.contains(work.id) { watched[watch]?.unwanted = true }
        triedInTail = []
        tailGeneration += 1
        signal.advance(to: tailGeneration)
    }

    /// The background loop: prepares the tail of the latest update, in queue order,
    /// one at a time; a newer update that no longer wants the track in progress cancels
    /// it. Runs until its task is cancelled.
    public func run() async {
        while !Task.isCancelled {
            let plan = tailGeneration
            guard let track = nextInTail() else {
                await signal.wait(past: plan)
                continue
            }
            triedInTail.insert(track.id)
            await prepareWatched(track)
        }
    }

    /// Prepares `track` until done, or until an update no longer wants it (then cancelled);
    /// for an update's head, `plan` is that update's generation.
    private func prepareWatched(_ track: Track, for plan: Int? = nil) async {
        nextWatch += 1
        let watch = nextWatch
        let tailPlan = tailGeneration
        watched[watch] = (track.id, false)
        defer { watched[watch] = nil }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.prepareOne(track, for: plan) }
            group.addTask { await self.untilUnwanted(watch, after: tailPlan) }
            await group.next()
            group.cancelAll()
        }
    }

    /// The first track of the tail not prepared, not under way and not yet tried under it.
    private func nextInTail() -> Track? {
        tail.first { !preparedSet.contains($0.id) && !inFlight.contains($0.id) && !triedInTail.contains($0.id) }
    }

    /// Returns once an update no longer wants the watched work (or the task is cancelled).
    private func untilUnwanted(_ watch: Int, after plan: Int) async {
        var seen = plan
        while !Task.isCancelled {
            await signal.wait(past: seen)
            seen = tailGeneration
            if watched[watch]?.unwanted ?? true { return }
        }
    }

    /// Wakes every prepare waiting on another's download, to look again.
    private func wakeWaiters() {
        let waiters = waitingOnFlight.values.flatMap { $0 }
        waitingOnFlight = [:]
        for waiter in waiters { waiter.resume() }
    }

    /// Prepares `track` once, unless it is prepared or out of attempts; `plan` as in
    /// `prepareWatched`.
    private func prepareOne(_ track: Track, for plan: Int? = nil) async {
        let id = track.id
        // Under way already (the background tail's, when the song changed to it): a second
        // prepare at once would write the same files beside it. Wait, then look again: that
        // one may have been cancelled with the old tail. An older update's head stops waiting
        // once a newer update has come: that one waits for the track if it wants it, and
        // every vote during a long download would otherwise leave a waiter behind.
        while inFlight.contains(id) {
            if let plan, plan != generation { return }
            await withCheckedContinuation { waitingOnFlight[id, default: []].append($0) }
        }
        // Cancelled while it waited: the download it waited on ended, and starting it again
        // here would only be cancelled in turn.
        guard !Task.isCancelled, !preparedSet.contains(id), attempts[id, default: 0] < configuration.maxAttempts else { return }
        attempts[id, default: 0] += 1
        inFlight.insert(id)
        defer {
            inFlight.remove(id)
            for waiter in waitingOnFlight.removeValue(forKey: id) ?? [] { waiter.resume() }
        }
        do {
            try await preparer.prepare(track)
            if preparedSet.insert(id).inserted { prepared.append(id) }
            failures[id] = nil
        } catch {
            if Task.isCancelled || error is CancellationError {
                attempts[id, default: 1] -= 1 // an interrupted attempt does not count
                return
            }
            failures[id] = "\(error)"
            logger.warning("preparing a track failed", metadata: ["track.id": "\(id)", "queue.error": "\(error)"])
        }
    }
}

/// A counter that tasks can wait on: `wait(past:)` returns once the counter exceeds
/// the given value, or at once when the waiting task is cancelled.
final class GenerationSignal: Sendable {
    private enum Waiter {
        case registering
        case waiting(after: Int, CheckedContinuation<Void, Never>)
        case cancelled
    }

    private struct State {
        var value = 0
        var nextId = 0
        var waiters: [Int: Waiter] = [:]
    }

    private let state = Mutex(State())

    /// Raises the counter to `value` and wakes the waiters it passes.
    func advance(to value: Int) {
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.value = max(state.value, value)
            var woken: [CheckedContinuation<Void, Never>] = []
            for (id, waiter) in state.waiters {
                if case .waiting(let after, let continuation) = waiter, state.value > after {
                    woken.append(continuation)
                    state.waiters[id] = nil
                }
            }
            return woken
        }
        for continuation in woken { continuation.resume() }
    }

    /// Returns once the counter exceeds `value` or the task is cancelled.
    func wait(past value: Int) async {
        let id = state.withLock { state -> Int in
            state.nextId += 1
            state.waiters[state.nextId] = .registering
            return state.nextId
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if case .cancelled = state.waiters[id] {
                        state.waiters[id] = nil
                        return true
                    }
                    if state.value > value {
                        state.waiters[id] = nil
                        return true
                    }
                    state.waiters[id] = .waiting(after: value, continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
                switch state.waiters[id] {
                case .registering:
                    state.waiters[id] = .cancelled
                    return nil
                case .waiting(_, let continuation):
                    state.waiters[id] = nil
                    return continuation
                case .cancelled, nil:
                    return nil
                }
            }
            continuation?.resume()
        }
    }
}
