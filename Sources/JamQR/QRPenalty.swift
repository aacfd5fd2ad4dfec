/// Mask evaluation (ISO/IEC 18004 §7.8.3): the lower the score, the easier the symbol is to scan.
///
/// Scores are taken after masking but before format and version information are written, with those
/// areas and the dark module light, and a 1:1:3:1:1 finder-like run counts once when light for four
/// modules (the edge counts as light) on either side. That is how segno evaluates, so the reference
/// encoder the tests compare against picks the same mask.
enum QRPenalty {
    /// The first mask with the lowest score for a grid that has codewords placed but no mask yet.
    static func bestMask(for unmasked: QRMatrix) -> Int {
        let scores = maskScores(for: unmasked)
        return scores.indices.min { scores[$0] < scores[$1] } ?? 0
    }

    /// Scores of masks 0...7 applied to a grid that has codewords placed but no mask yet.
    static func maskScores(for unmasked: QRMatrix) -> [Int] {
        (0...7).map { mask in
            var candidate = unmasked
            candidate.applyMask(mask)
            return score(candidate)
        }
    }

    /// The total penalty N1 + N2 + N3 + N4 of a grid.
    static func score(_ matrix: QRMatrix) -> Int {
        let size = matrix.size
        var total = 0
        var line = [Bool](repeating: false, count: size)
        for index in 0..<size {
            for other in 0..<size { line[other] = matrix[other, index] }
            total += runPenalty(line) + finderPenalty(line)
            for other in 0..<size { line[other] = matrix[index, other] }
            total += runPenalty(line) + finderPenalty(line)
        }
        for y in 1..<size {
            for x in 1..<size {
                let colour = matrix[x, y]
                if colour == matrix[x - 1, y], colour == matrix[x, y - 1], colour == matrix[x - 1, y - 1] {
                    total += 3
                }
            }
        }
        let darkCount = matrix.dark.reduce(0) { $0 + ($1 ? 1 : 0) }
        let cells = size * size
        // 10 points per full 5 % step away from 50 % dark, in integers: |dark/cells − ½| · 20.
        total += 10 * (abs(20 * darkCount - 10 * cells) / cells)
        return total
    }

    // N1: 3 points for a run of five same-coloured modules, one more per extra module.
    static func runPenalty(_ line: [Bool]) -> Int {
        var penalty = 0
        var runLength = 0
        for (index, colour) in line.enumerated() {
            if index > 0, colour == line[index - 1] {
                runLength += 1
            } else {
                if runLength >= 5 { penalty += runLength - 2 }
                runLength = 1
            }
        }
        if runLength >= 5 { penalty += runLength - 2 }
        return penalty
    }

    private static let finderLike: [Bool] = [true, false, true, true, true, false, true]

    // N3: 40 points per dark:light:dark:light:dark = 1:1:3:1:1 run with four light modules beside it.
    static func finderPenalty(_ line: [Bool]) -> Int {
        let size = line.count
        func isLight(_ range: Range<Int>) -> Bool {
            line[max(range.lowerBound, 0)..<min(range.upperBound, size)].allSatisfy { !$0 }
        }
        var penalty = 0
        var start = 0
        while start + 7 <= size {
            if line[start..<start + 7].elementsEqual(finderLike),
               isLight(start - 4..<start) || isLight(start + 7..<start + 11) {
                penalty += 40
                start += 7
            } else {
                start += 1
            }
        }
        return penalty
    }
}
