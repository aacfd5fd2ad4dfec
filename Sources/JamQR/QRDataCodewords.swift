/// Builds the data codeword sequence for one byte-mode segment (ISO/IEC 18004 §7.4).
enum QRDataCodewords {
    /// Width of the character count field in byte mode.
    static func countBits(version: Int) -> Int { version <= 9 ? 8 : 16 }

    /// Whether `byteCount` bytes fit at this version and level.
    static func fits(byteCount: Int, version: Int, correction: ErrorCorrection) -> Bool {
        let bits = countBits(version: version)
        guard byteCount < 1 << bits else { return false }
        let needed = 4 + bits + 8 * byteCount
        return needed <= 8 * QRTables.dataCodewords(version: version, correction: correction)
    }

    /// Mode indicator, count, data, terminator and padding, filling the version's data capacity exactly.
    /// The caller has already checked `fits`.
    static func make(bytes: [UInt8], version: Int, correction: ErrorCorrection) -> [UInt8] {
        let capacityBits = 8 * QRTables.dataCodewords(version: version, correction: correction)
        var writer = BitWriter()
        writer.append(0b0100, bits: 4)
        writer.append(bytes.count, bits: countBits(version: version))
        for byte in bytes { writer.append(Int(byte), bits: 8) }
        // The terminator may be cut short when the data ends near capacity.
        writer.append(0, bits: min(4, capacityBits - writer.bitCount))
        writer.append(0, bits: (8 - writer.bitCount % 8) % 8)
        var codewords = writer.bytes
        var pad: UInt8 = 0xEC
        while codewords.count * 8 < capacityBits {
            codewords.append(pad)
            pad = pad == 0xEC ? 0x11 : 0xEC
        }
        return codewords
    }
}

/// Appends big-endian bit fields into bytes.
struct BitWriter {
    private(set) var bytes: [UInt8] = []
    private(set) var bitCount = 0

    mutating func append(_ value: Int, bits: Int) {
        for shift in stride(from: bits - 1, through: 0, by: -1) {
            if bitCount % 8 == 0 { bytes.append(0) }
            if (value >> shift) & 1 == 1 { bytes[bytes.count - 1] |= UInt8(0x80 >> (bitCount % 8)) }
            bitCount += 1
        }
    }
}
