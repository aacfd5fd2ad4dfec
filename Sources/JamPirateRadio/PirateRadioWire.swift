import Foundation
import JamCore
import JamPirateRadioWire
import JamProtocol
import JamServer
import NIOCore

extension PirateRadio.ClientMessage: DecodedMessage {}

/// The PirateRadio protocol as one session speaks it: DJ messages are relayed as sent,
/// structural changes (skip, auto-advance, a new DJ) go out as a full `stateSync`, `epoch` and
/// `seq` are numbered as its server numbers them, and nothing is kept for resumes (the protocol
/// has none).
struct PirateRadioWire: SessionWire {
    /// The epoch as PirateRadio's server counts it: one more for each `playPrepare`, skip,
    /// auto-advance to a track and new DJ. It starts from the floor the session gives it
    /// (`LiveSession.wireEpochFloor`), so it never goes back for an app that reconnects after
    /// a restart.
    private(set) var epoch: Int64
    /// Its `seq`: one more for each frame broadcast, back to 0 when a skip or auto-advance
    /// starts a track (not on `playPrepare` or a new DJ, which raise only the epoch).
    private(set) var sequence: Int64 = 0

    init(epoch: Int64) {
        self.epoch = epoch
    }

    var socketsAreMembership: Bool { true }

    var replacedSocketClose: (code: UInt16, reason: String)? {
        (PirateRadio.CloseCode.replaced, "replaced by a newer connection")
    }

    mutating func frames(for events: [ServerEnvelope], cause: WireCause, state: SessionState, now: Millis) -> [WireFrame] {
        guard let last = events.last?.seq else { return [] }
        var frames: [WireFrame] = []
        func append(_ text: String, _ audience: Audience) {
            frames.append(WireFrame(seq: last, bytes: ByteBuffer(string: text), audience: audience, logged: false))
        }
        func add(_ type: PirateRadio.ServerType, _ data: String, _ audience: Audience) {
            sequence += 1
            append(PirateRadio.frame(type: type, data: data, epoch: epoch, seq: sequence, timestamp: now), audience)
        }
        /// A track started by the server (skip, auto-advance): a new epoch whose first frame is 0.
        func addStarted() {
            epoch += 1
            sequence = 0
            append(PirateRadio.frame(type: .stateSync, data: PirateRadio.json(snapshot(state, now: now)), epoch: epoch, seq: sequence, timestamp: now), .everyone)
        }
        let types = Set(events.map(\.event.type))
        switch cause {
        case .tick, .followed:
            // A command another node applied is framed as time passing is: the messages its
            // frames relay went to that node's sockets only (run this profile as one node).
            if types.contains(.playPrepare) {
                addStarted()
            } else if types.contains(.pause) {
                // The queue ran out: the same epoch, one frame more.
                sequence += 1
                append(PirateRadio.frame(type: .stateSync, data: PirateRadio.json(snapshot(state, now: now)), epoch: epoch, seq: sequence, timestamp: now), .everyone)
            }
        case .command(let command, let user, _, let relay):
            switch command {
            case .djPrepare:
                // Its server relays the DJ's timeline to every member, the DJ included.
                epoch += 1
                add(.playPrepare, relay ?? "{}", .everyone)
            case .djTimeline(let change):
                let type: PirateRadio.ServerType = switch change {
                case .commit: .playCommit
                case .pause: .pause
                case .resume: .resume
                case .seek: .seek
                }
                add(type, relay ?? "{}", .everyone)
            case .skip:
                addStarted()
            case .add, .remove, .all:
                // Its clients get the whole queue on every change, however OpenJam's members hear of it.
                if !types.isDisjoint(with: [.queueUpdate, .queueItemAdded, .queueItemRemoved]) {
                    add(.queueUpdate, PirateRadio.json(PirateRadio.ShownQueue(queue: queue(state))), .everyone)
                }
            case .join:
                // Its server announces every socket that opens, a member's return included
                // (`socketOpened`), not joins.
                break
            case .leave:
                guard types.contains(.memberLeft) else { break }
                add(.memberLeft, PirateRadio.json(PirateRadio.MemberEvent(userId: user.rawValue)), .everyone)
                let newDJ = events.contains { envelope in
                    if case .memberUpdated(let member) = envelope.event { return member.role == .host }
                    return false
                }
                if newDJ {
                    // Its server sends the new DJ's stateSync without epoch, seq or timestamp.
                    epoch += 1
                    append(PirateRadio.frame(type: .stateSync, data: PirateRadio.json(snapshot(state, now: now))), .everyone)
                }
            case .connect, .disconnect, .vote, .requestSkip, .withdrawSkipRequest, .finish, .play, .pause, .resume, .seek, .ready, .syncReport,
                .updateSettings, .setRole, .kick, .setDeviceDelay, .setJoinCode, .end, .whileCurrent:
                // No PirateRadio message becomes one of these (the DJ's moves arrive as djPrepare and
                // djTimeline), and the protocol has no frame for what the server does on its own.
                break
            }
        }
        return frames
    }

