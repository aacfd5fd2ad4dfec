import Foundation
import JamProtocol
import Synchronization

@testable import JamClient

/// A virtual monotonic clock the test moves by hand (or a sleeper moves).
final class ManualClock: MonotonicClock {
    private let value: Mutex<Double>

    init(_ start: Double = 1_000_000) { value = Mutex(start) }

    func now() -> Double { value.withLock { $0 } }

    func advance(by ms: Double) { value.withLock { $0 += max(0, ms) } }

    func set(_ t: Double) { value.withLock { $0 = max($0, t) } }
}

/// A sleeper that sleeps in virtual time: it advances the clock at once.
/// Throws `CancellationError` instead of moving past `until` (to end a loop).
struct AdvancingSleeper: Sleeper {
    let clock: ManualClock
    var until: Double = .infinity

    func sleep(ms: Double) async throws {
        try Task.checkCancellation()
        let target = clock.now() + max(0, ms)
        if target > until { throw CancellationError() }
        clock.set(target)
    }
}

/// A network path between the device and a server whose clock runs at
/// `server(t) = t + offset + drift·t` (t = local ms): one-way delays are
/// `base ± jitter` (uniform), drawn from a seeded generator. With `inOrder` each
/// direction delivers in order, as TCP does: a message never arrives before the one
/// sent ahead of it, so one late message holds up those close behind it.
struct PathModel: Sendable {
    var offsetMs: Double = 123_456.7
    var driftPpm: Double = 50
    var upMs: Double = 40
    var upJitterMs: Double = 20
    var downMs: Double = 40
    var downJitterMs: Double = 20
    var serverProcessingMs: Double = 0.2
    var inOrder = false
    private var lastUpArrival = -Double.infinity
    private var lastDownArrival = -Double.infinity

    init(
        offsetMs: Double = 123_456.7, driftPpm: Double = 50, upMs: Double = 40, upJitterMs: Double = 20, downMs: Double = 40,
        downJitterMs: Double = 20, serverProcessingMs: Double = 0.2, inOrder: Bool = false
    ) {
        (self.offsetMs, self.driftPpm, self.upMs, self.upJitterMs) = (offsetMs, driftPpm, upMs, upJitterMs)
        (self.downMs, self.downJitterMs, self.serverProcessingMs, self.inOrder) = (downMs, downJitterMs, serverProcessingMs, inOrder)
    }

    func trueOffset(atLocal t: Double) -> Double { offsetMs + driftPpm * 1e-6 * t }

    func serverTime(atLocal t: Double) -> Double { t + trueOffset(atLocal: t) }

    /// The pong for `ping` and the local instant it arrives.
    mutating func answer(_ ping: Ping, rng: inout SeededRandom) -> (pong: Pong, arrival: Double) {
        let up = upMs + Double.random(in: -upJitterMs...upJitterMs, using: &rng)
        let down = downMs + Double.random(in: -downJitterMs...downJitterMs, using: &rng)
        var received = ping.clientSendTime + max(0, up)
        if inOrder { received = max(received, lastUpArrival) }
        lastUpArrival = received
        let sent = received + serverProcessingMs
        var arrival = sent + max(0, down)
        if inOrder { arrival = max(arrival, lastDownArrival) }
        lastDownArrival = arrival
        let pong = Pong(
            clientSendTime: ping.clientSendTime, serverReceiveTime: serverTime(atLocal: received),
            serverSendTime: serverTime(atLocal: sent))
        return (pong, arrival)
    }
}

