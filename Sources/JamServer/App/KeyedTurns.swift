/// Runs the bodies given one key one at a time, in the order they came; bodies of other keys
/// run beside them. For work whose steps read, wait, then write, and must not interleave with
/// another run of itself for the same thing (a lease, a user's move between sessions).
package actor KeyedTurns<Key: Hashable & Sendable> {
    /// The callers waiting for each key's turn; a key present is one whose turn is taken.
    var waiting: [Key: [CheckedContinuation<Void, Never>]] = [:]

    package init() {}

    /// Runs `body` once every turn taken before it for `key` has ended.
    package func inTurn<T: Sendable>(_ key: Key, _ body: @Sendable () async throws -> T) async rethrows -> T {
        if waiting[key] != nil {
            await withCheckedContinuation { waiting[key, default: []].append($0) }
        } else {
            waiting[key] = []
        }
        defer {
            if var queue = waiting[key], !queue.isEmpty {
                let next = queue.removeFirst()
                waiting[key] = queue
                next.resume()
            } else {
                waiting[key] = nil
            }
        }
        return try await body()
    }

    /// Keys whose turn is taken now (the table holds nothing for keys nobody waits on).
    package var busyKeys: Int { waiting.count }
}
