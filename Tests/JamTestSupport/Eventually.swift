/// Calls `probe` every `interval` until it returns a value, for at most `timeout`, and
/// returns that value. On time out it throws a `TestFailure` saying what never happened;
/// `what` is read then, so it can describe the last thing the probe saw. The probe runs in
/// the caller's isolation.
public func eventually<T>(
    isolation: isolated (any Actor)? = #isolation, _ what: @autoclosure () -> String, timeout: Duration = .seconds(10), every interval: Duration = .milliseconds(20),
    _ probe: () async throws -> T?
) async throws -> T {
    let deadline = ContinuousClock.now + timeout
    while true {
        if let value = try await probe() { return value }
        guard ContinuousClock.now < deadline else { throw TestFailure("timed out after \(timeout): \(what())") }
        try await Task.sleep(for: interval)
    }
}

/// Calls `condition` every `interval` until it holds, for at most `timeout`; throws a
/// `TestFailure` saying what never happened otherwise.
public func eventually(
    isolation: isolated (any Actor)? = #isolation, _ what: @autoclosure () -> String, timeout: Duration = .seconds(10), every interval: Duration = .milliseconds(20),
    until condition: () async throws -> Bool
) async throws {
    let _: Void = try await eventually(what(), timeout: timeout, every: interval) { try await condition() ? () : nil }
}
