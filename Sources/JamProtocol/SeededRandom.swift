/// SplitMix64: a small, fast generator that gives the same sequence on every platform
/// and toolchain from the same seed. The one seeded generator of the package: the
/// fallback shuffle (a session's order is reproducible), reconnect jitter, the
/// benchmarks and every seeded test use it, so "seed 7" means one sequence everywhere.
public struct SeededRandom: RandomNumberGenerator, Sendable, Hashable {
    private var state: UInt64

    /// Creates the generator; without a seed it starts from system randomness.
    public init(seed: UInt64? = nil) {
        var system = SystemRandomNumberGenerator()
        state = seed ?? system.next()
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
