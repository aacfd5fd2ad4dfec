import JamProtocol

/// Orders queue items and says why each stands where it does.
public enum QueueRanking {
    /// A ranked item and the reason for its position.
    public struct Ranked: Hashable, Sendable {
        public var item: ItemRecord
        public var reason: String
    }

    /// `votes` order: score descending; equal scores as `equalScores` says (by default the
    /// item that has held its score longest, then the earliest added). Only an item's own votes
    /// move it, so an unrelated change never swaps equal-scored neighbours.
    public static func byVotes(_ items: [ItemRecord], equalScores: SessionRules.EqualScores = .heldLongest) -> [ItemRecord] {
        votesPermutation(items, equalScores: equalScores).map { items[$0] }
    }

    /// The indices of `items` in `votes` order. Scores are summed once per item and the sort
    /// moves small keys, not whole items.
    static func votesPermutation(_ items: [ItemRecord], equalScores: SessionRules.EqualScores) -> [Int] {
        var keys: [(key: VotesKey, index: Int)] = []
        keys.reserveCapacity(items.count)
        // Only the fields the order needs are read: taking whole items would copy each one
        // (its track's strings, its votes), which was most of a vote's work.
        items.withUnsafeBufferPointer { items in
            for index in items.indices { keys.append((VotesKey(items, index, equalScores), index)) }
        }
        keys.sort { $0.key.precedes($1.key) }
        return keys.map(\.index)
    }

    /// Where `items[index]` stands in `votes` order: how many items rank before it. The order
    /// is total, so this is its index in `votesPermutation(items)`, found without a sort.
    static func votesRank(of index: Int, in items: [ItemRecord], equalScores: SessionRules.EqualScores) -> Int {
        items.withUnsafeBufferPointer { items in
            let key = VotesKey(items, index, equalScores)
            var rank = 0
            for other in items.indices where other != index {
                if VotesKey(items, other, equalScores).precedes(key) { rank += 1 }
            }
            return rank
        }
    }

    static func votesOrder(_ a: ItemRecord, _ b: ItemRecord, equalScores: SessionRules.EqualScores) -> Bool {
        VotesKey(a, equalScores).precedes(VotesKey(b, equalScores))
    }

    /// The fields the `votes` order reads, and the order itself: sorting, ranking one item and
    /// comparing two all ask it.
    struct VotesKey {
        let score: Int
        let since: Millis
        let fell: Bool
        let order: Int64
        let equalScores: SessionRules.EqualScores

        init(_ item: borrowing ItemRecord, _ equalScores: SessionRules.EqualScores) {
            score = ItemRecord.score(of: item.votes)
            since = item.scoreSince
            fell = item.scoreFell ?? false
            order = item.addOrder
            self.equalScores = equalScores
        }

        /// The key of `items[index]`, read field by field in place: an item passed on from
        /// unsafe memory is copied whole first (its track's strings, its votes, a retain and a
        /// release each), and those copies were most of a vote's ranking (docs/PERFORMANCE.md).
        /// Reads the same fields as `init(_:_:)`; a field the order comes to need goes in both.
        init(_ items: UnsafeBufferPointer<ItemRecord>, _ index: Int, _ equalScores: SessionRules.EqualScores) {
            precondition(items.indices.contains(index))
            let item = items.baseAddress! + index
            score = ItemRecord.score(of: item.pointee.votes)
            since = item.pointee.scoreSince
            fell = item.pointee.scoreFell ?? false
            order = item.pointee.addOrder
            self.equalScores = equalScores
        }

        /// Whether an item with this key plays before one with `other`.
        func precedes(_ other: VotesKey) -> Bool {
            if score != other.score { return score > other.score }
            switch equalScores {
            case .heldLongest:
                break
            case .fallenFirst:
                if fell != other.fell { return fell }
                // The latest to fall leads; among those that rose, the first to arrive does.
                if fell, since != other.since { return since > other.since }
            }
            if since != other.since { return since < other.since }
            return order < other.order
        }
    }

    /// `fair` order: members take turns. The member whose item started least recently
    /// goes first (never-played members before everybody, then by their first add);
    /// each member's own items follow the `votes` order.
    public static func fair(
        _ items: [ItemRecord], lastTurn: [UserID: Int64], names: [UserID: String], equalScores: SessionRules.EqualScores = .heldLongest
    ) -> [Ranked] {
        var byMember: [UserID: [ItemRecord]] = [:]
        for item in items { byMember[item.addedBy, default: []].append(item) }
        for key in byMember.keys { byMember[key]!.sort { votesOrder($0, $1, equalScores: equalScores) } }
        let rotation = byMember.keys.sorted { a, b in
            let ta = lastTurn[a] ?? -1, tb = lastTurn[b] ?? -1
            if ta != tb { return ta < tb }
            let fa = byMember[a]!.map(\.addOrder).min()!, fb = byMember[b]!.map(\.addOrder).min()!
            return fa < fb
        }
        var result: [Ranked] = []
        result.reserveCapacity(items.count)
        var round = 0
        while result.count < items.count {
            for user in rotation {
                guard let list = byMember[user], round < list.count else { continue }
                let item = list[round]
                let name = names[user] ?? item.addedByName
                let reason = round == 0 ? "\(name)'s turn" : "\(name)'s turn, round \(round + 1)"
                result.append(Ranked(item: item, reason: reason))
            }
            round += 1
        }
        return result
    }
}

extension SessionState {
    /// The queue in play order with each item's reason.
    public func rankedQueue() -> [QueueRanking.Ranked] {
        switch settings.ordering {
        case .votes:
            return QueueRanking.byVotes(queue, equalScores: rules.equalScores).map {
                QueueRanking.Ranked(item: $0, reason: QueueItem.votesReason(score: $0.score))
            }
        case .fair:
            var names: [UserID: String] = [:]
            for member in members { names[member.userId] = member.displayName }
            // The item prepared to follow the current one has taken its adder's turn already.
            var turns = lastTurn
            if let upNext { turns[upNext.item.addedBy] = turnCounter + 1 }
            return QueueRanking.fair(queue, lastTurn: turns, names: names, equalScores: rules.equalScores)
        }
    }

    /// The item that plays next, if any.
    public func queueHead() -> ItemRecord? {
        switch settings.ordering {
        case .votes: queue.min { QueueRanking.votesOrder($0, $1, equalScores: rules.equalScores) }
        case .fair: rankedQueue().first?.item
        }
    }

    /// Item IDs in play order.
    public func queueOrder() -> [ItemID] {
        switch settings.ordering {
        case .votes: QueueRanking.votesPermutation(queue, equalScores: rules.equalScores).map { queue[$0].id }
        case .fair: rankedQueue().map(\.item.id)
        }
    }
}
