import JamCore
import JamProtocol

/// The PirateRadio protocol: DJ messages are relayed as sent, structural changes
/// (skip, auto-advance, a new DJ) go out as a full `stateSync`, and `seq` counts
/// the frames of the current epoch.
struct PirateRadioWire: SessionWire {
    private var sequence: Int64 = 0
    private var sequenceEpoch: Int64

    init(epoch: Int64) {
        sequenceEpoch = epoch
    }

    var socketsAreMembership: Bool { true }

    /// The frame counter of the current epoch, as the snapshot's `sequence`.
    mutating func currentSequence(epoch: Int64) -> Int64 {
        if epoch != sequenceEpoch {
            sequenceEpoch = epoch
            sequence = 0
        }
        return sequence
    }

    private mutating func nextSequence(epoch: Int64) -> Int64 {
        _ = currentSequence(epoch: epoch)
        sequence += 1
        return sequence
    }

    mutating func frames(for events: [ServerEnvelope], cause: WireCause, state: SessionState, now: Millis) -> [WireFrame] {
        guard let last = events.last?.seq else { return [] }
        var frames: [WireFrame] = []
        func add(_ type: String, _ data: String, _ audience: Audience) {
            let seq = nextSequence(epoch: state.epoch)
            frames.append(WireFrame(seq: last, frame: PirateRadio.frame(type: type, data: data, epoch: state.epoch, seq: seq, timestamp: now), audience: audience, logged: false))
        }
        func addStateSync() {
            let seq = nextSequence(epoch: state.epoch)
            let data = PirateRadio.json(snapshot(state, sequence: seq))
            frames.append(WireFrame(seq: last, frame: PirateRadio.frame(type: "stateSync", data: data, epoch: state.epoch, seq: seq, timestamp: now), audience: .everyone, logged: false))
        }
        let types = Set(events.map(\.event.type))
        switch cause {
        case .tick:
            if types.contains(.playPrepare) || types.contains(.pause) { addStateSync() }
        case .command(let command, let user, let connection, let relay):
            let others: Audience = connection.map { .everyoneExcept(connection: $0) } ?? .everyone
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

    func stateSync(_ state: SessionState, for user: UserID, now: Millis) -> String {
        var copy = self
        let sequence = copy.currentSequence(epoch: state.epoch)
        return PirateRadio.frame(type: "stateSync", data: PirateRadio.json(snapshot(state, sequence: sequence)), epoch: state.epoch, seq: sequence, timestamp: now)
    }

    func ack(_ ack: Ack, state: SessionState, now: Millis) -> String? { nil }

    func error(_ error: JamError, id: String?, state: SessionState, now: Millis) -> String {
        direct("error", PirateRadio.json(PirateRadio.ErrorMessage(message: error.message)), state: state, now: now)
    }

    func pong(clientSendTime: Double, receivedAt: Double, sentAt: Double, state: SessionState, now: Millis) -> String {
        direct("pong", PirateRadio.json(PirateRadio.Pong(clientSendTime: clientSendTime, serverTime: Int64(sentAt.rounded()))), state: state, now: now)
    }

    /// A frame for one connection: it carries the current `seq` without advancing it.
    func direct(_ type: String, _ data: String, state: SessionState, now: Millis) -> String {
        var copy = self
        return PirateRadio.frame(type: type, data: data, epoch: state.epoch, seq: copy.currentSequence(epoch: state.epoch), timestamp: now)
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

    /// The snapshot with the counter as it stands.
    mutating func snapshot(_ state: SessionState) -> PirateRadio.Snapshot {
        snapshot(state, sequence: currentSequence(epoch: state.epoch))
    }

    private func queue(_ state: SessionState) -> [PirateRadio.Track] {
        state.rankedQueue().map { PirateRadio.Track($0.item.track) }
    }
}
