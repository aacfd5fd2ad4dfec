import JamProtocol

/// The session as the server last described it, kept current by applying events in
/// `seq` order: `stateSync` always, duplicates dropped, a gap reported so the client
/// can resume, events of an older epoch consumed without effect.
public struct SessionMirror: Sendable, Equatable {
    /// What happened to an envelope.
    public enum Applied: Sendable, Equatable {
        /// It changed (or confirmed) the mirror.
        case applied
        /// Already applied; dropped.
        case duplicate
        /// From an older epoch; dropped.
        case stale
        /// Frames are missing before it: resume with `hello {lastSeq: seq}`.
        case gap
        /// Not part of the session's event stream (pong, ack, error, and the passing
        /// device-sync frames: syncStatus, calibration, calibrationResult, resync).
        case direct
        /// The caller's own votes and skip request, as another of their devices changed them
        /// (`myChoices`): the view changed, the seq did not.
        case mine
    }

    /// The caller.
    public let me: UserID
    /// The last full view, updated by every event since.
    public private(set) var view: SessionView?
    /// The last applied `seq`; `nil` before the first `stateSync`.
    public private(set) var seq: Int64?
    /// The session's epoch as of the last applied event.
    public private(set) var epoch: Int64 = 0
    /// Set once `sessionEnded` arrived.
    public private(set) var ended: SessionEnded?

    /// Creates an empty mirror for `me`.
    public init(me: UserID) {
        self.me = me
    }

    /// Applies one server frame.
    public mutating func apply(_ envelope: ServerEnvelope) -> Applied {
        if case .stateSync(let view) = envelope.event {
            self.view = view
            seq = envelope.seq
            epoch = envelope.epoch
            return .applied
        }
        if case .myChoices(let mine) = envelope.event, view != nil {
            view?.myVotes = mine.myVotes
            view?.skipRequests.mine = mine.mySkipRequest
            return .mine
        }
        guard envelope.event.type.advancesSeq else { return .direct }
        guard let seq, view != nil else { return .gap }
        if envelope.seq <= seq { return .duplicate }
        if envelope.seq > seq + 1 { return .gap }
        self.seq = envelope.seq
        if envelope.epoch < epoch { return .stale }
        epoch = envelope.epoch
        reduce(envelope)
        return .applied
    }

    /// Applies `change` to the adder shown on every item `user` added: queued, playing and announced.
    private static func updateAdder(of view: inout SessionView, _ user: UserID, _ change: (inout Member) -> Void) {
        for index in view.queue.indices where view.queue[index].addedBy.userId == user { change(&view.queue[index].addedBy) }
        if view.nowPlaying?.item.addedBy.userId == user { change(&view.nowPlaying!.item.addedBy) }
        if view.upNext?.item.addedBy.userId == user { change(&view.upNext!.item.addedBy) }
    }

    /// Records the caller's own vote (the server broadcasts scores, not who voted).
    public mutating func setMyVote(_ itemId: ItemID, _ value: Int) {
        view?.myVotes[itemId.rawValue] = value == 0 ? nil : value
    }

    /// Records that the server answered the caller's skip request for `itemId` (the server
    /// broadcasts how many asked, not who). Only while that item still plays and requests are
    /// counted: a request that reached the threshold has skipped the item already, and the
    /// next one starts with nobody asking.
    public mutating func requestSkipAnswered(for itemId: ItemID) {
        guard view?.nowPlaying?.item.id == itemId, let count = view?.skipRequests.count, count > 0 else { return }
        view?.skipRequests.mine = true
    }

    /// Records that the server answered the caller's withdrawal of their skip request for
    /// `itemId`, while that item still plays.
    public mutating func withdrawSkipAnswered(for itemId: ItemID) {
        guard view?.nowPlaying?.item.id == itemId else { return }
        view?.skipRequests.mine = false
    }

