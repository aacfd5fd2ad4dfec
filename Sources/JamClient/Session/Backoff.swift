/// Capped exponential back-off with full jitter for reconnects.
public struct Backoff: Sendable, Equatable {
    /// The first delay, in milliseconds.
    public var baseMs: Double = 250
    /// The longest delay, in milliseconds.
    public var capMs: Double = 15_000

    /// Creates the policy.
    public init(baseMs: Double = 250, capMs: Double = 15_000) {
        self.baseMs = baseMs
        self.capMs = capMs
    }

    /// The delay before attempt `attempt` (1 = the first retry): uniform in
    /// [0, min(cap, base · 2^(attempt−1))], so clients that dropped together do not return together.
    public func delayMs<R: RandomNumberGenerator>(attempt: Int, using random: inout R) -> Double {
        let ceiling = min(capMs, baseMs * Double(1 << min(max(attempt - 1, 0), 20)))
        return Double.random(in: 0...ceiling, using: &random)
    }
}
