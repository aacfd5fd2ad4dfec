import JamProtocol
import Testing

@testable import JamClient

/// A preparer that records what it does; listed tracks block until released or
/// cancelled, others finish at once (or fail).
actor FakePreparer: TrackPreparer {
    enum Event: Hashable, Sendable {
        case started(String), finished(String), cancelled(String), failed(String)
    }

    struct Failure: Error {}

    private var blocked: Set<String>
    private let failing: Set<String>
    /// The gates of the prepares blocked now, by track (two prepares of one track each have theirs).
    private var gates: [String: [Int: AsyncStream<Void>.Continuation]] = [:]
    private var nextGate = 0
    private let continuation: AsyncStream<Event>.Continuation
    nonisolated let events: AsyncStream<Event>
    private(set) var log: [Event] = []
    /// Prepares of each track under way now, and the most there were at once.
    private var running: [String: Int] = [:]
    private(set) var mostAtOnce: [String: Int] = [:]

    init(blocked: Set<String> = [], failing: Set<String> = []) {
        self.blocked = blocked
        self.failing = failing
        (events, continuation) = AsyncStream.makeStream(of: Event.self)
    }

    private func emit(_ event: Event) {
        log.append(event)
        continuation.yield(event)
    }

    func prepare(_ track: Track) async throws {
        let id = track.id
        running[id, default: 0] += 1
        mostAtOnce[id] = max(mostAtOnce[id, default: 0], running[id, default: 0])
        defer { running[id, default: 1] -= 1 }
        emit(.started(id))
        if failing.contains(id) {
            emit(.failed(id))
            throw Failure()
        }
        if blocked.contains(id) {
            let (gate, opener) = AsyncStream.makeStream(of: Void.self)
            nextGate += 1
            let mine = nextGate
            gates[id, default: [:]][mine] = opener
            for await _ in gate {} // ends when released, or at once when the task is cancelled
            gates[id]?[mine] = nil
            if Task.isCancelled {
                emit(.cancelled(id))
                throw CancellationError()
            }
        }
        emit(.finished(id))
    }

    func release(_ id: String) {
        blocked.remove(id)
        for opener in (gates.removeValue(forKey: id) ?? [:]).values { opener.finish() }
    }

    func starts(of id: String) -> Int { log.filter { $0 == .started(id) }.count }
}

/// Reads events until `wanted` comes.
func waitFor(_ wanted: FakePreparer.Event, in events: inout AsyncStream<FakePreparer.Event>.Iterator) async {
    while let event = await events.next() {
        if event == wanted { return }
    }
}

@Suite("QueuePreparer")
struct QueuePreparerTests {
    let a = Fixture.track("a"), b = Fixture.track("b"), c = Fixture.track("c"), d = Fixture.track("d")

