import Foundation
import JamProtocol

/// The session as an app renders it: the server's state from `SessionClient` plus an
/// optimistic layer. A vote shows at once and is not overwritten by an older server
/// update while in flight; rapid taps collapse into one follow-up; an add shows as
/// pending until acknowledged; a skip hides the current item at once; a refusal rolls
/// back and keeps the server's reason in `lastRejection`.
public actor SessionStore {
    private struct VoteIntent {
        /// What the member wants now.
        var desired: Int
        /// What is on the wire.
        var sent: Int
        /// The item's score and the member's vote when the first tap went out.
        let baseScore: Int
        let baseVote: Int
    }

    /// A vote the server acknowledged, with the score it answered: the member's vote and the
    /// item's score as one consistent pair until the mirror shows the vote too. Between the
    /// score's event and the acknowledgement the mirror has the new score beside the old
    /// vote, and a tap then would start from that mismatch.
    private struct SettledVote {
        let score: Int
        let vote: Int
    }

    private struct SkipAsked {
        /// Which tap it was: a refusal takes back only its own tap, not a later one on its way.
        let tap: Int
        let item: ItemID
        /// True for a request, false for taking one back.
        let asking: Bool
        /// The requests of other members shown when it went out.
        let others: Int
    }

    private struct PendingAdd {
        let nonce: String
        let item: QueueItem
        /// The items there were when it went out: a new one of the member's with this track is
        /// this add landing (its event comes before its answer).
        var known: Set<ItemID>
        /// Once answered: the item it made.
        var itemId: ItemID?
        /// Once answered: the client's `seq` then. The answer can reach this store before its
        /// copy of the mirror shows the item, so the stand-in stays until the copy gets there.
        var answeredAt: Int64?
    }

    /// The item a host skip hides, until this store's copy of the mirror shows what the skip did.
    private struct HiddenBySkip {
        let item: ItemID
        /// Once answered: the client's `seq` then.
        var answeredAt: Int64?
    }

    private let client: SessionClient
    private var mirror: SessionMirror
    private var phase: ConnectionPhase = .idle
    private var votes: [ItemID: VoteIntent] = [:]
    private var settledVotes: [ItemID: SettledVote] = [:]
    private var pendingAdds: [PendingAdd] = []
    private var hiddenBySkip: HiddenBySkip?
    /// A host skip is on its way.
    private var skipInFlight = false
    /// The member's own skip request or its withdrawal: shown from the tap, and kept while its
    /// item plays (the server broadcasts how many asked, not who, and this store's copy of the
    /// mirror may hear of the count and the answer later), until another device's choices come.
    private var skipAsked: SkipAsked?
    /// Skip requests and withdrawals on their way.
    private var skipChangesInFlight = 0
    private var skipTaps = 0
    /// The `myChoices` frames seen: the member's choices as another device left them, which a
    /// choice this device shows ahead of its answer must not hide once that answer is in.
    private var choicesFromElsewhere = 0
    private var lastRejection: Rejection?
    private var rejections = 0
    /// Actions begun: a refusal that comes after a later action began is not shown over it.
    private var actionsBegun = 0
    /// The run ended with the client, for good: a subscription made after it ends at once.
    private var ended = false
    private var subscribers: [Int: AsyncStream<StoreSnapshot>.Continuation] = [:]
    private var nextSubscriber = 0
    /// The latest snapshot.
    public private(set) var current: StoreSnapshot = .empty

    /// Creates a store over `client`.
    public init(client: SessionClient) {
        self.client = client
        self.mirror = SessionMirror(me: client.me)
    }

    /// Snapshots from now on (the current one first).
    public func snapshots() -> AsyncStream<StoreSnapshot> {
        let (stream, continuation) = AsyncStream.makeStream(of: StoreSnapshot.self, bufferingPolicy: .bufferingNewest(64))
        continuation.yield(current)
        if ended {
            continuation.finish()
            return stream
        }
        subscribers[nextSubscriber] = continuation
        nextSubscriber += 1
        return stream
    }

    /// Every item `view` shows: queued, announced and playing.
    private static func items(in view: SessionView?) -> [QueueItem] {
        guard let view else { return [] }
        return view.queue + [view.upNext?.item, view.nowPlaying?.item].compactMap { $0 }
    }

    /// Follows the client until it stops for good (the session ended or refused the member:
    /// `snapshots()` streams then end too) or this task is cancelled (they stay open, for a
    /// later `run()` to carry on, as an app does when it comes back to the foreground).
    public func run() async {
        ended = false
        for await update in await client.subscribe() {
            switch update {
            case .mirror(let mirror):
                self.mirror = mirror
                forgetSettledVotesTheMirrorShows()
                forgetAnsweredActionsTheMirrorShows()
            case .phase(let phase): self.phase = phase
            case .envelope(let envelope):
                // The member's choices as the server holds them, after every answer this
                // device had: another device's (`myChoices`), or the whole state after a
                // reconnect. The mirror that follows holds them.
                switch envelope.event {
                case .myChoices, .stateSync: break
                default: continue
                }
                choicesFromElsewhere += 1
                settledVotes = [:]
                if skipChangesInFlight == 0 { skipAsked = nil }
                continue
            case .token: continue
            }
            publish()
        }
        // Cancelled as the client failed for good (its owner cancels everything then), the
        // failure still ends the streams.
        if Task.isCancelled, !(await client.phase.isFailed) { return }
        ended = true
        for continuation in subscribers.values { continuation.finish() }
        subscribers = [:]
    }

    // MARK: Actions

    /// Votes +1, -1 or 0 (clear) on a queued item; shows at once.
    public func vote(_ itemId: ItemID, _ value: Int) async {
        beginAction()
        if var intent = votes[itemId] {
            // A vote is on its way: remember the latest wish; one follow-up goes when it lands.
            intent.desired = value
            votes[itemId] = intent
            publish()
            return
        }
        let base = serverVote(on: itemId)
        votes[itemId] = VoteIntent(desired: value, sent: value, baseScore: base.score, baseVote: base.vote)
        publish()
        var sending = value
        while true {
            do {
                let elsewhere = choicesFromElsewhere
                let ack = try await client.send(.vote(Vote(itemId: itemId, value: sending)))
                // Not after another device's choices came: the mirror holds the later vote then.
                if let score = ack.score, choicesFromElsewhere == elsewhere, (mirror.view?.myVotes[itemId.rawValue] ?? 0) != sending {
                    settledVotes[itemId] = SettledVote(score: score, vote: sending)
                }
            } catch {
                votes[itemId] = nil
                await reject("vote", error)
                return
            }
            guard var intent = votes[itemId] else { return }
            if intent.desired == sending {
                votes[itemId] = nil
                publish()
                return
            }
            sending = intent.desired
            intent.sent = sending
            votes[itemId] = intent
        }
    }

    /// Adds a track; it shows as pending until the server confirms it.
    @discardableResult
    public func add(_ track: Track) async -> ItemID? {
        beginAction()
        let nonce = UUID().uuidString.lowercased()
        let me = mirror.view?.members.first { $0.userId == mirror.me } ?? Member(userId: mirror.me, displayName: "", role: .member, connected: true)
        let standIn = QueueItem(id: JamID("pending-\(nonce)"), track: track, addedBy: me, addedAt: 0, score: 0, reason: "adding…")
        // Known too: the items of answered adds this store's copy does not show yet, which are
        // no landing of this add.
        let known = Set(Self.items(in: mirror.view).map(\.id)).union(pendingAdds.compactMap(\.itemId))
        pendingAdds.append(PendingAdd(nonce: nonce, item: standIn, known: known))
        publish()
        do {
            let ack = try await client.send(.addToQueue(AddToQueue(track: track, nonce: nonce)))
            let answeredAt = await client.mirror.seq ?? 0
            for index in pendingAdds.indices {
                if pendingAdds[index].nonce == nonce {
                    pendingAdds[index].itemId = ack.itemId
                    pendingAdds[index].answeredAt = answeredAt
                } else if let itemId = ack.itemId {
                    // This add's item is no other add landing: the same song added twice shows twice.
                    pendingAdds[index].known.insert(itemId)
                }
            }
            forgetAnsweredActionsTheMirrorShows()
            publish()
            return ack.itemId
        } catch {
            pendingAdds.removeAll { $0.nonce == nonce }
            await reject("add", error)
            return nil
        }
    }

    /// Host skip: the current item disappears at once. A second tap before the first shows
    /// (answered, and in this store's copy of the mirror) does nothing. The skip names the
    /// item's epoch, so one sent again after a reconnect is refused rather than skipping
    /// whatever plays by then.
    public func skip() async {
        guard !skipInFlight, hiddenBySkip == nil else { return }
        skipInFlight = true
        defer { skipInFlight = false }
        beginAction()
        let playing = mirror.view?.nowPlaying
        hiddenBySkip = playing.map { HiddenBySkip(item: $0.item.id) }
        publish()
        do {
            try await client.send(.skip(Skip(epoch: playing?.epoch)))
            let answeredAt = await client.mirror.seq ?? 0
            hiddenBySkip?.answeredAt = answeredAt
            forgetAnsweredActionsTheMirrorShows()
            publish()
        } catch {
            hiddenBySkip = nil
            await reject("skip", error)
        }
    }

    /// Asks to skip the current item; counts at once. The request names the item's epoch, so
    /// one sent again after a reconnect is refused rather than counting against the next song.
    public func requestSkip() async {
        await changeSkipRequest(asking: true)
    }

    /// Takes back the member's request to skip the current item; counts at once. Like the
    /// request, it names the item's epoch, so it cannot act on the next song.
    public func withdrawSkipRequest() async {
        await changeSkipRequest(asking: false)
    }

    private func changeSkipRequest(asking: Bool) async {
        beginAction()
        let playing = mirror.view?.nowPlaying
        let shown = current.skipRequests
        skipTaps += 1
        let tap = skipTaps
        if let playing {
            skipAsked = SkipAsked(tap: tap, item: playing.item.id, asking: asking, others: max(0, shown.count - (shown.mine ? 1 : 0)))
        }
        publish()
        skipChangesInFlight += 1
        let elsewhere = choicesFromElsewhere
        do {
            let skip = Skip(epoch: playing?.epoch)
            try await client.send(asking ? .requestSkip(skip) : .withdrawSkipRequest(skip))
            skipChangesInFlight -= 1
            // Another device's choices came while it was on its way: once every change is
            // answered, the mirror has the last word (this store's copy may lag it a moment).
            if skipChangesInFlight == 0, choicesFromElsewhere != elsewhere { skipAsked = nil }
        } catch {
            skipChangesInFlight -= 1
            if skipAsked?.tap == tap { skipAsked = nil }
            await reject(asking ? "skip request" : "skip withdrawal", error)
        }
        publish()
    }

    /// Any other command (host controls, removal): no optimistic step, refusals surface.
    public func perform(_ command: ClientCommand, as action: String) async {
        beginAction()
        do {
            try await client.send(command)
        } catch {
            await reject(action, error)
        }
    }

    /// A new action clears the last refusal: it is about what the member does now.
    private func beginAction() {
        lastRejection = nil
        actionsBegun += 1
    }

    private func reject(_ action: String, _ error: any Error) async {
        // The caller gave up (its task was cancelled): nobody refused anything.
        if error is CancellationError {
            publish()
            return
        }
        let typed = error as? JamError ?? JamError(.internal, "\(error)")
        // Commands still waiting when the session ended for this member fail with that reason,
        // which the phase already says; a rejection per command would only repeat it (the web
        // client compares the error object; here the error is a value, so its code and words).
        // An action begun while the phase was read has cleared the refusals before it.
        let begun = actionsBegun
        let phase = await client.phase
        if case .failed(let failure) = phase, failure.code == typed.code, failure.message == typed.message {
            publish()
            return
        }
        guard actionsBegun == begun else {
            publish()
            return
        }
        rejections += 1
        lastRejection = Rejection(
            id: rejections, action: action, code: typed.code, message: typed.message, retryAfterMs: typed.retryAfterMs)
        publish()
    }

    /// The item's score and the member's vote as the server last had them together.
    private func serverVote(on itemId: ItemID) -> SettledVote {
        if let settled = settledVotes[itemId] { return settled }
        let score = mirror.view?.queue.first { $0.id == itemId }?.score ?? 0
        return SettledVote(score: score, vote: mirror.view?.myVotes[itemId.rawValue] ?? 0)
    }

    /// Drops the answered adds and skip once this store's copy of the mirror has caught up
    /// with the client's at their answers: it shows what they did from then on.
    private func forgetAnsweredActionsTheMirrorShows() {
        guard let seq = mirror.seq else { return }
        pendingAdds.removeAll { $0.answeredAt.map { $0 <= seq } ?? false }
        if let answeredAt = hiddenBySkip?.answeredAt, answeredAt <= seq { hiddenBySkip = nil }
    }

    /// Drops the settled votes the mirror now shows (or whose items left the queue).
    private func forgetSettledVotesTheMirrorShows() {
        guard !settledVotes.isEmpty else { return }
        let view = mirror.view
        settledVotes = settledVotes.filter { itemId, settled in
            view?.queue.contains { $0.id == itemId } == true && (view?.myVotes[itemId.rawValue] ?? 0) != settled.vote
        }
    }

    // MARK: Snapshot

    private func publish() {
        current = build()
        for (key, continuation) in subscribers {
            if case .terminated = continuation.yield(current) { subscribers[key] = nil }
        }
    }

    private func build() -> StoreSnapshot {
        guard let view = mirror.view else {
            var snapshot = StoreSnapshot.empty
            snapshot.phase = phase
            snapshot.lastRejection = lastRejection
            return snapshot
        }
        var queue: [StoreItem] = view.queue.map { item in
            guard let intent = votes[item.id] else {
                guard let settled = settledVotes[item.id] else {
                    return StoreItem(item: item, myVote: view.myVotes[item.id.rawValue] ?? 0, pending: false, voteInFlight: false)
                }
                var shown = item
                shown.score = settled.score
                if case .votes = view.session.settings.ordering { shown.reason = QueueItem.votesReason(score: settled.score) }
                return StoreItem(item: shown, myVote: settled.vote, pending: false, voteInFlight: false)
            }
            // In flight: the score as it was when the vote went out, moved by the member's wish.
            var shown = item
            shown.score = intent.baseScore - intent.baseVote + intent.desired
            switch view.session.settings.ordering {
            case .votes: shown.reason = QueueItem.votesReason(score: shown.score) // never the new score beside the old reason
            case .fair: break // the reason is the member's turn, which the server's answer settles
            }
            return StoreItem(item: shown, myVote: intent.desired, pending: false, voteInFlight: true)
        }
        // A stand-in goes once its item shows; each item stands for one add.
        var claimed = Set<ItemID>()
        let items = Self.items(in: view)
        for add in pendingAdds {
            let landed = items.first {
                if let itemId = add.itemId { return $0.id == itemId }
                return !add.known.contains($0.id) && !claimed.contains($0.id) && $0.track.id == add.item.track.id
                    && $0.addedBy.userId == mirror.me
            }
            if let landed {
                claimed.insert(landed.id)
            } else {
                queue.append(StoreItem(item: add.item, myVote: 0, pending: true, voteInFlight: false))
            }
        }
        var skipRequests = view.skipRequests
        if let asked = skipAsked, asked.item == view.nowPlaying?.item.id, skipChangesInFlight > 0 || skipRequests.mine != asked.asking {
            // Counted once: the server's count may include the change before its answer comes,
            // or an earlier tap's change while this one is on its way.
            skipRequests.mine = asked.asking
            skipRequests.count = asked.asking ? max(skipRequests.count, asked.others + 1) : min(skipRequests.count, asked.others)
        }
        var nowPlaying = view.nowPlaying
        if let hidden = hiddenBySkip, nowPlaying?.item.id == hidden.item { nowPlaying = nil }
        return StoreSnapshot(
            session: view.session, members: view.members, nowPlaying: nowPlaying, upNext: view.upNext, queue: queue,
            skipRequests: skipRequests, history: view.history, phase: phase,
            role: view.members.first { $0.userId == mirror.me }?.role, lastRejection: lastRejection, ended: mirror.ended != nil,
            skipping: hiddenBySkip != nil)
    }
}
