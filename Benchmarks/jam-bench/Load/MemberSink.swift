import Foundation
import JamClient
import JamPirateRadioWire
import JamProtocol
import NIOCore
import Synchronization

/// What a load phase gathered from one member's socket.
struct MemberPhaseData: Sendable {
    let session: Int
    /// Broadcast frames received: OpenJam `seq`, or for PirateRadio the index of the queue
    /// update since the socket opened; with the receive instant (ns).
    var receipts: [(key: Int64, at: UInt64)] = []
    /// Commands this member sent: OpenJam, answered ones as (ack seq, intended send instant).
    var acks: [(seq: Int64, sent: UInt64)] = []
    /// PirateRadio DJ: intended send instants, in order (the n-th queue update answers the n-th).
    var sends: [UInt64] = []
    var commands = 0
    var unanswered = 0
    var ackLatency = Distribution()
    /// How late the load client sent, against the open-loop schedule.
    var sendLag = Distribution()
    var bytes = 0
    var gaps = 0
    var duplicates = 0
    /// OpenJam: the last broadcast seq; PirateRadio: queue updates since the socket opened.
    var last: Int64 = -1
    /// `last` when the phase began: frames up to it belong to earlier phases.
    var startLast: Int64 = -1
    /// PirateRadio DJ: commands sent before this phase, and in all by its end.
    var sendsBefore = 0
    var sendsTotal = 0
    var errors: [String] = []
    var closed: String?
}

/// How the load speaks to the server.
enum LoadDialect: Sendable {
    /// OpenJam commands with ids, answered by acks that carry the session's seq.
    case openjam(votable: [String])
    /// PirateRadio: only the DJ sends (adds and DJ removes); every command yields one queue update.
    case pirateRadio
    /// The echo server: OpenJam frames, every command one event and an ack.
    case echo
}

/// One member's socket in a load run: checks every broadcast frame arrives once and in
/// order, and, when it sends, sends on an open-loop Poisson schedule.
///
/// `@unchecked Sendable`: every method runs on the socket's event loop (frames arrive there,
/// sending is scheduled there, phase data is taken with `eventLoop.submit`), so the state
/// needs no lock; the type crosses threads only as a reference handed to that loop.
final class MemberSink: FrameSink, @unchecked Sendable {
    let session: Int
    let member: Int
    let dialect: LoadDialect
    private(set) var socket: LoadSocket?
    private var data: MemberPhaseData
    private var pending: [String: (sent: UInt64, add: Bool)] = [:]
    private var recording = false
    private var synced = false
    private var random: SeededRandom
    private var commandCounter = 0
    private var votes: [Int: Int] = [:]
    private var ownItems: [String] = []
    private var pirateQueue: [String] = []
    private var sendingUntil: NIODeadline?
    private var sentTotal = 0
    private let voteShare: Double

    /// Creates the sink of member `member` of session `session`.
    init(session: Int, member: Int, dialect: LoadDialect, voteShare: Double, seed: UInt64) {
        self.session = session
        self.member = member
        self.dialect = dialect
        self.voteShare = voteShare
        self.random = SeededRandom(seed: seed)
        self.data = MemberPhaseData(session: session)
    }

    /// The socket, once open (set on its loop).
    func attach(_ socket: LoadSocket) {
        self.socket = socket
        loop.withLock { $0 = socket.eventLoop }
    }

    /// The loop this sink lives on, once attached; readable from any thread.
    var loopHint: (any EventLoop)? { loop.withLock { $0 } }
    private let loop = Mutex<(any EventLoop)?>(nil)

    /// True once the connection's snapshot (`stateSync`) arrived.
    var isSynced: Bool { synced }

    /// Why the socket closed, once it has.
    var closedReason: String? { data.closed }

    /// Commands sent and not yet answered.
    var unansweredCount: Int { pending.count }

