import Foundation
import Testing
import JamCore
import JamProtocol

// MARK: Deterministic identifiers

/// `00000000-0000-0000-0000-00000000000N`: user N.
func user(_ n: Int) -> UserID { JamID(String(format: "00000000-0000-0000-0000-%012d", n)) }
/// `00000000-0000-0000-0001-00000000000N`: the item minted for track N.
func itemID(_ n: Int) -> ItemID { JamID(String(format: "00000000-0000-0000-0001-%012d", n)) }
/// Item IDs for tracks `ns`, in that order.
func items(_ ns: Int...) -> [ItemID] { ns.map(itemID) }

let sessionID = JamID("00000000-0000-0000-0002-000000000001")
let host = user(1)
let alice = user(2)
let bob = user(3)
let carol = user(4)
let dave = user(5)
let stranger = user(99)

/// The display name the harness gives each user.
func displayName(_ id: UserID) -> String {
    switch id {
    case host: "Host"
    case alice: "Alice"
    case bob: "Bob"
    case carol: "Carol"
    case dave: "Dave"
    default: "User \(id.rawValue.suffix(4))"
    }
}

/// Track N: a three-minute library song by default.
func track(_ n: Int, durationMs: Int64? = 180_000, source: TrackSource = .library) -> Track {
    Track(id: "track-\(n)", name: "Song \(n)", artist: "Artist \(n % 3)", durationMs: durationMs, source: source)
}

// MARK: Harness

/// A session plus a clock and the log of every event it emitted.
struct Jam {
    static let t0: Millis = 1_000_000

    var state: SessionState
    var now: Millis
    var log: [ServerEnvelope] = []

    /// A session created by `host`, joined by `members` (in order, all at `t0`), everybody connected unless told otherwise.
    init(members: [UserID] = [alice, bob], connected: Bool = true, settings: SessionSettings = SessionSettings(), timing: Timing = Timing(), rules: SessionRules = .openJam) throws(JamError) {
        now = Self.t0
        state = SessionState(
            id: sessionID, joinCode: "ABC234", name: "Test jam", creator: host, creatorName: displayName(host),
            settings: settings, timing: timing, rules: rules, now: now)
        for member in members { try apply(.join(displayName: displayName(member)), by: member) }
        if connected {
            for member in [host] + members { try apply(.connect, by: member) }
        }
    }

    /// Applies `command` at the current time and logs its events.
    @discardableResult
    mutating func apply(_ command: Command, by user: UserID) throws(JamError) -> Outcome {
        let outcome = try state.apply(command, by: user, at: now)
        log += outcome.events
        return outcome
    }

    /// Adds track N as item N with nonce "nonce-N".
    @discardableResult
    mutating func add(_ n: Int, by user: UserID, durationMs: Int64? = 180_000) throws(JamError) -> Outcome {
        try apply(.add(track: track(n, durationMs: durationMs), nonce: "nonce-\(n)", itemId: itemID(n)), by: user)
    }

    /// Votes on item N.
    @discardableResult
    mutating func vote(_ n: Int, _ value: Int, by user: UserID) throws(JamError) -> Outcome {
        try apply(.vote(itemId: itemID(n), value: value), by: user)
    }

    /// Moves the clock to `t` and lets the timeline catch up.
    @discardableResult
    mutating func advance(to t: Millis) -> [ServerEnvelope] {
        now = t
        let events = state.advance(to: t)
        log += events
        return events
    }

    /// Moves the clock forward by `ms`.
    @discardableResult
    mutating func wait(_ ms: Millis) -> [ServerEnvelope] { advance(to: now + ms) }

    /// Adds track N when nothing plays and moves the clock to its start, so it plays from 0 at `now`.
    mutating func startPlaying(_ n: Int, by user: UserID = host, durationMs: Int64? = 180_000) throws(JamError) {
        try add(n, by: user, durationMs: durationMs)
        let start = try requireCurrent().anchorMs
        advance(to: start)
    }

