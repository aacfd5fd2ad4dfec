import Testing
import JamCore

struct JoinCodeTests {
    /// A fixed sequence, so the random tries are the same on every run.
    struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    @Test func theLastFreeCodeOfANearlyFullSetIsFound() {
        var generator = SplitMix(state: 1)
        let codes = JoinCodes.pirateRadio
        let free = "4711"
        #expect(codes.free(using: &generator) { $0 != free } == free)
    }

    @Test func aFullSetHasNoFreeCodeAndTheSearchEnds() {
        var generator = SplitMix(state: 2)
        #expect(JoinCodes.pirateRadio.free(using: &generator) { _ in true } == nil)
        #expect(JoinCodes.openJam.free(using: &generator) { _ in true } == nil)
    }

    @Test func everyCodeOfASmallSetIsReachedAndEachIsWellFormed() {
        let codes = JoinCodes(alphabet: ["A", "B", "C"], length: 2)
        #expect(codes.count == 9)
        var taken: Set<String> = []
        var generator = SplitMix(state: 3)
        while let code = codes.free(using: &generator, isTaken: { taken.contains($0) }) {
            #expect(code.count == 2 && code.allSatisfy { "ABC".contains($0) })
            taken.insert(code)
        }
        #expect(taken.count == 9)
    }

    @Test func pirateRadioCodesRunFrom1000To9999AsItsServerMakesThem() {
        var generator = SplitMix(state: 4)
        var made: Set<String> = []
        for _ in 0..<20_000 {
            let code = JoinCodes.pirateRadio.make(using: &generator)
            #expect(code.count == 4 && code.allSatisfy(\.isASCII))
            made.insert(code)
        }
        let numbers = made.compactMap { Int($0) }
        #expect(numbers.count == made.count)
        #expect(numbers.min()! >= 1000 && numbers.max()! <= 9999)
        // The search past the random tries walks the same codes: "0999" is never offered.
        #expect(JoinCodes.pirateRadio.free(using: &generator) { $0 != "0999" && $0 != "1000" } == "1000")
        #expect(JoinCodes.pirateRadio.free(using: &generator) { $0 != "0999" } == nil)
    }

    @Test func theNumberOfCodesIsTheAlphabetToTheLength() {
        #expect(JoinCodes.pirateRadio.count == 9_000)
        #expect(JoinCodes.openJam.count == 887_503_681)
        #expect(JoinCodes(alphabet: Array("ABCDEFGHIJKLMNOP"), length: 20).count == nil)
    }
}