    /// Where a member stands while a phase drains.
    struct Progress: Sendable {
        let session: Int
        /// The last event received (OpenJam seq; PirateRadio queue updates so far).
        let last: Int64
        /// The last event this member's commands are known to have caused.
        let target: Int64
        let unanswered: Int
    }

    /// This member's progress.
    var progress: Progress {
        let target: Int64 = switch dialect {
        case .pirateRadio: Int64(sentTotal)
        case .openjam, .echo: data.acks.map(\.seq).max() ?? -1
        }
        return Progress(session: session, last: data.last, target: target, unanswered: pending.count)
    }

    // MARK: Receiving

    /// Checks order and continuity, records receipts and answers.
    func text(_ buffer: ByteBuffer, receivedAt: UInt64) {
        let pirate = if case .pirateRadio = dialect { true } else { false }
        guard let envelope = FrameScan.envelope(buffer, typeFirst: pirate) else {
            data.errors.append("a frame that is not an envelope: \(String(buffer: buffer).prefix(120))")
            return
        }
        data.bytes += buffer.readableBytes
        switch envelope.type {
        case "ack":
            guard let id = FrameScan.commandId(buffer), let command = pending.removeValue(forKey: id) else { return }
            data.acks.append((envelope.seq, command.sent))
            data.ackLatency.record(Double(receivedAt &- command.sent) / 1_000_000)
            if command.add, let item = FrameScan.itemId(buffer) { ownItems.append(item) }
            if closedLoop, let until = sendingUntil, NIODeadline.now() < until { fire(intended: MonoTime.nanos()) }
        case "error":
            if let id = FrameScan.commandId(buffer) { pending[id] = nil }
            data.errors.append(String(buffer: buffer).prefix(300).description)
        case "pong":
            break
        case "stateSync":
            synced = true
            if !pirate || data.last < 0 { data.last = pirate ? 0 : envelope.seq }
            if pirate { pirateSeq = envelope.seq }
        default:
            if pirate {
                checkPirateSeq(envelope.seq)
                guard PirateRadio.ServerType(rawValue: envelope.type) == .queueUpdate else { return }
                if recording { data.receipts.append((data.last, receivedAt)) }
                data.last += 1
            } else {
                // A direct or passing frame keeps the seq: neither a gap nor a delivery. An
                // unknown type is counted as an event, so a new one cannot hide a loss.
                guard ServerEventType(rawValue: envelope.type)?.advancesSeq ?? true else { return }
                if data.last >= 0 {
                    if envelope.seq <= data.last {
                        data.duplicates += 1
                        return
                    }
                    if envelope.seq > data.last + 1 { data.gaps += Int(envelope.seq - data.last - 1) }
                }
                data.last = envelope.seq
                if recording { data.receipts.append((envelope.seq, receivedAt)) }
            }
        }
    }

    private var pirateSeq: Int64 = -1

    /// PirateRadio counts broadcast frames and opened sockets, setting the count to 0 only when a
    /// skip or auto-advance starts a track (the load does neither), and a frame for "everyone
    /// but the sender" (a socket that opened, a relay) still counts for the one left out,
    /// so a jump is no loss: losses are judged by the queue updates, one per DJ command.
    private func checkPirateSeq(_ seq: Int64) {
        if pirateSeq >= 0, seq <= pirateSeq { data.duplicates += 1 }
        pirateSeq = max(pirateSeq, seq)
    }

    /// Remembers that (and how) the socket closed: during a run, a failure.
    func closed(code: UInt16?) {
        data.closed = "closed with \(code.map(String.init) ?? "no close frame")"
    }

    // MARK: Phases

    /// Starts recording a phase: per-phase figures start from zero, continuity carries on.
    func beginPhase() {
        let last = data.last
        let closed = data.closed
        data = MemberPhaseData(session: session)
        data.last = last
        data.startLast = last
        data.sendsBefore = sentTotal
        data.closed = closed
        recording = true
    }

