import JamClient
import JamTestSupport

extension SessionStore {
    /// Waits until the store's snapshot satisfies `predicate` (an app member's view catching up).
    @discardableResult
    func until(_ what: String, timeout: Duration = .seconds(10), _ predicate: @Sendable (StoreSnapshot) -> Bool) async throws -> StoreSnapshot {
        var last: StoreSnapshot?
        return try await eventually("waiting for \(what); last: \(last.map { "\($0)" } ?? "none")", timeout: timeout, every: .milliseconds(10)) {
            let snapshot = current
            last = snapshot
            return predicate(snapshot) ? snapshot : nil
        }
    }
}
