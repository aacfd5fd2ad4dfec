import Testing
import JamQR

/// Terminal and SVG output reproduce the matrix exactly.
@Suite struct QRRenderTests {
    let code: QRCode

    init() throws { code = try QRCode("http://192.168.1.20:8080/j/AB3K7Q") }

    // Reads the half-block lines back into modules (true = block) for rows -quietZone..<size+quietZone.
    func decode(_ lines: [String]) -> [[Bool]] {
        lines.flatMap { line -> [[Bool]] in
            let cells = line.map { cell -> (Bool, Bool) in
                switch cell {
                case "█": (true, true)
                case "▀": (true, false)
                case "▄": (false, true)
                default: (false, false)
                }
            }
            return [cells.map(\.0), cells.map(\.1)]
        }
    }

    @Test(arguments: [0, 2, 4], [false, true])
    func terminalLinesRoundTrip(quietZone: Int, invert: Bool) {
        let lines = code.terminalLines(quietZone: quietZone, invert: invert)
        let side = code.size + 2 * quietZone
        #expect(lines.count == (side + 1) / 2)
        #expect(lines.allSatisfy { $0.count == side })
        let blocks = decode(lines)
        for y in 0..<side {
            for x in 0..<side {
                #expect(blocks[y][x] == (code.isDark(x: x - quietZone, y: y - quietZone) != invert))
            }
        }
        // The filler half-row below an odd-height picture is never a block.
        #expect(blocks[side].allSatisfy { !$0 })
    }

    @Test func terminalUsesOnlyHalfBlocks() {
        let used = Set(code.terminalLines().joined())
        #expect(used.isSubset(of: ["▀", "▄", "█", " "]))
    }

    @Test func svgIsSelfContained() {
        let svg = code.svg(moduleSize: 10, quietZone: 4)
        let side = code.size + 8
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""))
        #expect(svg.contains("viewBox=\"0 0 \(side) \(side)\""))
        #expect(svg.contains("width=\"\(side * 10)\" height=\"\(side * 10)\""))
        #expect(svg.contains("shape-rendering=\"crispEdges\""))
        #expect(svg.contains("fill=\"#000000\" stroke=\"none\""))
        #expect(svg.contains("<rect width=\"\(side)\" height=\"\(side)\" fill=\"#ffffff\"/>"))
        #expect(svg.ranges(of: "<path").count == 1)
        #expect(!svg.contains("href") && !svg.contains("url("))
    }

    @Test(arguments: [0, 4])
    func svgPathCoversExactlyTheDarkModules(quietZone: Int) {
        let svg = code.svg(quietZone: quietZone)
        let start = svg.firstRange(of: " d=\"")!.upperBound
        let path = svg[start...].prefix { $0 != "\"" }
        var dark = Set<[Int]>()
        // Each subpath is "M x,y h run v1 h-run z".
        for subpath in path.split(separator: "z") {
            let numbers = subpath.split { "Mhv,".contains($0) }.map { Int($0)! }
            let (x, y, run) = (numbers[0], numbers[1], numbers[2])
            #expect(numbers[3] == 1 && numbers[4] == -run)
            for column in x..<x + run { dark.insert([column - quietZone, y - quietZone]) }
        }
        var expected = Set<[Int]>()
        for y in 0..<code.size { for x in 0..<code.size where code.isDark(x: x, y: y) { expected.insert([x, y]) } }
        #expect(dark == expected)
    }
}
