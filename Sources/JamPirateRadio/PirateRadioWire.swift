import JamCore
import JamProtocol
import JamServer
import NIOCore

extension PirateRadio.ClientMessage: DecodedMessage {}

/// The PirateRadio protocol as one session speaks it: DJ messages are relayed as sent,
/// structural changes (skip, auto-advance, a new DJ) go out as a full `stateSync`, `seq`
/// counts the frames of the current epoch, and nothing is kept for resumes (the protocol has
/// none).
struct PirateRadioWire: SessionWire {
    private var sequence: Int64 = 0
    private var sequenceEpoch: Int64

    init(epoch: Int64) {
        sequenceEpoch = epoch
    }

    var socketsAreMembership: Bool { true }

    var replacedSocketClose: (code: UInt16, reason: String)? {
        (PirateRadio.CloseCode.replaced, "replaced by a newer connection")
    }

    /// The frame counter of the current epoch, as the snapshot's `sequence`.
    func currentSequence(epoch: Int64) -> Int64 {
        epoch == sequenceEpoch ? sequence : 0
    }

    private mutating func nextSequence(epoch: Int64) -> Int64 {
        if epoch != sequenceEpoch {
            sequenceEpoch = epoch
            sequence = 0
        }
        sequence += 1
        return sequence
    }

    mutating func frames(for events: [ServerEnvelope], cause: WireCause, state: SessionState, now: Millis) -> [WireFrame] {
        guard let last = events.last?.seq else { return [] }
        var frames: [WireFrame] = []
        func add(_ type: String, _ data: String, _ audience: Audience) {
            let seq = nextSequence(epoch: state.epoch)
            let text = PirateRadio.frame(type: type, data: data, epoch: state.epoch, seq: seq, timestamp: now)
            frames.append(WireFrame(seq: last, bytes: ByteBuffer(string: text), audience: audience, logged: false))
        }
        func addStateSync() {
            let seq = nextSequence(epoch: state.epoch)
            let text = PirateRadio.frame(type: "stateSync", data: PirateRadio.json(snapshot(state, sequence: seq)), epoch: state.epoch, seq: seq, timestamp: now)
            frames.append(WireFrame(seq: last, bytes: ByteBuffer(string: text), audience: .everyone, logged: false))
        }
        let types = Set(events.map(\.event.type))
        switch cause {
        case .tick:
            if types.contains(.playPrepare) || types.contains(.pause) { addStateSync() }
        case .command(let command, let user, let connection, let relay):
            let others: Audience = connection.map { .everyoneExcept($0) } ?? .everyone
            switch command {
            case .djPrepare:
                add("playPrepare", relay ?? "{}", others)
            case .djTimeline(let change):
                let type = switch change {
                case .commit: "playCommit"
                case .pause: "pause"
                case .resume: "resume"
                case .seek: "seek"
                }
                add(type, relay ?? "{}", others)
            case .skip:
                addStateSync()
            case .add, .remove:
                if types.contains(.queueUpdate) {
                    add("queueUpdate", PirateRadio.json(PirateRadio.QueueUpdate(queue: queue(state))), .everyone)
                }
            case .join:
                if types.contains(.memberJoined), let member = state.member(user) {
                    add("memberJoined", PirateRadio.json(PirateRadio.MemberEvent(userId: user.rawValue, displayName: member.displayName)), others)
                }
            case .leave:
                guard types.contains(.memberLeft) else { break }
                add("memberLeft", PirateRadio.json(PirateRadio.MemberEvent(userId: user.rawValue)), .everyone)
                let newDJ = events.contains { envelope in
                    if case .memberUpdated(let member) = envelope.event { return member.role == .host }
                    return false
                }
                if newDJ { addStateSync() }
            default:
                break
            }
        }
        return frames
    }

