import Testing
import JamQR

/// Public behaviour: a known symbol, version choice, limits and input validation.
@Suite struct QRCodeTests {
    // "HELLO WORLD" in byte mode, level M, from segno 1.6.6 (padding fixed; qrcode 8.2 agrees).
    static let helloWorld = [
        "111111101100101111111",
        "100000100001001000001",
        "101110100101001011101",
        "101110101001001011101",
        "101110101110101011101",
        "100000101001001000001",
        "111111101010101111111",
        "000000001001100000000",
        "100010111111011111001",
        "000100001011100001111",
        "001111110011011010010",
        "111110001100010000000",
        "111110101010101100110",
        "000000001010111101011",
        "111111101110101011010",
        "100000100101110110011",
        "101110101101011000110",
        "101110100100100011011",
        "101110100111000111000",
        "100000100001010000000",
        "111111101111111110101",
    ]

    @Test func helloWorldVersion1() throws {
        let code = try QRCode("HELLO WORLD")
        #expect(code.version == 1 && code.size == 21 && code.mask == 4 && code.correction == .medium)
        #expect(code.bitRows == Self.helloWorld)
    }

    @Test func joinLinkFitsSmallVersions() throws {
        let link = "http://192.168.1.20:8080/j/AB3K7Q"  // 33 bytes: one more than 2-L holds
        #expect(try QRCode(link, correction: .low).version == 3)
        #expect(try QRCode(link).version == 3)
        #expect(try QRCode(link, correction: .high).version == 4)
    }

    @Test(arguments: [
        // (level, bytes, expected version): the last length that fits a version and the first that does not.
        (ErrorCorrection.low, 17, 1), (.low, 18, 2), (.medium, 14, 1), (.medium, 15, 2),
        (.quartile, 11, 1), (.quartile, 12, 2), (.high, 7, 1), (.high, 8, 2),
        (.medium, 180, 9), (.medium, 181, 10), (.low, 2953, 40), (.high, 1273, 40),
    ])
    func smallestVersionIsChosen(level: ErrorCorrection, length: Int, version: Int) throws {
        let code = try QRCode(String(repeating: "x", count: length), correction: level)
        #expect(code.version == version)
        #expect(code.size == 4 * version + 17)
    }

    @Test func utf8IsCountedInBytes() throws {
        // 6 characters but 18 UTF-8 bytes: too many for 1-L (17).
        #expect(try QRCode("日本語日本語", correction: .low).version == 2)
    }

    @Test func tooLongThrows() {
        #expect(throws: QRCodeError.tooLong) { try QRCode(String(repeating: "x", count: 2954), correction: .low) }
        #expect(throws: QRCodeError.tooLong) { try QRCode(String(repeating: "x", count: 1274), correction: .high) }
        #expect(throws: QRCodeError.tooLong) { try QRCode(String(repeating: "x", count: 18), correction: .low, version: 1) }
    }

    @Test func invalidForcedChoicesThrow() {
        #expect(throws: QRCodeError.invalidVersion(0)) { try QRCode("a", version: 0) }
        #expect(throws: QRCodeError.invalidVersion(41)) { try QRCode("a", version: 41) }
        #expect(throws: QRCodeError.invalidMask(8)) { try QRCode("a", mask: 8) }
        #expect(throws: QRCodeError.invalidMask(-1)) { try QRCode("a", mask: -1) }
    }

    @Test func forcedVersionAndMaskAreUsed() throws {
        let code = try QRCode("a", correction: .quartile, version: 12, mask: 6)
        #expect(code.version == 12 && code.mask == 6 && code.size == 65)
    }

    @Test func emptyStringEncodes() throws {
        let code = try QRCode("")
        #expect(code.version == 1)
    }

    @Test func equalInputsGiveEqualCodes() throws {
        #expect(try QRCode("abc") == QRCode("abc"))
        #expect(try QRCode("abc") != QRCode("abd"))
        #expect(try QRCode("abc") == QRCode(bytes: Array("abc".utf8)))
    }

    @Test func outsideTheSymbolIsLight() throws {
        let code = try QRCode("a")
        #expect(code.isDark(x: 0, y: 0))
        #expect(!code.isDark(x: -1, y: 0) && !code.isDark(x: 0, y: code.size) && !code.isDark(x: 21, y: 3))
    }

    @Test func functionPatternsArePresent() throws {
        let code = try QRCode(String(repeating: "z", count: 300), correction: .high)
        let n = code.size
        for (cx, cy) in [(3, 3), (n - 4, 3), (3, n - 4)] {
            // Finder: dark 7×7 ring, light ring, dark 3×3 core, light separator.
            #expect(code.isDark(x: cx, y: cy) && code.isDark(x: cx - 3, y: cy - 3))
            #expect(!code.isDark(x: cx - 2, y: cy) && !code.isDark(x: cx + 2, y: cy + 2))
        }
        for i in 8..<n - 8 {
            #expect(code.isDark(x: i, y: 6) == (i % 2 == 0))
            #expect(code.isDark(x: 6, y: i) == (i % 2 == 0))
        }
        #expect(code.isDark(x: 8, y: n - 8))  // the dark module
    }
}
