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

/// A small, deterministic generator (SplitMix64): reproducible jitter in tests.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// Creates the generator; without a seed it starts from system randomness.
    public init(seed: UInt64? = nil) {
        var system = SystemRandomNumberGenerator()
        state = seed ?? system.next()
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
