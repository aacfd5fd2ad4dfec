import JamProtocol
import NIOCore
import Testing

@testable import JamServer

/// The outbox as a pure state machine: inputs in, actions out, time passed in.
@Suite struct SessionOutboxTests {
    static let alice: UserID = "00000000-0000-0000-0000-00000000000a"
    static let bob: UserID = "00000000-0000-0000-0000-00000000000b"
    static let configuration = SessionOutbox.Configuration(replayLimit: 4, backlogLimit: 3, stallTimeoutMs: 10_000)

    /// A frame whose bytes name its seq, so tests can read what was written where.
    static func frame(_ seq: Int64, to audience: Audience = .everyone, logged: Bool = true) -> WireFrame {
        WireFrame(seq: seq, bytes: ByteBuffer(string: "e\(seq)"), audience: audience, logged: logged)
    }

    static func text(_ buffers: [ByteBuffer]) -> [String] { buffers.map { String(buffer: $0) } }

    /// A ring holding `frames` as a recovery regenerated them, without limits of its own.
    static func ring(_ frames: [(Int64, ByteBuffer)]) -> ResumeRing {
        var ring = ResumeRing(SessionOutbox.Configuration(replayLimit: .max, replayBytesLimit: .max, backlogLimit: 0, stallTimeoutMs: 0))
        for frame in frames { ring.append(frame) }
        return ring
    }

    /// An outbox whose store holds record 10, with connections 1 (Alice), 2 (Bob), 3 (Alice) attached at seq 20.
    static func attached(configuration: SessionOutbox.Configuration = configuration) -> SessionOutbox {
        var outbox = SessionOutbox(configuration: configuration, storedLsn: 10, publishedSeq: 20)
        outbox.attach(1, user: alice, syncedSeq: 20)
        outbox.attach(2, user: bob, syncedSeq: 20)
        outbox.attach(3, user: alice, syncedSeq: 20)
        return outbox
    }

    // MARK: Holding frames until they are stored