/// Carries pings over a `PathModel` in virtual time and hands the pongs to a
/// `ClockSync` when the clock reaches their arrival. After every step it records
/// the true offset error and the reported bound.
actor VirtualNetwork {
    struct Check: Sendable {
        var at: Double
        var errorMs: Double
        var boundMs: Double
        var halfRoundTripMs: Double
    }

    let clock: ManualClock
    let sync: ClockSync
    var path: PathModel
    private var rng: SeededRandom
    private var inFlight: [(arrival: Double, pong: Pong)] = []
    private(set) var pingsSent = 0
    private(set) var sendTimes: [Double] = []
    private(set) var checks: [Check] = []
    var recordChecks = true
    private var scheduled: [(at: Double, action: @Sendable () async -> Void)] = []

    init(clock: ManualClock, sync: ClockSync, path: PathModel, seed: UInt64) {
        self.clock = clock
        self.sync = sync
        self.path = path
        self.rng = SeededRandom(seed: seed)
    }

    func setPath(_ path: PathModel) { self.path = path }

    func setRecordChecks(_ on: Bool) { recordChecks = on }

    /// Runs `action` when the clock reaches `at` (from inside `advance`).
    func schedule(at: Double, _ action: @escaping @Sendable () async -> Void) {
        scheduled.append((at, action))
    }

    /// Drops every pong still on its way (the connection went down).
    func dropInFlight() { inFlight.removeAll() }

    func send(_ ping: Ping) {
        pingsSent += 1
        sendTimes.append(ping.clientSendTime)
        let answer = path.answer(ping, rng: &rng)
        inFlight.append((answer.arrival, answer.pong))
    }

    /// Moves the clock to `t`, delivering the pongs that arrive by then in order.
    func advance(to t: Double) async {
        while let index = scheduled.firstIndex(where: { $0.at <= t }) {
            let due = scheduled.remove(at: index)
            await advance(to: due.at)
            await due.action()
        }
        inFlight.sort { $0.arrival < $1.arrival }
        while let first = inFlight.first, first.arrival <= t {
            inFlight.removeFirst()
            clock.set(first.arrival)
            await sync.record(first.pong, receivedAt: first.arrival)
        }
        clock.set(t)
        if recordChecks, let estimate = await sync.estimate {
            let now = clock.now()
            checks.append(
                Check(
                    at: now, errorMs: estimate.offset(atLocal: now) - path.trueOffset(atLocal: now),
                    boundMs: estimate.errorBound(atLocal: now), halfRoundTripMs: estimate.halfRoundTripBound(atLocal: now)))
        }
    }

    func advance(by ms: Double) async { await advance(to: clock.now() + ms) }

    /// One burst by hand: `count` pings `spacing` apart, then waits until all answers are in.
    func burst(count: Int = 8, spacing: Double = 25) async {
        for index in 0..<count {
            if index > 0 { await advance(by: spacing) }
            send(await sync.makePing())
        }
        await advance(by: 500)
    }
}

/// A sleeper for `ClockSync.run` over a `VirtualNetwork`.
struct NetworkSleeper: Sleeper {
    let network: VirtualNetwork
    let clock: ManualClock
    var until: Double

    func sleep(ms: Double) async throws {
        try Task.checkCancellation()
        let target = clock.now() + max(0, ms)
        if target > until { throw CancellationError() }
        await network.advance(to: target)
    }
}

/// Percentile of already sorted values (nearest rank).
func percentile(_ sorted: [Double], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    let rank = Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1
    return sorted[min(sorted.count - 1, max(0, rank))]
}

/// Commands an engine sent, with the local instant.
final class SentLog: Sendable {
    private let entries = Mutex<[(command: ClientCommand, at: Double)]>([])
    let clock: ManualClock

    init(clock: ManualClock) { self.clock = clock }

    func append(_ command: ClientCommand) {
        let now = clock.now()
        entries.withLock { $0.append((command, now)) }
    }

    var all: [(command: ClientCommand, at: Double)] { entries.withLock { $0 } }

    var readies: [(epoch: Int64, at: Double)] {
        all.compactMap { entry in
            if case .ready(let ready) = entry.command { return (ready.epoch, entry.at) }
            return nil
        }
    }

    var reports: [(report: SyncReport, at: Double)] {
        all.compactMap { entry in
            if case .syncReport(let report) = entry.command { return (report, entry.at) }
            return nil
        }
    }
}

// MARK: - Fixtures

enum Fixture {
    static let host = Member(userId: "host", displayName: "Host", role: .host, connected: true)

    static func track(_ id: String, durationMs: Int64? = 240_000) -> Track {
        Track(id: id, name: "Song \(id)", artist: "Artist", durationMs: durationMs, source: .library)
    }

    static func item(_ id: String, durationMs: Int64? = 240_000) -> QueueItem {
        QueueItem(
            id: ItemID("item-\(id)"), track: track(id, durationMs: durationMs), addedBy: host, addedAt: 0, score: 0,
            reason: "")
    }

    static func envelope(_ event: ServerEvent, epoch: Int64 = 0, seq: Int64 = 0) -> ServerEnvelope {
        ServerEnvelope(event: event, epoch: epoch, seq: seq, timestamp: 0)
    }

    static func view(nowPlaying: NowPlaying?, upNext: NowPlaying? = nil, deviceDelays: [DeviceDelay]? = nil) -> SessionView {
        SessionView(
            session: SessionInfo(
                id: "session", joinCode: "ABCDEF", name: "Jam", hostId: "host", hostDisplayName: "Host",
                settings: SessionSettings(), createdAt: 0),
            members: [host], nowPlaying: nowPlaying, queue: [], myVotes: [:],
            skipRequests: SkipRequestsView(count: 0, needed: 1, mine: false), history: [], upNext: upNext, deviceDelays: deviceDelays)
    }
}
