extension QRCode {
    /// The symbol as text, two module rows per line using half blocks (`▀ ▄ █` and space).
    ///
    /// Blocks draw dark modules; pass `invert: true` on a light-on-dark terminal so blocks draw the
    /// light modules and the quiet zone instead. `quietZone` is in modules (the standard asks for 4;
    /// 2 usually scans and saves space).
    public func terminalLines(quietZone: Int = 2, invert: Bool = false) -> [String] {
        precondition(quietZone >= 0, "quietZone must not be negative")
        let range = -quietZone..<size + quietZone
        // A filler row past the bottom when the height is odd is terminal background, never a block.
        func block(_ x: Int, _ y: Int) -> Bool {
            guard y < range.upperBound else { return false }
            return isDark(x: x, y: y) != invert
        }
        var lines: [String] = []
        for top in stride(from: range.lowerBound, to: range.upperBound, by: 2) {
            var line = ""
            for x in range {
                switch (block(x, top), block(x, top + 1)) {
                case (true, true): line += "█"
                case (true, false): line += "▀"
                case (false, true): line += "▄"
                case (false, false): line += " "
                }
            }
            lines.append(line)
        }
        return lines
    }

    /// A standalone SVG document: white background, one black `<path>` for the dark modules.
    ///
    /// The viewBox is in modules (symbol plus `quietZone` on each side) and width/height are that
    /// times `moduleSize` pixels; `crispEdges` keeps neighbouring modules from showing seams.
    /// `stroke="none"` is the SVG default but spelled out: ImageMagick's built-in renderer strokes
    /// paths otherwise, swelling every module until the code no longer scans.
    public func svg(moduleSize: Int = 8, quietZone: Int = 4) -> String {
        precondition(moduleSize > 0, "moduleSize must be positive")
        precondition(quietZone >= 0, "quietZone must not be negative")
        let side = size + 2 * quietZone
        let pixels = side * moduleSize
        // One subpath per horizontal run of dark modules keeps the path short.
        var path = ""
        for y in 0..<size {
            var x = 0
            while x < size {
                guard isDark(x: x, y: y) else { x += 1; continue }
                let start = x
                while x < size, isDark(x: x, y: y) { x += 1 }
                let run = x - start
                path += "M\(start + quietZone),\(y + quietZone)h\(run)v1h-\(run)z"
            }
        }
        return """
            <svg xmlns="http://www.w3.org/2000/svg" version="1.1" viewBox="0 0 \(side) \(side)" \
            width="\(pixels)" height="\(pixels)" shape-rendering="crispEdges">\
            <rect width="\(side)" height="\(side)" fill="#ffffff"/>\
            <path d="\(path)" fill="#000000" stroke="none"/></svg>

            """
    }
}
