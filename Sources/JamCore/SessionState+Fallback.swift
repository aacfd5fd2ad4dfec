import JamProtocol

/// Library tracks set aside for when the queue runs dry and the session's `fallback` is on.
public struct FallbackReserve: Codable, Hashable, Sendable {
    /// Next first.
    public var tracks: [Track] = []
    /// Fallback items started so far; numbers their item ids.
    public var served: Int64 = 0
}

extension SessionState {
    /// Who fallback items are "added by", so every view can say where they came from.
    public static let fallbackAdder: UserID = JamID("openjam-shuffle")
    /// The name shown for `fallbackAdder`.
    public static let fallbackAdderName = "Library shuffle"
    /// Tracks kept in reserve: the one to prepare next, and one behind it for a skip.
    public static let fallbackReserveSize = 2

    /// How many tracks the server should hand to `supplyFallback(_:)` now.
    public var fallbackWanted: Int {
        guard settings.fallback, !hasEnded, rules.startMode == .scheduled else { return 0 }
        return max(0, Self.fallbackReserveSize - (fallbackReserve?.tracks.count ?? 0))
    }

    /// Takes tracks into the reserve; nobody sees them until one plays, so there are no events.
    public mutating func supplyFallback(_ tracks: [Track]) {
        var reserve = fallbackReserve ?? FallbackReserve()
        reserve.tracks += tracks.prefix(max(0, Self.fallbackReserveSize - reserve.tracks.count))
        fallbackReserve = reserve
    }

    /// Track ids played, playing or about to play, most recent first: a shuffle avoids them.
    public func recentTrackIDs(limit: Int) -> [String] {
        var ids: [String] = []
        if let upNext { ids.append(upNext.item.track.id) }
        if let current { ids.append(current.item.track.id) }
        ids += history.reversed().map(\.item.track.id)
        ids += fallbackReserve?.tracks.map(\.id) ?? []
        return Array(ids.prefix(limit))
    }

    /// Whether something can follow the current item: a queued item, or fallback.
    var hasNextItem: Bool {
        !queue.isEmpty || (settings.fallback && rules.startMode == .scheduled && !(fallbackReserve?.tracks.isEmpty ?? true))
    }

    /// Puts the queue's head in place of a fallback item announced up next: members' songs
    /// always play before the library's, also one added in the seconds before the hand-over.
    /// The fallback track goes back to the front of the reserve.
    ///
    /// Only while the current item plays (clients take an announcement for the item after a
    /// playing one) and with the lead of a start left before the hand-over, so devices can load
    /// the song; otherwise it plays right after the library's track.
    mutating func yieldFallbackUpNext(at now: Millis, into outcome: inout Outcome) {
        guard rules.addsReplaceAnnouncedFallback, let announced = upNext, announced.item.addedBy == Self.fallbackAdder,
            current?.state == .playing, announced.startAt - now >= leadMs(), let head = queueHead()
        else { return }
        queue.removeAll { $0.id == head.id }
        var reserve = fallbackReserve ?? FallbackReserve()
        reserve.tracks.insert(announced.item.track, at: 0)
        fallbackReserve = reserve
        upNext = UpNext(item: head, epoch: announced.epoch, startAt: announced.startAt)
        // The same epoch and start: devices replace what they were preparing.
        let prepare = PlayPrepare(item: itemView(head, reason: "up next"), epoch: announced.epoch, startAt: announced.startAt, previous: nil)
        emit(.playPrepare(prepare), at: now, into: &outcome)
        emitQueue(at: now, into: &outcome)
    }

    /// Removes and returns what plays next: the head of the queue, else a fallback item.
    mutating func takeNextItem(at now: Millis) -> ItemRecord? {
        if let head = queueHead() {
            queue.removeAll { $0.id == head.id }
            return head
        }
        guard settings.fallback, rules.startMode == .scheduled, var reserve = fallbackReserve, !reserve.tracks.isEmpty else { return nil }
        let track = reserve.tracks.removeFirst()
        reserve.served += 1
        fallbackReserve = reserve
        return ItemRecord(
            id: JamID("fallback-\(reserve.served)"), track: track, addedBy: Self.fallbackAdder,
            addedByName: Self.fallbackAdderName, addedAt: now, addOrder: -reserve.served, votes: [:], scoreSince: now)
    }
}