    func request(for message: any DecodedMessage, from user: UserID, state: SessionState, ids: any IDGenerator, now: Millis) -> SessionRequest {
        guard let message = message as? PirateRadio.ClientMessage else {
            return .refuse(JamError(.internal, "the server could not read the message"), replyId: nil)
        }
        // PirateRadio's server drops the DJ's messages from anyone else without a word.
        if let type = message.type, type.isDJOnly, user != state.hostId { return .ignore }
        let body: PirateRadio.ClientMessage.Body
        switch message.body {
        case .success(let decoded): body = decoded
        case .failure(let error): return .refuse(error, replyId: nil)
        }
        let command: Command
        var relay = message.rawData
        switch body {
        case .ignored:
            return .ignore
        case .ping(let clientSendTime):
            guard let time = clientSendTime?.number else {
                // Echoed as sent, whatever it is; left out when absent, as JSON.stringify does.
                var data: [String: PirateRadio.Value] = ["serverTime": .integer(now)]
                if let clientSendTime { data["clientSendTime"] = clientSendTime }
                return .reply(ByteBuffer(string: PirateRadio.frame(type: .pong, data: PirateRadio.json(PirateRadio.Value.object(data)))))
            }
            return .ping(clientSendTime: time)
        case .driftReport:
            // The report as sent, naming its sender under PirateRadio's key; a client's own
            // `fromUserId` is overwritten, so no one can speak for someone else.
            var report = message.data
            report["fromUserId"] = .string(user.rawValue)
            // Its server sends the report with a timestamp but no epoch or seq.
            return .toHost(ByteBuffer(string: PirateRadio.frame(type: .driftReport, data: PirateRadio.json(PirateRadio.Value.object(report)), timestamp: now)))
        case .playPrepare(let prepare):
            // The track keeps how the DJ sent it, so currentTrack shows it so, also after a restart.
            var track = prepare.track
            track.asSent = PirateRadio.json(PirateRadio.Value.object(prepare.shown))
            command = .djPrepare(track: track, itemId: ids.next())
        case .playCommit(let data):
            // A commit with nothing prepared has nothing to play (PirateRadio's server would
            // mark the session playing without a track).
            guard state.current != nil else { return .ignore }
            command = .djTimeline(.commit(positionMs: data.positionMs ?? 0, at: Self.djTime(data.ntpTimestamp, now: now)))
        case .pause(let data):
            guard let current = state.current else { return .ignore }
            let at = Self.djTime(data.ntpTimestamp, now: now)
            let position = data.positionMs ?? Self.position(current, at: now)
            command = .djTimeline(.pause(positionMs: position, at: at))
            // Members learn where it stopped even when the DJ's app did not say (it sends only
            // ntpTimestamp; PirateRadio's server sends its own position).
            relay = Self.relay(message.data, filling: [
                "positionMs": data.positionMs == nil ? .integer(position) : nil,
                "ntpTimestamp": data.ntpTimestamp == nil ? .integer(at) : nil,
            ])
        case .resume(let data):
            guard let current = state.current else { return .ignore }
            let at = Self.djTime(data.executionTime ?? data.ntpTimestamp, now: now)
            let position = data.positionMs ?? Self.position(current, at: now)
            command = .djTimeline(.resume(positionMs: position, at: at))
            relay = Self.relay(message.data, filling: [
                "positionMs": data.positionMs == nil ? .integer(position) : nil,
                "ntpTimestamp": data.ntpTimestamp == nil ? .integer(now) : nil,
                "executionTime": data.executionTime == nil ? .integer(at) : nil,
            ])
        case .seek(let data):
            guard state.current != nil else { return .ignore }
            command = .djTimeline(.seek(positionMs: data.positionMs ?? 0, at: Self.djTime(data.ntpTimestamp, now: now)))
        case .skip:
            // PirateRadio's skip with nothing queued is a no-op, not an error.
            guard !state.queue.isEmpty else { return .ignore }
            command = .skip
        case .addToQueue(let add):
            // A full queue drops the add silently, as PirateRadio's server does; the limit holds.
            if let limit = state.rules.maxQueueLength, state.queue.count >= limit { return .ignore }
            var entry = add.shown
            entry["nonce"] = add.rawNonce
            entry["addedBy"] = .string(user.rawValue)
            // The queue entry as PirateRadio shows it goes into the store with the item.
            let shown = PirateRadio.json(PirateRadio.Value.object(entry))
            var track = add.track
            track.asSent = shown
            command = .add(track: track, nonce: add.nonce, itemId: ids.next())
            relay = shown
        case .removeFromQueue(let trackId):
            // Every queued entry with that id goes, as in PirateRadio's server; none is a no-op.
            let removes = state.rankedQueue().filter { $0.item.track.id == trackId }.map { Command.remove(itemId: $0.item.id) }
            guard let first = removes.first else { return .ignore }
            command = removes.count == 1 ? first : .all(removes)
        }
        return .command(command, replyId: nil, relay: relay)
    }

