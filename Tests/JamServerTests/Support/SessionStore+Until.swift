import JamClient
import JamTestSupport

extension SessionStore {
    /// Waits until the store's snapshot satisfies `predicate` (an app member's view catching up).
    @discardableResult
    func until(_ what: String, timeout: Duration = .seconds(10), _ predicate: @Sendable (StoreSnapshot) -> Bool) async throws -> StoreSnapshot {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let snapshot = await current
            if predicate(snapshot) { return snapshot }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw TestFailure("timed out waiting for \(what); last: \(await current)")
    }
}
