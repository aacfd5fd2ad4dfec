import JamMedia

/// The covers read lately, the least recently asked for dropped first once more than
/// `maxCount` or `maxBytes` are held. "No cover" is kept too: it costs a read as well.
struct CoverCache: Sendable {
    let maxCount: Int
    let maxBytes: Int
    private var entries: [String: CoverArt?] = [:]
    /// Ids, least recently asked for first.
    private var order: [String] = []
    private(set) var bytes = 0

    /// Holds at most `maxCount` covers of `maxBytes` together.
    init(maxCount: Int = 64, maxBytes: Int = 32 << 20) {
        self.maxCount = maxCount
        self.maxBytes = maxBytes
    }

    /// The cover kept for `id`: `.some(nil)` when it is known to have none, nil when not kept.
    mutating func cover(_ id: String) -> CoverArt?? {
        guard let cover = entries[id] else { return nil }
        touch(id)
        return .some(cover)
    }

    /// Keeps `cover` for `id`; a cover larger than `maxBytes` alone is not kept.
    mutating func keep(_ cover: CoverArt?, for id: String) {
        let size = cover?.data.count ?? 0
        guard size <= maxBytes else { return }
        if let old = entries.updateValue(cover, forKey: id) {
            bytes -= old?.data.count ?? 0
            order.removeAll { $0 == id }
        }
        order.append(id)
        bytes += size
        while order.count > maxCount || bytes > maxBytes {
            let dropped = order.removeFirst()
            bytes -= entries.removeValue(forKey: dropped)??.data.count ?? 0
        }
    }

    /// Forgets every cover (a new scan may have new ones).
    mutating func removeAll() {
        entries = [:]
        order = []
        bytes = 0
    }

    /// Makes `id` the most recently asked for.
    private mutating func touch(_ id: String) {
        guard let index = order.firstIndex(of: id), index != order.count - 1 else { return }
        order.append(order.remove(at: index))
    }
}