    /// Ends the phase and hands over what it gathered.
    func endPhase() -> MemberPhaseData {
        recording = false
        sendingUntil = nil
        var taken = data
        taken.unanswered = pending.count
        taken.sendsTotal = sentTotal
        data.receipts = []
        data.acks = []
        data.sends = []
        return taken
    }

    // MARK: Sending

    /// Sends `rate` commands a second, on a Poisson schedule, until `deadline`.
    func startSending(rate: Double, until deadline: NIODeadline) {
        guard rate > 0, let socket else { return }
        sendingUntil = deadline
        scheduleNext(after: NIODeadline.now(), rate: rate, on: socket.eventLoop)
    }

    /// Schedules the next command an exponential gap after the previous intended instant.
    private func scheduleNext(after previous: NIODeadline, rate: Double, on loop: any EventLoop) {
        guard let until = sendingUntil else { return }
        let gapSeconds = -log(Double.random(in: Double.ulpOfOne..<1, using: &random)) / rate
        let next = previous + .nanoseconds(Int64(gapSeconds * 1_000_000_000))
        guard next < until else { return }
        loop.assumeIsolated().scheduleTask(deadline: next) {
            // The intended instant, not the actual one: a late sender must not hide latency.
            self.fire(intended: next.uptimeNanoseconds)
            self.scheduleNext(after: next, rate: rate, on: loop)
        }
    }

    /// Sends one command now (also used by the closed-loop durability benchmark).
    func fire(intended: UInt64) {
        guard let socket, recording else { return }
        data.sendLag.record(Double(MonoTime.nanos() &- intended) / 1_000_000)
        data.commands += 1
        commandCounter += 1
        let id = "c\(session).\(member).\(commandCounter)"
        switch dialect {
        case .openjam(let votable) where !votable.isEmpty && Double.random(in: 0..<1, using: &random) < voteShare:
            let index = Int.random(in: 0..<votable.count, using: &random)
            // Always a change (0 → 1 → −1 → 0), so every vote yields an event.
            let value = [0: 1, 1: -1, -1: 0][votes[index] ?? 0] ?? 1
            votes[index] = value
            pending[id] = (intended, false)
            socket.send(#"{"type":"vote","id":"\#(id)","data":{"itemId":"\#(votable[index])","value":\#(value)}}"#)
        case .openjam, .echo:
            if ownItems.count >= 2 {
                let item = ownItems.removeFirst()
                pending[id] = (intended, false)
                socket.send(#"{"type":"removeFromQueue","id":"\#(id)","data":{"itemId":"\#(item)"}}"#)
            } else {
                pending[id] = (intended, true)
                let track = #"{"id":"t-\#(id)","name":"Load \#(id)","artist":"jam-bench","durationMs":180000,"source":"external"}"#
                socket.send(#"{"type":"addToQueue","id":"\#(id)","data":{"track":\#(track),"nonce":"n-\#(id)"}}"#)
            }
        case .pirateRadio:
            data.sends.append(intended)
            sentTotal += 1
            if pirateQueue.count >= 10 {
                let trackId = pirateQueue.removeFirst()
                socket.send(#"{"type":"removeFromQueue","data":{"trackId":"\#(trackId)"}}"#)
            } else {
                let trackId = "t-\(id)"
                pirateQueue.append(trackId)
                let track = #"{"id":"\#(trackId)","name":"Load \#(id)","artist":"jam-bench","durationMs":180000}"#
                socket.send(#"{"type":"addToQueue","data":{"track":\#(track),"nonce":"n-\#(id)"}}"#)
            }
        }
    }

    /// Sends one command, and the next as soon as its ack arrives, until `deadline`: the
    /// closed loop of the durability benchmark (one command in flight per member).
    func startClosedLoop(until deadline: NIODeadline) {
        closedLoop = true
        sendingUntil = deadline
        fire(intended: MonoTime.nanos())
    }

    private var closedLoop = false
}