    /// Where the current item is at `now`, within the profile's position limit.
    private static func position(_ current: CurrentItem, at now: Millis) -> Int64 {
        min(current.position(at: now), 24 * 3_600_000)
    }

    /// `data` with the values the session used where the client gave none it could read (nil
    /// values leave the client's field as sent).
    private static func relay(_ data: [String: PirateRadio.Value], filling values: [String: PirateRadio.Value?]) -> String {
        var data = data
        for (key, value) in values {
            if let value { data[key] = value }
        }
        return PirateRadio.json(PirateRadio.Value.object(data))
    }

    /// As its server greets a socket: the state with the current `seq`, then `memberJoined`
    /// with the next one for everybody else, also when the member was already there.
    mutating func socketOpened(by user: UserID, state: SessionState, now: Millis) -> (greeting: ByteBuffer, others: ByteBuffer?) {
        let greeting = stateSync(state, for: user, now: now)
        sequence += 1
        let joined = PirateRadio.MemberEvent(userId: user.rawValue, displayName: state.member(user)?.displayName ?? user.rawValue)
        return (greeting, ByteBuffer(string: PirateRadio.frame(type: .memberJoined, data: PirateRadio.json(joined), epoch: epoch, seq: sequence, timestamp: now)))
    }

    func stateSync(_ state: SessionState, for user: UserID, now: Millis) -> ByteBuffer {
        ByteBuffer(string: PirateRadio.frame(type: .stateSync, data: PirateRadio.json(snapshot(state, now: now)), epoch: epoch, seq: sequence, timestamp: now))
    }

    func ack(_ ack: Ack, state: SessionState, now: Millis) -> ByteBuffer? { nil }

    func error(_ error: JamError, id: String?, state: SessionState, now: Millis) -> ByteBuffer {
        ByteBuffer(string: direct(.error, PirateRadio.json(PirateRadio.ErrorMessage(message: error.message)), state: state, now: now))
    }

    /// PirateRadio's devices know nothing of calibration or the sync column.
    func passing(_ event: ServerEvent, state: SessionState, now: Millis) -> ByteBuffer? { nil }

    func pong(clientSendTime: Double, receivedAt: Double, sentAt: Double, state: SessionState, now: Millis) -> ByteBuffer {
        let pong = PirateRadio.Pong(clientSendTime: clientSendTime, serverTime: Int64(sentAt.rounded()))
        // Its server's pong is only type and data.
        return ByteBuffer(string: PirateRadio.frame(type: .pong, data: PirateRadio.json(pong)))
    }

    /// A frame for one connection: it carries the current `seq` without advancing it.
    func direct(_ type: PirateRadio.ServerType, _ data: String, state: SessionState, now: Millis) -> String {
        PirateRadio.frame(type: type, data: data, epoch: epoch, seq: sequence, timestamp: now)
    }

    /// How far from the server's clock a DJ's timestamp may be. The app sends its own clock
    /// (synced to the server's) a little ahead: pause 100 ms, seek 200 ms, resume 1.5 s.
    static let djClockWindowMs: Millis = 10_000

    /// The instant a DJ's timestamp names, held within `djClockWindowMs` of `now`; `now`
    /// without one. One far in the past would have auto-advance play through the whole queue
    /// at once (each track "ended" long ago), which its server never does.
    static func djTime(_ sent: Int64?, now: Millis) -> Millis {
        guard let sent else { return now }
        return min(max(sent, now - djClockWindowMs), now + djClockWindowMs)
    }

    /// The session as PirateRadio shows it at `now`, numbered as this wire's frames are.
    func snapshot(_ state: SessionState, now: Millis) -> PirateRadio.ShownSnapshot {
        let current = state.current
        var position = current?.positionMs ?? 0
        var anchor = current?.anchorMs ?? 0
        if let current, anchor > now {
            // Its app subtracts the anchor from its clock as unsigned numbers, so one ahead of
            // now (a resume at the DJ's executionTime) would stop it. Shown instead: the same
            // timeline at now, from 0 at the latest (its server shows a resume as playing from now).
            if current.state == .playing { position = max(0, position - (anchor - now)) }
            anchor = now
        }
        return PirateRadio.ShownSnapshot(
            id: state.id.rawValue, joinCode: state.joinCode, creatorId: state.creatorId.rawValue, djUserId: state.hostId.rawValue,
            members: state.members.map { PirateRadio.Member(userId: $0.userId.rawValue, displayName: $0.displayName) },
            epoch: epoch, sequence: sequence, currentTrack: current.map { show($0.item) },
            isPlaying: current?.state == .playing, positionMs: position,
            positionTimestamp: anchor, queue: queue(state))
    }

    private func queue(_ state: SessionState) -> [PirateRadio.RawJSON] {
        state.rankedQueue().map { show($0.item) }
    }

    /// An item as PirateRadio shows it.
    func show(_ item: ItemRecord) -> PirateRadio.RawJSON {
        // Items from before tracks were kept as sent show their PirateRadio fields.
        PirateRadio.RawJSON(text: item.track.asSent ?? PirateRadio.json(PirateRadio.Track(item.track)))
    }
}