    func request(for message: any DecodedMessage, from user: UserID, state: SessionState, ids: any IDGenerator, now: Millis) -> SessionRequest {
        guard let message = message as? PirateRadio.ClientMessage else {
            return .refuse(JamError(.internal, "the server could not read the message"), replyId: nil)
        }
        let command: Command
        switch message.body {
        case .ping(let ping):
            return .ping(clientSendTime: ping.clientSendTime)
        case .driftReport:
            return .toHost(ByteBuffer(string: direct("driftReport", driftReport(message.rawData, from: user), state: state, now: now)))
        case .playPrepare(let prepare):
            command = .djPrepare(track: prepare.track.openJam, itemId: ids.next())
        case .playCommit(let data):
            command = .djTimeline(.commit(positionMs: Self.millis(data.positionMs), at: Self.millis(data.ntpTimestamp) ?? now))
        case .pause(let data):
            command = .djTimeline(.pause(positionMs: Self.millis(data.positionMs), at: Self.millis(data.ntpTimestamp) ?? now))
        case .resume(let data):
            let at = Self.millis(data.executionTime) ?? Self.millis(data.ntpTimestamp) ?? now
            command = .djTimeline(.resume(positionMs: Self.millis(data.positionMs), at: at))
        case .seek(let data):
            command = .djTimeline(.seek(positionMs: Self.millis(data.positionMs), at: Self.millis(data.ntpTimestamp) ?? now))
        case .skip:
            // PirateRadio's skip with nothing queued is a no-op, not an error.
            guard !state.queue.isEmpty || user != state.hostId else { return .ignore }
            command = .skip
        case .addToQueue(let add):
            command = .add(track: add.track.openJam, nonce: add.nonce, itemId: ids.next())
        case .removeFromQueue(let remove):
            guard let item = state.rankedQueue().first(where: { $0.item.track.id == remove.trackId }) else {
                return .refuse(JamError(.notFound, "no queued track \(remove.trackId)"), replyId: nil)
            }
            // PirateRadio lets only the DJ remove, even the adder.
            guard user == state.hostId else { return .refuse(JamError(.forbidden, "only the DJ may remove tracks"), replyId: nil) }
            command = .remove(itemId: item.item.id)
        }
        return .command(command, replyId: nil, relay: message.rawData)
    }

    /// A member's drift report as the DJ receives it: naming the member.
    private func driftReport(_ rawData: String, from user: UserID) -> String {
        guard rawData.hasPrefix("{"), !rawData.contains("\"userId\"") else { return rawData }
        let member = PirateRadio.json(user.rawValue)
        return rawData == "{}" ? "{\"userId\":\(member)}" : "{\"userId\":\(member)," + rawData.dropFirst()
    }

    func stateSync(_ state: SessionState, for user: UserID, now: Millis) -> ByteBuffer {
        let sequence = currentSequence(epoch: state.epoch)
        let text = PirateRadio.frame(type: "stateSync", data: PirateRadio.json(snapshot(state, sequence: sequence)), epoch: state.epoch, seq: sequence, timestamp: now)
        return ByteBuffer(string: text)
    }

    func ack(_ ack: Ack, state: SessionState, now: Millis) -> ByteBuffer? { nil }

    func error(_ error: JamError, id: String?, state: SessionState, now: Millis) -> ByteBuffer {
        ByteBuffer(string: direct("error", PirateRadio.json(PirateRadio.ErrorMessage(message: error.message)), state: state, now: now))
    }

    func pong(clientSendTime: Double, receivedAt: Double, sentAt: Double, state: SessionState, now: Millis) -> ByteBuffer {
        let pong = PirateRadio.Pong(clientSendTime: clientSendTime, serverTime: Int64(sentAt.rounded()))
        return ByteBuffer(string: direct("pong", PirateRadio.json(pong), state: state, now: now))
    }

    /// A frame for one connection: it carries the current `seq` without advancing it.
    func direct(_ type: String, _ data: String, state: SessionState, now: Millis) -> String {
        PirateRadio.frame(type: type, data: data, epoch: state.epoch, seq: currentSequence(epoch: state.epoch), timestamp: now)
    }

    /// The session as PirateRadio shows it.
    func snapshot(_ state: SessionState, sequence: Int64) -> PirateRadio.Snapshot {
        let current = state.current
        return PirateRadio.Snapshot(
            id: state.id.rawValue, joinCode: state.joinCode, creatorId: state.creatorId.rawValue, djUserId: state.hostId.rawValue,
            members: state.members.map { PirateRadio.Member(userId: $0.userId.rawValue, displayName: $0.displayName) },
            epoch: state.epoch, sequence: sequence, currentTrack: current.map { PirateRadio.Track($0.item.track) },
            isPlaying: current?.state == .playing, positionMs: current?.positionMs ?? 0,
            positionTimestamp: current?.anchorMs ?? 0, queue: queue(state))
    }

    private func queue(_ state: SessionState) -> [PirateRadio.Track] {
        state.rankedQueue().map { PirateRadio.Track($0.item.track) }
    }

    static func millis(_ value: Double) -> Int64 {
        guard value.isFinite else { return 0 }
        return Int64(value.rounded())
    }

    static func millis(_ value: Double?) -> Int64? {
        value.map(millis)
    }
}