    /// Moves the clock to the next deadline, if there is one.
    @discardableResult
    mutating func advanceToDeadline() -> [ServerEnvelope] {
        guard let deadline = state.nextDeadline() else { return [] }
        return advance(to: max(now, deadline))
    }

    func requireCurrent() throws(JamError) -> CurrentItem {
        guard let current = state.current else { throw JamError(.conflict, "test expected a current item") }
        return current
    }

    /// Expects `command` to fail with `code` and to leave the whole state exactly as it was.
    mutating func reject(_ command: Command, by user: UserID, _ code: ErrorCode, sourceLocation: SourceLocation = #_sourceLocation) {
        let before = state
        do {
            let outcome = try state.apply(command, by: user, at: now)
            Issue.record("expected \(code) but the command succeeded with \(outcome.events.types)", sourceLocation: sourceLocation)
            state = before
        } catch {
            #expect(error.code == code, "\(error.message)", sourceLocation: sourceLocation)
            #expect(state == before, "a failed command changed the state", sourceLocation: sourceLocation)
        }
    }

    /// The current queue order.
    var order: [ItemID] { state.queueOrder() }
    /// The reasons shown, in queue order.
    var reasons: [String] { state.rankedQueue().map(\.reason) }
}

// MARK: Event helpers

extension Array where Element == ServerEnvelope {
    var types: [ServerEventType] { map(\.event.type) }
    var playPrepares: [PlayPrepare] { compactMap(\.event.playPrepare) }
    var playCommits: [PlayCommit] { compactMap(\.event.playCommit) }
}

extension ServerEvent {
    var playPrepare: PlayPrepare? { if case .playPrepare(let v) = self { v } else { nil } }
    var playCommit: PlayCommit? { if case .playCommit(let v) = self { v } else { nil } }
    var stopped: PlaybackStopped? { if case .stopped(let v) = self { v } else { nil } }
    var queueUpdate: QueueUpdate? { if case .queueUpdate(let v) = self { v } else { nil } }
    var queueItemAdded: QueueItemAdded? { if case .queueItemAdded(let v) = self { v } else { nil } }
    var queueItemRemoved: QueueItemRemoved? { if case .queueItemRemoved(let v) = self { v } else { nil } }
    var votesUpdate: VotesUpdate? { if case .votesUpdate(let v) = self { v } else { nil } }
    var skipRequests: SkipRequestsUpdate? { if case .skipRequests(let v) = self { v } else { nil } }
    var memberJoined: Member? { if case .memberJoined(let v) = self { v } else { nil } }
    var memberUpdated: Member? { if case .memberUpdated(let v) = self { v } else { nil } }
    var memberLeft: MemberLeft? { if case .memberLeft(let v) = self { v } else { nil } }
    var sessionUpdated: SessionUpdated? { if case .sessionUpdated(let v) = self { v } else { nil } }
    var sessionEnded: SessionEnded? { if case .sessionEnded(let v) = self { v } else { nil } }
    var pause: TimelineChange? { if case .pause(let v) = self { v } else { nil } }
    var resume: TimelineChange? { if case .resume(let v) = self { v } else { nil } }
    var seek: TimelineChange? { if case .seek(let v) = self { v } else { nil } }
    var deviceDelay: DeviceDelay? { if case .deviceDelay(let v) = self { v } else { nil } }
}

// MARK: Seeded randomness

/// Property runs draw from JamProtocol's `SeededRandom`, so each is reproducible from its seed.
extension SeededRandom {

    /// A value in `0..<bound` (modulo bias is irrelevant for tests, and this stays stable across toolchains).
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    /// A value in `range`.
    mutating func int(_ range: ClosedRange<Int>) -> Int { range.lowerBound + below(range.count) }

    /// True with probability `percent` / 100.
    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }

    /// A random element.
    mutating func pick<T>(_ values: [T]) -> T { values[below(values.count)] }
}
