import Testing
@testable import JamQR

/// Cross-checks against matrices from the reference encoder (segno, confirmed with qrcode).
@Suite struct ReferenceVectorTests {
    @Test func fixtureCoversTheIntendedSpread() throws {
        let vectors = try Fixtures.vectors()
        #expect(vectors.count >= 30)
        #expect(Set(vectors.map(\.correction)) == Set(ErrorCorrection.allCases))
        #expect(Set(vectors.map(\.mask)) == Set(0...7))
        #expect(vectors.contains { $0.version >= 7 } && vectors.contains { $0.version == 40 })
        #expect(vectors.contains { $0.text.utf8.count != $0.text.unicodeScalars.count })
    }

    @Test(arguments: try Fixtures.vectors())
    func matrixMatchesReference(_ vector: ReferenceVector) throws {
        let code = try QRCode(vector.text, correction: vector.correction,
                              version: vector.forcedVersion, mask: vector.forcedMask)
        #expect(code.version == vector.version)
        #expect(code.mask == vector.mask)
        #expect(code.size == vector.rows.count)
        let rows = code.bitRows
        for (y, expected) in vector.rows.enumerated() where rows[y] != expected {
            Issue.record("row \(y) differs:\n ours \(rows[y])\n  ref \(expected)")
            break
        }
    }

    @Test(arguments: try Fixtures.vectors())
    func penaltiesMatchReferenceAndAutoMaskIsMinimal(_ vector: ReferenceVector) throws {
        let unmasked = QRCode.unmaskedMatrix(bytes: Array(vector.text.utf8), correction: vector.correction,
                                             version: vector.version)
        let scores = QRPenalty.maskScores(for: unmasked)
        #expect(scores == vector.penalties)

        let automatic = try QRCode(vector.text, correction: vector.correction, version: vector.version)
        #expect(scores[automatic.mask] == scores.min())
        #expect(automatic.mask == scores.firstIndex(of: scores.min()!))
    }
}