    private mutating func reduce(_ envelope: ServerEnvelope) {
        guard var view else { return }
        switch envelope.event {
        case .stateSync, .pong, .ack, .error, .syncStatus, .calibration, .calibrationResult, .resync, .myChoices:
            break
        case .memberJoined(let member), .memberUpdated(let member):
            if let index = view.members.firstIndex(where: { $0.userId == member.userId }) {
                view.members[index] = member
            } else {
                view.members.append(member)
            }
            if member.role == .host {
                view.session.hostId = member.userId
                view.session.hostDisplayName = member.displayName
            }
            // Items show their adder as they are now (without their last add), as the server does.
            var adder = member
            adder.lastAddedAt = nil
            Self.updateAdder(of: &view, member.userId) { $0 = adder }
        case .memberLeft(let left):
            view.members.removeAll { $0.userId == left.userId }
            // A gone adder shows as they were: their name, no role, not connected.
            Self.updateAdder(of: &view, left.userId) { adder in
                adder.role = .member
                adder.connected = false
            }
            view.deviceDelays = Self.nonEmpty(view.deviceDelays?.filter { $0.userId != left.userId })
            view.session.hostId = left.hostId
            view.session.hostDisplayName = view.members.first { $0.userId == left.hostId }?.displayName ?? view.session.hostDisplayName
        case .queueItemAdded(let added):
            // Only the new item has a new place; every other item keeps its order.
            view.queue.removeAll { $0.id == added.item.id }
            view.queue.insert(added.item, at: min(max(added.index, 0), view.queue.count))
        case .queueItemRemoved(let removed):
            view.queue.removeAll { $0.id == removed.itemId }
            view.myVotes[removed.itemId.rawValue] = nil
        case .queueUpdate(let update):
            view.queue = update.queue
            let ids = Set(update.queue.map(\.id.rawValue))
            view.myVotes = view.myVotes.filter { ids.contains($0.key) }
        case .votesUpdate(let update):
            // Score and reason together: the order may not have changed, so no queueUpdate brings the reason.
            if let index = view.queue.firstIndex(where: { $0.id == update.itemId }) {
                view.queue[index].score = update.score
                view.queue[index].reason = update.reason
                // A vote moves only its own item; every other item keeps its order.
                if let movedTo = update.movedTo, movedTo != index {
                    let item = view.queue.remove(at: index)
                    view.queue.insert(item, at: min(max(movedTo, 0), view.queue.count))
                }
            } else if var now = view.nowPlaying, now.item.id == update.itemId {
                // Where the host's device plays, members vote on what plays too.
                now.item.score = update.score
                now.item.reason = update.reason
                view.nowPlaying = now
            }
        case .playPrepare(let prepare):
            let announced = NowPlaying(item: prepare.item, epoch: prepare.epoch, state: .preparing, positionMs: 0, anchorMs: prepare.startAt)
            if envelope.epoch < prepare.epoch {
                // Announced to follow the current item without a gap.
                view.upNext = announced
            } else {
                if let previous = prepare.previous { view.recordHistory(previous) }
                view.nowPlaying = announced
                if view.upNext?.item.id == prepare.item.id { view.upNext = nil }
                view.skipRequests = SkipRequestsView(count: 0, needed: view.skipRequests.needed, mine: false)
            }
        case .playCommit(let commit):
            if var now = view.nowPlaying, now.item.id == commit.itemId {
                now.state = .playing
                now.positionMs = commit.positionMs
                now.anchorMs = commit.startAt
                view.nowPlaying = now
            }
        case .pause(let change):
            update(&view, change, state: .paused)
        case .resume(let change):
            update(&view, change, state: .playing)
        case .seek(let change):
            update(&view, change, state: nil)
        case .stopped(let stopped):
            if let previous = stopped.previous { view.recordHistory(previous) }
            view.nowPlaying = nil
            view.upNext = nil
            view.skipRequests = SkipRequestsView(count: 0, needed: view.skipRequests.needed, mine: false)
        case .skipRequests(let requests):
            // The member's own request stays theirs until its item leaves (a new item, a
            // stop): a count of 0 may only say they were away (the server counts connected
            // members), as a resume's replay brings back.
            view.skipRequests.count = requests.count
            view.skipRequests.needed = requests.needed
        case .sessionUpdated(let updated):
            view.session.settings = updated.settings
            view.session.name = updated.name
            view.session.joinCode = updated.joinCode
        case .sessionEnded(let ended):
            self.ended = ended
        case .deviceDelay(let delay):
            var delays = view.deviceDelays ?? []
            if let index = delays.firstIndex(where: { $0.device == delay.device }) {
                if delay.delayMs == 0 { delays.remove(at: index) } else { delays[index] = delay }
            } else if delay.delayMs != 0 {
                delays.append(delay)
            }
            view.deviceDelays = Self.nonEmpty(delays)
        }
        self.view = view
    }

    /// The server leaves an empty list out of the view; so does the mirror, to stay equal to it.
    private static func nonEmpty(_ delays: [DeviceDelay]?) -> [DeviceDelay]? {
        guard let delays, !delays.isEmpty else { return nil }
        return delays
    }

    /// The delay of one of the caller's devices (zero when none is set).
    public func deviceDelay(of deviceId: String) -> Double {
        view?.deviceDelays?.first { $0.userId == me && $0.deviceId == deviceId }?.delayMs ?? 0
    }

    private func update(_ view: inout SessionView, _ change: TimelineChange, state: PlaybackState?) {
        guard var now = view.nowPlaying, now.epoch == change.epoch else { return }
        if let state { now.state = state }
        now.positionMs = change.positionMs
        now.anchorMs = change.atMs
        view.nowPlaying = now
    }
}