    @Test("the current and the next track are prepared before update returns; the rest follows in queue order")
    func headFirst() async {
        let fake = FakePreparer()
        let preparer = QueuePreparer(preparer: fake)
        var events = fake.events.makeAsyncIterator()
        await preparer.update(current: a, queue: [b, c, d])
        #expect(await preparer.prepared == ["a", "b"])
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await preparer.run() }
            await waitFor(.finished("d"), in: &events)
            group.cancelAll()
        }
        #expect(await preparer.prepared == ["a", "b", "c", "d"])
        #expect(
            await fake.log == [
                .started("a"), .finished("a"), .started("b"), .finished("b"),
                .started("c"), .finished("c"), .started("d"), .finished("d"),
            ])
    }

    @Test("a start never waits for the tail, and a new update cancels the old background work")
    func tailNeverBlocksAndUpdatesCancel() async {
        let fake = FakePreparer(blocked: ["c"])
        let preparer = QueuePreparer(preparer: fake)
        var events = fake.events.makeAsyncIterator()
        let x = Fixture.track("x"), y = Fixture.track("y"), z = Fixture.track("z")
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await preparer.run() }
            // The background loop is already running: the tail must still wait for the head.
            await preparer.update(current: a, queue: [b, c, d])
            #expect(await preparer.prepared == ["a", "b"])
            await waitFor(.started("c"), in: &events)
            // "c" hangs (a slow download): the head is ready to start regardless.
            #expect(await preparer.isPrepared("a"))
            #expect(await preparer.isPrepared("b"))
            #expect(await preparer.isPrepared("d") == false)

            // The queue changes: the hanging work is cancelled, the new head prepared first.
            await preparer.update(current: x, queue: [y, z])
            #expect(await preparer.prepared == ["a", "b", "x", "y"])
            await waitFor(.finished("z"), in: &events)
            group.cancelAll()
        }
        let log = await fake.log
        #expect(log.contains(.cancelled("c")))
        #expect(!log.contains(.started("d")))
        #expect(log.firstIndex(of: .started("c"))! > log.firstIndex(of: .finished("b"))!)
        #expect(log.firstIndex(of: .started("z"))! > log.firstIndex(of: .finished("y"))!)
        #expect(await preparer.prepared == ["a", "b", "x", "y", "z"])
        #expect(await preparer.failures.isEmpty)
    }

    /// Runs `body` beside the background loop once "c", which blocks until released, is
    /// downloading in the tail of a, [b, c, d]; stops the loop after it.
    func whileCDownloads(
        _ body: (FakePreparer, QueuePreparer, inout AsyncStream<FakePreparer.Event>.Iterator, inout TaskGroup<Void>) async -> Void
    ) async -> (fake: FakePreparer, preparer: QueuePreparer) {
        let fake = FakePreparer(blocked: ["c"])
        let preparer = QueuePreparer(preparer: fake)
        var events = fake.events.makeAsyncIterator()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await preparer.run() }
            await preparer.update(current: a, queue: [b, c, d])
            await waitFor(.started("c"), in: &events)
            await body(fake, preparer, &events, &group)
            group.cancelAll()
        }
        return (fake, preparer)
    }

    @Test("an update with the same tracks leaves the background work under way alone", .timeLimit(.minutes(1)))
    func theSameTracksAgainLeaveTheWorkUnderWayAlone() async {
        let (fake, preparer) = await whileCDownloads { fake, preparer, events, _ in
            // A vote elsewhere, a member connecting: the session's tracks are the same.
            for _ in 0..<3 { await preparer.update(current: a, queue: [b, c, d]) }
            await fake.release("c")
            await waitFor(.finished("d"), in: &events)
        }
        #expect(await fake.starts(of: "c") == 1, "the download under way was started over")
        #expect(!(await fake.log).contains(.cancelled("c")))
        #expect(await preparer.prepared == ["a", "b", "c", "d"])
    }

    @Test("a track the background work is preparing becomes current: its download goes on, and the head waits for it", .timeLimit(.minutes(1)))
    func aTrackUnderWayGoesOnWhenItBecomesCurrent() async throws {
        let (fake, preparer) = await whileCDownloads { fake, preparer, events, group in
            // The song changes to "c" while its download is still under way in the background.
            group.addTask { await preparer.update(current: c, queue: [d]) }
            try? await Task.sleep(for: .milliseconds(50))
            #expect(await !preparer.isPrepared("c"))
            await fake.release("c")
            await waitFor(.finished("d"), in: &events)
        }
        #expect(await fake.starts(of: "c") == 1, "the download under way was started over")
        #expect(await fake.mostAtOnce["c"] == 1, "two prepares of one track at once")
        #expect(await !(fake.log).contains(.cancelled("c")))
        #expect(await preparer.failures.isEmpty)
    }

    @Test("votes that reorder the tail leave the download under way alone", .timeLimit(.minutes(1)))
    func aReorderedTailKeepsTheWorkUnderWay() async {
        let e = Fixture.track("e")
        let (fake, preparer) = await whileCDownloads { fake, preparer, events, _ in
            // Votes move "d" above "c", then a new song in below both.
            await preparer.update(current: a, queue: [b, d, c])
            await preparer.update(current: a, queue: [b, d, c, e])
            // Time for a cancellation to reach the download, were there one.
            try? await Task.sleep(for: .milliseconds(50))
            await fake.release("c")
            await waitFor(.finished("e"), in: &events)
        }
        #expect(await fake.starts(of: "c") == 1, "the download under way was started over")
        #expect(await !(fake.log).contains(.cancelled("c")))
        // The tail goes on in its new order once the download under way is done.
        #expect(await preparer.prepared == ["a", "b", "c", "d", "e"])
    }

    @Test("a new head that needs preparing stops the tail's download first, which starts again after it", .timeLimit(.minutes(1)))
    func aHeadThatNeedsWorkGoesBeforeTheTail() async {
        let e = Fixture.track("e")
        let (fake, preparer) = await whileCDownloads { fake, preparer, events, _ in
            // A skip: "b" plays, a new song "e" is next (not prepared), "c" still follows.
            await preparer.update(current: b, queue: [e, c, d])
            #expect(await preparer.isPrepared("e"))
            await waitFor(.started("c"), in: &events)
            await fake.release("c")
            await waitFor(.finished("d"), in: &events)
        }
        let log = await fake.log
        #expect(log.contains(.cancelled("c")))
        #expect(await fake.starts(of: "c") == 2)
        #expect(log.lastIndex(of: .started("c"))! > log.firstIndex(of: .finished("e"))!)
        #expect(await preparer.failures.isEmpty)
    }

    @Test("a newer update does not wait for an older one's head, and stops its download when it no longer lists it", .timeLimit(.minutes(1)))
    func aNewerUpdateDoesNotWaitForAnOlderHead() async {
        let fake = FakePreparer(blocked: ["a"])
        let preparer = QueuePreparer(preparer: fake)
        var events = fake.events.makeAsyncIterator()
        let x = Fixture.track("x"), y = Fixture.track("y")
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await preparer.run() }
            // "a" plays and downloads slowly; then the host skips to a queue of x, y.
            group.addTask { await preparer.update(current: a, queue: [b]) }
            await waitFor(.started("a"), in: &events)
            await preparer.update(current: x, queue: [y])
            #expect(await preparer.prepared == ["x", "y"])
            await waitFor(.cancelled("a"), in: &events)
            group.cancelAll()
        }
        #expect(await !(fake.log).contains(.started("b")))
        #expect(await preparer.failures.isEmpty)
    }

    @Test("an update with the tracks of one whose head is under way leaves the work to it", .timeLimit(.minutes(1)))
    func theSameTracksAsAnUpdateUnderWayLeaveTheWorkToIt() async {
        let fake = FakePreparer(blocked: ["a"])
        let preparer = QueuePreparer(preparer: fake)
        var events = fake.events.makeAsyncIterator()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await preparer.run() }
            group.addTask { await preparer.update(current: a, queue: [b, c]) }
            await waitFor(.started("a"), in: &events)
            // A vote elsewhere while "a" downloads: nothing new to do, and nothing to wait on.
            for _ in 0..<3 { await preparer.update(current: a, queue: [b, c]) }
            #expect(await !preparer.isPrepared("a"))
            await fake.release("a")
            await waitFor(.finished("c"), in: &events)
            group.cancelAll()
        }
        #expect(await fake.starts(of: "a") == 1)
        #expect(await preparer.prepared == ["a", "b", "c"])
    }

    @Test("a list that comes back while another's head downloads is prepared again", .timeLimit(.minutes(1)))
    func aListThatComesBackIsPreparedAgain() async {
        let fake = FakePreparer(blocked: ["d", "e"])
        let preparer = QueuePreparer(preparer: fake)
        var events = fake.events.makeAsyncIterator()
        let e = Fixture.track("e")
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await preparer.run() }
            await preparer.update(current: a, queue: [b, c, d])
            await waitFor(.started("d"), in: &events)
            // "e" comes in next: the head goes first, so "d" stops.
            group.addTask { await preparer.update(current: a, queue: [e, b]) }
            var seen: Set<FakePreparer.Event> = []
            while seen.count < 2, let event = await events.next() {
                if event == .cancelled("d") || event == .started("e") { seen.insert(event) }
            }
            // "e" is taken out again while it downloads: the first list is back, and with it "d".
            await preparer.update(current: a, queue: [b, c, d])
            await waitFor(.started("d"), in: &events)
            await fake.release("d")
            await waitFor(.finished("d"), in: &events)
            group.cancelAll()
        }
        #expect(await fake.log.contains(.cancelled("e")))
        #expect(await preparer.prepared == ["a", "b", "c", "d"])
    }

    @Test("a skip during a download that votes reordered behind starts nothing twice", .timeLimit(.minutes(1)))
    func aSkipStartsNothingTwice() async {
        let fake = FakePreparer(blocked: ["a"])
        let preparer = QueuePreparer(preparer: fake)
        var events = fake.events.makeAsyncIterator()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await preparer.run() }
            group.addTask { await preparer.update(current: a, queue: [b]) }
            await waitFor(.started("a"), in: &events)
            // A song added before "b" while "a" still downloads: the head is "a" and "c".
            group.addTask { await preparer.update(current: a, queue: [c, b]) }
            try? await Task.sleep(for: .milliseconds(50))
            // The host skips "a".
            await preparer.update(current: b, queue: [c])
            await waitFor(.cancelled("a"), in: &events)
            // Time for a second start of "a", were there one.
            try? await Task.sleep(for: .milliseconds(50))
            group.cancelAll()
        }
        #expect(await fake.starts(of: "a") == 1)
        #expect(await preparer.isPrepared("b"))
        #expect(await preparer.isPrepared("c"))
    }

    @Test("prepared tracks are skipped; a failure is recorded per track and retried at most 3 times")
    func skipsPreparedAndRecordsFailures() async {
        let fake = FakePreparer(failing: ["f"])
        let preparer = QueuePreparer(preparer: fake)
        let f = Fixture.track("f")
        var events = fake.events.makeAsyncIterator()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await preparer.run() }
            await preparer.update(current: a, queue: [f, c])
            await waitFor(.finished("c"), in: &events)
            for _ in 0..<4 { await preparer.update(current: a, queue: [f, c]) }
            group.cancelAll()
        }
        #expect(await preparer.prepared == ["a", "c"])
        #expect(await preparer.failures.keys.sorted() == ["f"])
        #expect(await fake.starts(of: "a") == 1)
        #expect(await fake.starts(of: "c") == 1)
        #expect(await fake.starts(of: "f") == 3)
    }
}
