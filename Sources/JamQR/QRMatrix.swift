/// The module grid while a symbol is being built: function patterns, codeword placement,
/// masking and the format/version areas (ISO/IEC 18004 §6.3, §7.7–7.10).
struct QRMatrix: Sendable {
    let version: Int
    let size: Int
    /// Row-major module colours, true = dark.
    private(set) var dark: [Bool]
    // Modules that data and masks must not touch.
    private var isFunction: [Bool]

    /// A grid with every function pattern drawn and the format/version areas reserved (left light).
    init(version: Int) {
        self.version = version
        self.size = version * 4 + 17
        self.dark = Array(repeating: false, count: size * size)
        self.isFunction = Array(repeating: false, count: size * size)
        drawFunctionPatterns()
    }

    subscript(x: Int, y: Int) -> Bool { dark[y * size + x] }

    private mutating func setFunction(x: Int, y: Int, dark isDark: Bool) {
        dark[y * size + x] = isDark
        isFunction[y * size + x] = true
    }

    private mutating func drawFunctionPatterns() {
        for index in 0..<size {
            setFunction(x: 6, y: index, dark: index % 2 == 0)
            setFunction(x: index, y: 6, dark: index % 2 == 0)
        }
        drawFinder(centerX: 3, centerY: 3)
        drawFinder(centerX: size - 4, centerY: 3)
        drawFinder(centerX: 3, centerY: size - 4)

        let positions = QRTables.alignmentPositions(version: version)
        let last = positions.count - 1
        for (i, x) in positions.enumerated() {
            for (j, y) in positions.enumerated() {
                // The three corners already hold finder patterns.
                if (i == 0 && j == 0) || (i == 0 && j == last) || (i == last && j == 0) { continue }
                drawAlignment(centerX: x, centerY: y)
            }
        }

        // Reserve format areas (and the dark module) light, so mask evaluation sees them unset.
        for index in 0...8 {
            setFunction(x: 8, y: index, dark: self[8, index])
            setFunction(x: index, y: 8, dark: self[index, 8])
        }
        for index in 0..<8 {
            setFunction(x: size - 1 - index, y: 8, dark: false)
            setFunction(x: 8, y: size - 1 - index, dark: false)
        }
        if version >= 7 {
            for a in 0..<6 {
                for b in size - 11..<size - 8 {
                    setFunction(x: b, y: a, dark: false)
                    setFunction(x: a, y: b, dark: false)
                }
            }
        }
    }

    // Finder plus its light separator, clipped at the symbol edge.
    private mutating func drawFinder(centerX: Int, centerY: Int) {
        for dy in -4...4 {
            for dx in -4...4 {
                let x = centerX + dx, y = centerY + dy
                guard x >= 0, y >= 0, x < size, y < size else { continue }
                let ring = max(abs(dx), abs(dy))
                setFunction(x: x, y: y, dark: ring != 2 && ring != 4)
            }
        }
    }

    private mutating func drawAlignment(centerX: Int, centerY: Int) {
        for dy in -2...2 {
            for dx in -2...2 {
                setFunction(x: centerX + dx, y: centerY + dy, dark: max(abs(dx), abs(dy)) != 1)
            }
        }
    }

    /// Places codeword bits, most significant first, in the two-column zigzag from the bottom right;
    /// modules left over are remainder bits and stay light.
    mutating func placeCodewords(_ codewords: [UInt8]) {
        let bitTotal = codewords.count * 8
        var bitIndex = 0
        var right = size - 1
        while right >= 1 {
            // Column 6 is the vertical timing pattern; the zigzag skips over it.
            if right == 6 { right = 5 }
            let upward = (right + 1) & 2 == 0
            for step in 0..<size {
                let y = upward ? size - 1 - step : step
                for x in [right, right - 1] where !isFunction[y * size + x] && bitIndex < bitTotal {
                    let byte = codewords[bitIndex >> 3]
                    dark[y * size + x] = (byte >> (7 - UInt8(bitIndex & 7))) & 1 == 1
                    bitIndex += 1
                }
            }
            right -= 2
        }
    }

    /// XORs data mask pattern `mask` (0...7) over every non-function module.
    mutating func applyMask(_ mask: Int) {
        for y in 0..<size {
            for x in 0..<size where !isFunction[y * size + x] && Self.maskBit(mask, x: x, y: y) {
                dark[y * size + x].toggle()
            }
        }
    }

    /// Whether mask pattern `mask` inverts the module at (x, y); x is the column, y the row.
    static func maskBit(_ mask: Int, x: Int, y: Int) -> Bool {
        switch mask {
        case 0: (x + y) % 2 == 0
        case 1: y % 2 == 0
        case 2: x % 3 == 0
        case 3: (x + y) % 3 == 0
        case 4: (x / 3 + y / 2) % 2 == 0
        case 5: x * y % 2 + x * y % 3 == 0
        case 6: (x * y % 2 + x * y % 3) % 2 == 0
        default: ((x + y) % 2 + x * y % 3) % 2 == 0
        }
    }

    /// The 15-bit format word: level and mask, BCH(15,5) protected and XOR-masked with 0x5412.
    static func formatBits(correction: ErrorCorrection, mask: Int) -> Int {
        let data = correction.formatBits << 3 | mask
        var remainder = data
        for _ in 0..<10 { remainder = (remainder << 1) ^ ((remainder >> 9) * 0x537) }
        return (data << 10 | remainder) ^ 0x5412
    }

    /// The 18-bit version word: version and its BCH(18,6) check bits.
    static func versionBits(version: Int) -> Int {
        var remainder = version
        for _ in 0..<12 { remainder = (remainder << 1) ^ ((remainder >> 11) * 0x1F25) }
        return version << 12 | remainder
    }

    /// Writes both copies of the format information and the always-dark module.
    mutating func drawFormatBits(correction: ErrorCorrection, mask: Int) {
        let bits = Self.formatBits(correction: correction, mask: mask)
        func bit(_ index: Int) -> Bool { (bits >> index) & 1 == 1 }
        // Copy around the top-left finder, skipping the timing row and column.
        for index in 0...5 { setFunction(x: 8, y: index, dark: bit(index)) }
        setFunction(x: 8, y: 7, dark: bit(6))
        setFunction(x: 8, y: 8, dark: bit(7))
        setFunction(x: 7, y: 8, dark: bit(8))
        for index in 9..<15 { setFunction(x: 14 - index, y: 8, dark: bit(index)) }
        // Copy split between the top-right and bottom-left finders.
        for index in 0..<8 { setFunction(x: size - 1 - index, y: 8, dark: bit(index)) }
        for index in 8..<15 { setFunction(x: 8, y: size - 15 + index, dark: bit(index)) }
        setFunction(x: 8, y: size - 8, dark: true)
    }

    /// Writes both 6×3 version information blocks; versions below 7 have none.
    mutating func drawVersionBits() {
        guard version >= 7 else { return }
        let bits = Self.versionBits(version: version)
        for index in 0..<18 {
            let isDark = (bits >> index) & 1 == 1
            let a = size - 11 + index % 3, b = index / 3
            setFunction(x: a, y: b, dark: isDark)
            setFunction(x: b, y: a, dark: isDark)
        }
    }
}
