/// Per-version constants from ISO/IEC 18004 (Tables 1, 9 and Annex E).
enum QRTables {
    // Error correction codewords per block, [level][version]; index 0 is unused.
    static let eccCodewordsPerBlock: [[Int]] = [
        [0, 7, 10, 15, 20, 26, 18, 20, 24, 30, 18, 20, 24, 26, 30, 22, 24, 28, 30, 28, 28,
         28, 28, 30, 30, 26, 28, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30],
        [0, 10, 16, 26, 18, 24, 16, 18, 22, 22, 26, 30, 22, 22, 24, 24, 28, 28, 26, 26, 26,
         26, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28],
        [0, 13, 22, 18, 26, 18, 24, 18, 22, 20, 24, 28, 26, 24, 20, 30, 24, 28, 28, 26, 30,
         28, 30, 30, 30, 30, 28, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30],
        [0, 17, 28, 22, 16, 22, 28, 26, 26, 24, 28, 24, 28, 22, 24, 24, 30, 28, 28, 26, 28,
         30, 24, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30],
    ]

    // Number of Reed–Solomon blocks, [level][version]; index 0 is unused.
    static let blockCount: [[Int]] = [
        [0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 4, 4, 4, 4, 4, 6, 6, 6, 6, 7, 8,
         8, 9, 9, 10, 12, 12, 12, 13, 14, 15, 16, 17, 18, 19, 19, 20, 21, 22, 24, 25],
        [0, 1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16,
         17, 17, 18, 20, 21, 23, 25, 26, 28, 29, 31, 33, 35, 37, 38, 40, 43, 45, 47, 49],
        [0, 1, 1, 2, 2, 4, 4, 6, 6, 8, 8, 8, 10, 12, 16, 12, 17, 16, 18, 21, 20,
         23, 23, 25, 27, 29, 34, 34, 35, 38, 40, 43, 45, 48, 51, 53, 56, 59, 62, 65, 68],
        [0, 1, 1, 2, 4, 4, 4, 5, 6, 8, 8, 11, 11, 16, 16, 18, 16, 19, 21, 25, 25,
         25, 34, 30, 32, 35, 37, 40, 42, 45, 48, 51, 54, 57, 60, 63, 66, 70, 74, 77, 81],
    ]

    /// Modules left for codewords once every function pattern and format/version area is taken;
    /// may not be a multiple of 8 (the rest are remainder bits).
    static func rawDataModules(version: Int) -> Int {
        var modules = (16 * version + 128) * version + 64
        if version >= 2 {
            let alignCount = version / 7 + 2
            modules -= (25 * alignCount - 10) * alignCount - 55
            if version >= 7 { modules -= 36 }
        }
        return modules
    }

    /// All codewords in the symbol, data plus error correction.
    static func totalCodewords(version: Int) -> Int { rawDataModules(version: version) / 8 }

    /// Data codewords available at this version and level.
    static func dataCodewords(version: Int, correction: ErrorCorrection) -> Int {
        let level = correction.tableIndex
        return totalCodewords(version: version) - eccCodewordsPerBlock[level][version] * blockCount[level][version]
    }

    /// Centre coordinates of alignment patterns along each axis (Annex E), empty for version 1.
    static func alignmentPositions(version: Int) -> [Int] {
        guard version >= 2 else { return [] }
        let count = version / 7 + 2
        // Annex E spaces the patterns evenly from the far edge with an even step; version 32 is the
        // one version where the rounded formula lands on the table's exception.
        let step = version == 32 ? 26 : (version * 4 + count * 2 + 1) / (count * 2 - 2) * 2
        let size = version * 4 + 17
        var positions = [6]
        for index in stride(from: count - 2, through: 0, by: -1) {
            positions.append(size - 7 - index * step)
        }
        return positions
    }
}
