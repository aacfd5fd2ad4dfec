import Testing
@testable import JamQR

/// The per-version constants, checked for all 40 versions against the reference encoder's tables.
@Suite struct QRTablesTests {
    struct Row: Sendable {
        let version: Int
        let alignment: [Int]
        let blocks: [String]  // L, M, Q, H as "count*total/data" groups joined by "+"
    }

    static func rows() throws -> [Row] {
        try Fixtures.dataLines(of: "qr_tables.txt").map { line in
            let fields = line.split(separator: " ")
            return Row(version: Int(fields[0])!,
                       alignment: fields[1] == "-" ? [] : fields[1].split(separator: ",").map { Int($0)! },
                       blocks: fields[2...].map(String.init))
        }
    }

    // The block groups our tables imply, in the reference's notation.
    static func blockLayout(version: Int, correction: ErrorCorrection) -> String {
        let level = correction.tableIndex
        let count = QRTables.blockCount[level][version]
        let ecc = QRTables.eccCodewordsPerBlock[level][version]
        let total = QRTables.totalCodewords(version: version)
        let shortCount = count - total % count, shortTotal = total / count
        var groups = ["\(shortCount)*\(shortTotal)/\(shortTotal - ecc)"]
        if shortCount < count { groups.append("\(count - shortCount)*\(shortTotal + 1)/\(shortTotal + 1 - ecc)") }
        return groups.joined(separator: "+")
    }

    @Test func allFortyVersionsMatchReference() throws {
        let rows = try Self.rows()
        #expect(rows.map(\.version) == Array(1...40))
        for row in rows {
            #expect(QRTables.alignmentPositions(version: row.version) == row.alignment, "version \(row.version)")
            let ours = [ErrorCorrection.low, .medium, .quartile, .high].map {
                Self.blockLayout(version: row.version, correction: $0)
            }
            #expect(ours == row.blocks, "version \(row.version)")
        }
    }

    @Test func rawModulesLeaveOnlyStandardRemainderBits() {
        // ISO/IEC 18004 Table 1: remainder bits are 0, 7, 3, 4, 3 or 0 depending on the version.
        let remainders = (1...40).map { QRTables.rawDataModules(version: $0) % 8 }
        #expect(remainders == [0] + Array(repeating: 7, count: 5) + Array(repeating: 0, count: 7)
                + Array(repeating: 3, count: 7) + Array(repeating: 4, count: 7)
                + Array(repeating: 3, count: 7) + Array(repeating: 0, count: 6))
        #expect(QRTables.totalCodewords(version: 1) == 26)
        #expect(QRTables.totalCodewords(version: 40) == 3706)
    }
}