    @Test func framesWaitForTheirRecordAndThenGoToEveryConnectionInOrder() {
        var outbox = Self.attached()
        #expect(outbox.enqueue(.broadcast(Self.frame(21)), after: 11, now: 0).isEmpty)
        #expect(outbox.enqueue(.broadcast(Self.frame(22)), after: 11, now: 0).isEmpty)
        #expect(outbox.enqueue(.broadcast(Self.frame(23)), after: 12, now: 0).isEmpty)
        let first = outbox.stored(through: 11, now: 1)
        for connection in [1, 2, 3] { #expect(Self.text(first.frames(for: connection)) == ["e21", "e22"]) }
        let second = outbox.stored(through: 12, now: 2)
        for connection in [1, 2, 3] { #expect(Self.text(second.frames(for: connection)) == ["e23"]) }
    }

    @Test func aFrameBehindAnUnstoredRecordWaitsEvenIfItsOwnRecordIsStored() {
        var outbox = Self.attached()
        _ = outbox.enqueue(.broadcast(Self.frame(21)), after: 12, now: 0)
        // A reply queued behind record 12 (the session had nothing newer) must not overtake it.
        #expect(outbox.enqueue(.direct(2, ByteBuffer(string: "reply")), after: 12, now: 0).isEmpty)
        let released = outbox.stored(through: 12, now: 1)
        #expect(Self.text(released.frames(for: 2)) == ["e21", "reply"])
    }

    @Test func somethingQueuedBehindAStoredRecordGoesAtOnce() {
        var outbox = Self.attached()
        let actions = outbox.enqueue(.direct(1, ByteBuffer(string: "pong")), after: 10, now: 0)
        #expect(Self.text(actions.frames(for: 1)) == ["pong"])
        #expect(actions.frames(for: 2).isEmpty)
    }

    @Test func aStoredLsnThatGoesBackwardsChangesNothing() {
        var outbox = Self.attached()
        _ = outbox.enqueue(.broadcast(Self.frame(21)), after: 11, now: 0)
        _ = outbox.stored(through: 11, now: 0)
        #expect(outbox.stored(through: 5, now: 0).isEmpty)
        #expect(outbox.storedLsn == 11)
    }

    // MARK: Audiences and what a connection already has

    @Test func audiencesPickTheirConnections() {
        var outbox = Self.attached()
        _ = outbox.enqueue(.broadcast(Self.frame(21, to: .everyoneExcept(3))), after: 11, now: 0)
        _ = outbox.enqueue(.broadcast(Self.frame(22, to: .user(Self.alice))), after: 11, now: 0)
        let actions = outbox.stored(through: 11, now: 0)
        #expect(Self.text(actions.frames(for: 1)) == ["e21", "e22"])
        #expect(Self.text(actions.frames(for: 2)) == ["e21"])
        #expect(Self.text(actions.frames(for: 3)) == ["e22"])
    }

    @Test func aConnectionSyncedPastAFrameDoesNotGetItAgain() {
        var outbox = Self.attached()
        _ = outbox.enqueue(.broadcast(Self.frame(21)), after: 11, now: 0)
        _ = outbox.enqueue(.broadcast(Self.frame(22)), after: 11, now: 0)
        // Connection 4 joined after both were applied: its whole state (seq 22) covers them.
        outbox.attach(4, user: Self.bob, syncedSeq: 22)
        let actions = outbox.stored(through: 11, now: 0)
        #expect(actions.frames(for: 4).isEmpty)
        #expect(Self.text(actions.frames(for: 2)) == ["e21", "e22"])
        // Connection 2 got the whole state again at seq 30 (a `hello` without a usable lastSeq).
        outbox.resync(2, at: 30)
        let later = outbox.enqueue(.broadcast(Self.frame(23)), after: 11, now: 0)
        #expect(later.frames(for: 2).isEmpty)
        #expect(Self.text(later.frames(for: 4)) == ["e23"])
    }

    @Test func aDetachedConnectionGetsNothingAndARepliesToItAreDropped() {
        var outbox = Self.attached()
        outbox.detach(2)
        _ = outbox.enqueue(.broadcast(Self.frame(21)), after: 11, now: 0)
        _ = outbox.enqueue(.direct(2, ByteBuffer(string: "late")), after: 11, now: 0)
        let actions = outbox.stored(through: 11, now: 0)
        #expect(actions.frames(for: 2).isEmpty)
        #expect(actions.writes.map(\.connection).sorted() == [1, 3])
        #expect(!outbox.isAttached(2))
    }

    // MARK: Waiters, closes, the end

    @Test func waitersResumeOnceWhatCameBeforeThemIsStored() {
        var outbox = Self.attached()
        _ = outbox.enqueue(.broadcast(Self.frame(21)), after: 11, now: 0)
        #expect(outbox.enqueue(.waiter(7), after: 11, now: 0).resumed.isEmpty)
        let actions = outbox.stored(through: 11, now: 0)
        #expect(actions.resumed == [7])
        #expect(Self.text(actions.frames(for: 1)) == ["e21"])
    }

    @Test func aCloseGoesAfterTheFramesBeforeItAndTheClosedGetNothingAfter() {
        var outbox = Self.attached()
        _ = outbox.enqueue(.broadcast(Self.frame(21)), after: 11, now: 0)
        _ = outbox.enqueue(.close(.user(Self.alice), .forbidden, "removed by the host"), after: 11, now: 0)
        _ = outbox.enqueue(.broadcast(Self.frame(22)), after: 11, now: 0)
        let actions = outbox.stored(through: 11, now: 0)
        #expect(Self.text(actions.frames(for: 1)) == ["e21"])
        #expect(Self.text(actions.frames(for: 3)) == ["e21"])
        #expect(Self.text(actions.frames(for: 2)) == ["e21", "e22"])
        #expect(actions.closes.map(\.connection).sorted() == [1, 3])
        #expect(actions.closes.allSatisfy { $0.code == .forbidden })
        #expect(actions.evicted.isEmpty)
        #expect(outbox.connections == [2])
    }

    @Test func theEndClosesEveryoneAndSaysSo() {
        var outbox = Self.attached()
        _ = outbox.enqueue(.broadcast(Self.frame(21)), after: 11, now: 0)
        _ = outbox.enqueue(.close(.everyone, .gone, "the session has ended"), after: 11, now: 0)
        _ = outbox.enqueue(.ended, after: 11, now: 0)
        let actions = outbox.stored(through: 11, now: 0)
        #expect(actions.ended)
        #expect(Set(actions.closes.map(\.connection)) == [1, 2, 3])
        #expect(outbox.connections.isEmpty)
    }

    // MARK: Resumes

    @Test func aResumeSendsExactlyTheMissedLoggedFrames() throws {
        var outbox = Self.attached()
        for seq in Int64(21)...23 { _ = outbox.enqueue(.broadcast(Self.frame(seq)), after: 11, now: 0) }
        _ = outbox.enqueue(.broadcast(Self.frame(24, logged: false)), after: 11, now: 0)
        _ = outbox.stored(through: 11, now: 0)
        outbox.attach(9, user: Self.bob, syncedSeq: 24)
        let replayed = outbox.replay(to: 9, after: 21, now: 0)
        let actions = try #require(replayed)
        #expect(Self.text(actions.frames(for: 9)) == ["e22", "e23"])
        // Later frames follow the replay without a gap or a repeat.
        _ = outbox.enqueue(.broadcast(Self.frame(25)), after: 12, now: 0)
        #expect(Self.text(outbox.stored(through: 12, now: 0).frames(for: 9)) == ["e25"])
    }

    @Test func aResumeFromBeyondTheRingOrFromTheFutureNeedsTheWholeState() {
        var outbox = Self.attached()
        for seq in Int64(21)...28 { _ = outbox.enqueue(.broadcast(Self.frame(seq)), after: 11, now: 0) }
        _ = outbox.stored(through: 11, now: 0)
        #expect(outbox.ringCount == 4)
        let tooOld = outbox.replay(to: 1, after: 23, now: 0)
        #expect(tooOld == nil, "frame 24 left the ring")
        let oldest = outbox.replay(to: 1, after: 24, now: 0)
        #expect(oldest != nil)
        let future = outbox.replay(to: 1, after: 29, now: 0)
        #expect(future == nil, "nobody can have seen 29")
        let stranger = outbox.replay(to: 42, after: 25, now: 0)
        #expect(stranger == nil, "not attached")
    }

    @Test func theRingKeepsToItsByteBudgetAndOlderResumesGetTheWholeState() throws {
        var configuration = Self.configuration
        configuration.replayLimit = 100
        configuration.replayBytesLimit = 10
        var outbox = Self.attached(configuration: configuration)
        // "e21"…"e28": 3 bytes each, so the newest three fit in 10 bytes.
        for seq in Int64(21)...28 { _ = outbox.enqueue(.broadcast(Self.frame(seq)), after: 11, now: 0) }
        _ = outbox.stored(through: 11, now: 0)
        #expect(outbox.ringCount == 3 && outbox.ringBytes == 9)
        #expect(outbox.replay(to: 1, after: 24, now: 0) == nil, "frame 25 left the ring")
        let replayed = outbox.replay(to: 1, after: 25, now: 0)
        let resumed = try #require(replayed)
        #expect(Self.text(resumed.frames(for: 1)) == ["e26", "e27", "e28"])

        var restored = SessionOutbox(configuration: configuration, storedLsn: 3, publishedSeq: 0)
        restored.restoreRing(Self.ring((1...6).map { (Int64($0), ByteBuffer(string: "e\($0)")) }))
        #expect(restored.ringCount == 5 && restored.ringBytes == 10 && restored.publishedSeq == 6)
        let huge = WireFrame(seq: 29, bytes: ByteBuffer(string: String(repeating: "x", count: 50)), audience: .everyone, logged: true)
        _ = outbox.enqueue(.broadcast(huge), after: 12, now: 0)
        _ = outbox.stored(through: 12, now: 0)
        #expect(outbox.ringCount == 1, "the newest frame stays, however big")
    }

    @Test func aResumeRingKeepsItsNewestFramesWithinItsCountAndItsBytesWhileItFills() {
        var ring = ResumeRing(SessionOutbox.Configuration(replayLimit: 3, replayBytesLimit: 8, backlogLimit: 0, stallTimeoutMs: 0))
        var most = (frames: 0, bytes: 0)
        for seq in Int64(1)...9 {
            ring.append((seq, ByteBuffer(string: "e\(seq)")))
            most = (max(most.frames, ring.frames.count), max(most.bytes, ring.bytes))
        }
        #expect(ring.frames.map(\.seq) == [7, 8, 9])
        #expect(most.frames == 3 && most.bytes == 6, "never more than the limits, at any point")
        ring.append((10, ByteBuffer(string: "a frame far over the byte budget")))
        #expect(ring.frames.map(\.seq) == [10], "the newest frame stays, however big")
        ring.append((11, ByteBuffer(string: "e11")))
        #expect(ring.frames.map(\.seq) == [11] && ring.bytes == 3)
        ring.removeAll()
        #expect(ring.frames.isEmpty && ring.bytes == 0)
    }

    @Test func aRestoredRingServesResumesAfterARestart() throws {
        var outbox = SessionOutbox(configuration: Self.configuration, storedLsn: 3, publishedSeq: 0)
        outbox.restoreRing(Self.ring((1...6).map { (Int64($0), ByteBuffer(string: "e\($0)")) }))
        #expect(outbox.publishedSeq == 6)
        outbox.attach(1, user: Self.alice, syncedSeq: 6)
        let replayed = outbox.replay(to: 1, after: 4, now: 0)
        let actions = try #require(replayed)
        #expect(Self.text(actions.frames(for: 1)) == ["e5", "e6"])
    }

    @Test func aRenumberingSendsWhoeverIsBehindItTheWholeState() throws {
        var outbox = Self.attached()
        for seq in Int64(21)...23 { _ = outbox.enqueue(.broadcast(Self.frame(seq)), after: 11, now: 0) }
        _ = outbox.stored(through: 11, now: 0)
        outbox.renumbered(through: 30)
        #expect(outbox.ringCount == 0 && outbox.ringBytes == 0 && outbox.publishedSeq == 30)
        #expect(outbox.replay(to: 1, after: 23, now: 0) == nil, "frames numbered before the renumbering serve nobody")
        let current = outbox.replay(to: 1, after: 30, now: 0)
        let actions = try #require(current, "a connection at the new number has nothing to miss")
        #expect(actions.frames(for: 1).isEmpty)
        // Frames after it serve resumes again.
        _ = outbox.enqueue(.broadcast(Self.frame(31)), after: 12, now: 0)
        _ = outbox.stored(through: 12, now: 0)
        let later = outbox.replay(to: 2, after: 30, now: 0)
        #expect(Self.text(try #require(later).frames(for: 2)) == ["e31"])
    }

    // MARK: Stalled readers

    @Test func aReaderThatStopsDrainingIsEvictedOnceItFallsTooFarBehind() {
        var outbox = Self.attached()
        _ = outbox.writabilityChanged(2, writable: false, now: 0)
        for seq in Int64(21)...23 {
            _ = outbox.enqueue(.broadcast(Self.frame(seq)), after: 11, now: 0)
        }
        let within = outbox.stored(through: 11, now: 1)
        #expect(within.evicted.isEmpty, "three frames behind is within the limit")
        _ = outbox.enqueue(.broadcast(Self.frame(24)), after: 12, now: 0)
        let beyond = outbox.stored(through: 12, now: 2)
        #expect(beyond.evicted.map(\.connection) == [2])
        #expect(beyond.evicted.map(\.user) == [Self.bob])
        #expect(beyond.closes.contains { $0.connection == 2 && $0.code == .slowReader })
        #expect(Self.text(beyond.frames(for: 1)) == ["e24"], "the others never notice")
        #expect(!outbox.isAttached(2))
    }

    @Test func aReaderThatDrainsAgainStartsItsBacklogOver() {
        var outbox = Self.attached()
        _ = outbox.writabilityChanged(2, writable: false, now: 0)
        for seq in Int64(21)...23 { _ = outbox.enqueue(.broadcast(Self.frame(seq)), after: 10, now: 0) }
        _ = outbox.writabilityChanged(2, writable: true, now: 5)
        _ = outbox.writabilityChanged(2, writable: false, now: 6)
        for seq in Int64(24)...26 { #expect(outbox.enqueue(.broadcast(Self.frame(seq)), after: 10, now: 7).evicted.isEmpty) }
        #expect(outbox.isAttached(2))
    }

    @Test func aReaderStalledLongerThanTheTimeoutIsEvictedByTheClockAlone() {
        var outbox = Self.attached()
        _ = outbox.writabilityChanged(3, writable: false, now: 1_000)
        #expect(outbox.hasStalledConnections)
        #expect(outbox.tick(now: 10_999).evicted.isEmpty)
        let actions = outbox.tick(now: 11_000)
        #expect(actions.evicted.map(\.connection) == [3])
        #expect(actions.closes.map(\.code) == [.slowReader])
        #expect(!outbox.hasStalledConnections)
    }

    @Test func aConnectionStopsCountingAsStalledOnceItDrainsLeavesIsClosedEvictedOrReplaced() {
        // Each way a stalled connection stops being one.
        var drained = Self.attached()
        _ = drained.writabilityChanged(2, writable: false, now: 0)
        _ = drained.writabilityChanged(2, writable: false, now: 1)
        _ = drained.writabilityChanged(2, writable: true, now: 2)
        #expect(!drained.hasStalledConnections)

        var left = Self.attached()
        _ = left.writabilityChanged(2, writable: false, now: 0)
        left.detach(2)
        #expect(!left.hasStalledConnections)

        var closed = Self.attached()
        _ = closed.writabilityChanged(2, writable: false, now: 0)
        _ = closed.enqueue(.close(.user(Self.bob), .forbidden, "removed by the host"), after: 10, now: 0)
        #expect(!closed.hasStalledConnections)

        var evicted = Self.attached()
        _ = evicted.writabilityChanged(2, writable: false, now: 0)
        for seq in Int64(21)...24 { _ = evicted.enqueue(.broadcast(Self.frame(seq)), after: 10, now: 0) }
        #expect(!evicted.isAttached(2))
        #expect(!evicted.hasStalledConnections)

        // A connection attached again under the same id starts out draining.
        var reattached = Self.attached()
        _ = reattached.writabilityChanged(2, writable: false, now: 0)
        reattached.attach(2, user: Self.bob, syncedSeq: 20)
        #expect(!reattached.hasStalledConnections)

        // Sockets report writability to the session asynchronously: a late report for a
        // connection already gone (or never attached) is not a stall to check.
        var late = Self.attached()
        late.detach(2)
        _ = late.writabilityChanged(2, writable: false, now: 0)
        _ = late.writabilityChanged(9, writable: false, now: 0)
        #expect(!late.hasStalledConnections)

        // One of two stalled connections leaving leaves the other to check.
        var two = Self.attached()
        _ = two.writabilityChanged(1, writable: false, now: 0)
        _ = two.writabilityChanged(2, writable: false, now: 0)
        two.detach(2)
        #expect(two.hasStalledConnections)
    }

    @Test func aRelayGoesToTheUsersDrainingSocketsAndNeverCountsTowardsABacklog() {
        var outbox = Self.attached()
        outbox.attach(4, user: Self.alice, syncedSeq: 20)
        let report = ByteBuffer(string: "report")
        let first = outbox.relay(report, to: Self.alice)
        #expect(first.writes.map(\.connection).sorted() == [1, 3, 4], "Alice's sockets, the sender's (3) among them, nobody else's")
        _ = outbox.writabilityChanged(1, writable: false, now: 0)
        for _ in 0..<10 {
            let relayed = outbox.relay(report, to: Self.alice)
            #expect(relayed.writes.map(\.connection).sorted() == [3, 4], "a socket that does not drain is skipped")
        }
        #expect(outbox.tick(now: 1).evicted.isEmpty, "skipped relays are no backlog")
        // Three frames are the backlog limit here: the relays above did not count towards it.
        for seq in Int64(21)...22 { _ = outbox.enqueue(.broadcast(Self.frame(seq)), after: 10, now: 2) }
        #expect(outbox.tick(now: 3).evicted.isEmpty)
        _ = outbox.writabilityChanged(1, writable: true, now: 4)
        #expect(outbox.relay(report, to: Self.alice).writes.map(\.connection).sorted() == [1, 3, 4], "draining again, it gets them again")
    }

    @Test func aReaderThatStopsDrainingIsEvictedOnceItsBacklogPassesItsBytesHoweverFewTheFrames() {
        var configuration = Self.configuration
        configuration.backlogBytesLimit = 1_000
        var outbox = Self.attached(configuration: configuration)
        _ = outbox.writabilityChanged(1, writable: false, now: 0)
        // Whole states asked for again and again: two frames, far fewer than the frame limit.
        let state = ByteBuffer(repeating: UInt8(ascii: "s"), count: 600)
        #expect(outbox.enqueue(.direct(1, state), after: 10, now: 0).evicted.isEmpty, "600 bytes behind is within the limit")
        let beyond = outbox.enqueue(.direct(1, state), after: 10, now: 0)
        #expect(beyond.evicted.map(\.connection) == [1])
        #expect(beyond.closes.contains { $0.connection == 1 && $0.code == .slowReader })
        // Draining again starts the count over.
        _ = outbox.writabilityChanged(3, writable: false, now: 0)
        _ = outbox.enqueue(.direct(3, state), after: 10, now: 0)
        _ = outbox.writabilityChanged(3, writable: true, now: 1)
        _ = outbox.writabilityChanged(3, writable: false, now: 2)
        #expect(outbox.enqueue(.direct(3, state), after: 10, now: 3).evicted.isEmpty)
    }

    @Test func repliesToAStalledReaderCountTowardsItsBacklog() {
        var outbox = Self.attached()
        _ = outbox.writabilityChanged(1, writable: false, now: 0)
        var evicted: [ConnectionID] = []
        for n in 0..<4 {
            evicted += outbox.enqueue(.direct(1, ByteBuffer(string: "r\(n)")), after: 10, now: 0).evicted.map(\.connection)
        }
        #expect(evicted == [1])
    }
}
