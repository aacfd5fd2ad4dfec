/// Splits data codewords into Reed–Solomon blocks and interleaves them (ISO/IEC 18004 §7.5–7.6).
enum QRBlocks {
    /// The final codeword sequence: data columns across all blocks, then error correction columns.
    static func interleave(data: [UInt8], version: Int, correction: ErrorCorrection) -> [UInt8] {
        let level = correction.tableIndex
        let blockCount = QRTables.blockCount[level][version]
        let eccLength = QRTables.eccCodewordsPerBlock[level][version]
        let total = QRTables.totalCodewords(version: version)
        // When the total does not divide evenly, the last blocks carry one more data codeword.
        let shortBlockCount = blockCount - total % blockCount
        let shortDataLength = total / blockCount - eccLength
        let generator = ReedSolomon.generator(degree: eccLength)

        var dataBlocks: [ArraySlice<UInt8>] = []
        var eccBlocks: [[UInt8]] = []
        var offset = 0
        for index in 0..<blockCount {
            let length = shortDataLength + (index < shortBlockCount ? 0 : 1)
            let block = data[offset..<offset + length]
            offset += length
            dataBlocks.append(block)
            eccBlocks.append(ReedSolomon.remainder(of: Array(block), generator: generator))
        }

        var result: [UInt8] = []
        result.reserveCapacity(total)
        for column in 0...shortDataLength {
            for block in dataBlocks where column < block.count {
                result.append(block[block.startIndex + column])
            }
        }
        for column in 0..<eccLength {
            for block in eccBlocks { result.append(block[column]) }
        }
        return result
    }
}
