import Testing
import JamProtocol

/// The package's one seeded generator: every seeded test, the fallback shuffle and the benchmarks draw from it.
struct SeededRandomTests {
    @Test func aSeedGivesTheReferenceSplitMix64Sequence() {
        // Vigna's reference splitmix64.c from seed 1234567.
        var random = SeededRandom(seed: 1_234_567)
        #expect([random.next(), random.next(), random.next()] == [6_457_827_717_110_365_317, 3_203_168_211_198_807_973, 9_817_491_932_198_370_423])
    }

    @Test func equalSeedsGiveEqualSequences() {
        var a = SeededRandom(seed: 42), b = SeededRandom(seed: 42)
        #expect((0..<100).map { _ in a.next() } == (0..<100).map { _ in b.next() })
    }
}
