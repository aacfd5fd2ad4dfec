import Testing
@testable import JamQR

/// Galois field, Reed–Solomon and BCH pieces against values printed in ISO/IEC 18004.
@Suite struct ReedSolomonTests {
    @Test func annexIExampleErrorCorrection() {
        // "01234567" as 1-M, ISO/IEC 18004 Annex I.
        let data: [UInt8] = [0x10, 0x20, 0x0C, 0x56, 0x61, 0x80, 0xEC, 0x11,
                             0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11]
        let ecc = ReedSolomon.remainder(of: data, generator: ReedSolomon.generator(degree: 10))
        #expect(ecc == [0xA5, 0x24, 0xD4, 0xC1, 0xED, 0x36, 0xC7, 0x87, 0x2C, 0x55])
    }

    @Test func fieldArithmetic() {
        #expect(GF256.multiply(0, 0x53) == 0)
        #expect(GF256.multiply(1, 0x53) == 0x53)
        #expect(GF256.multiply(0x80, 2) == 0x1D)  // x⁸ reduces to x⁴ + x³ + x² + 1
        for a in 1...255 {
            let inverse = (1...255).first { GF256.multiply(UInt8(a), UInt8($0)) == 1 }
            #expect(inverse != nil)
        }
    }

    @Test func generatorOfDegreeSevenMatchesAnnexA() {
        // g(x) = x⁷ + α⁸⁷x⁶ + α²²⁹x⁵ + α¹⁴⁶x⁴ + α¹⁴⁹x³ + α²³⁸x² + α¹⁰²x + α²¹
        func alpha(_ power: Int) -> UInt8 { (0..<power).reduce(1) { value, _ in GF256.multiply(value, 2) } }
        #expect(ReedSolomon.generator(degree: 7) == [87, 229, 146, 149, 238, 102, 21].map(alpha))
    }

    @Test func formatAndVersionWords() {
        #expect(QRMatrix.formatBits(correction: .medium, mask: 0) == 0x5412)
        #expect(QRMatrix.formatBits(correction: .low, mask: 0) == 0x77C4)
        #expect(QRMatrix.formatBits(correction: .high, mask: 7) == 0x083B)
        #expect(QRMatrix.versionBits(version: 7) == 0x07C94)
        #expect(QRMatrix.versionBits(version: 40) == 0x28C69)
    }
}
