/// A QR Code (Model 2) symbol holding a string in byte mode, ready to render.
public struct QRCode: Sendable, Equatable {
    /// Modules per side, `4 × version + 17`, without quiet zone.
    public let size: Int
    /// Symbol version, 1...40.
    public let version: Int
    /// Data mask pattern applied, 0...7.
    public let mask: Int
    /// Error correction level the symbol was built with.
    public let correction: ErrorCorrection
    // Row-major, true = dark; flat so the value stays one cheap copy-on-write buffer.
    private let modules: [Bool]

    /// Encodes `text` as UTF-8 in the smallest version that fits.
    ///
    /// `version` and `mask` force those choices and exist for tests and reproducible output;
    /// leave them nil to get the smallest version and the lowest-penalty mask.
    public init(
        _ text: String, correction: ErrorCorrection = .medium, version: Int? = nil, mask: Int? = nil
    ) throws(QRCodeError) {
        try self.init(bytes: Array(text.utf8), correction: correction, version: version, mask: mask)
    }

    /// Encodes raw bytes in byte mode; see ``init(_:correction:version:mask:)``.
    public init(
        bytes: [UInt8], correction: ErrorCorrection = .medium, version: Int? = nil, mask: Int? = nil
    ) throws(QRCodeError) {
        let chosenVersion = try Self.pickVersion(byteCount: bytes.count, correction: correction, forced: version)
        if let mask, !(0...7).contains(mask) { throw .invalidMask(mask) }

        var matrix = Self.unmaskedMatrix(bytes: bytes, correction: correction, version: chosenVersion)
        let chosenMask = mask ?? QRPenalty.bestMask(for: matrix)
        matrix.applyMask(chosenMask)
        matrix.drawFormatBits(correction: correction, mask: chosenMask)
        matrix.drawVersionBits()

        self.size = matrix.size
        self.version = chosenVersion
        self.mask = chosenMask
        self.correction = correction
        self.modules = matrix.dark
    }

    /// Whether the module at column `x`, row `y` is dark; anything outside the symbol is light (quiet zone).
    public func isDark(x: Int, y: Int) -> Bool {
        guard x >= 0, y >= 0, x < size, y < size else { return false }
        return modules[y * size + x]
    }

    static func pickVersion(byteCount: Int, correction: ErrorCorrection, forced: Int?) throws(QRCodeError) -> Int {
        if let forced {
            guard (1...40).contains(forced) else { throw .invalidVersion(forced) }
            guard QRDataCodewords.fits(byteCount: byteCount, version: forced, correction: correction) else {
                throw .tooLong
            }
            return forced
        }
        for candidate in 1...40
        where QRDataCodewords.fits(byteCount: byteCount, version: candidate, correction: correction) {
            return candidate
        }
        throw .tooLong
    }

    // Function patterns plus placed codewords, before masking: the state every mask is tried on.
    static func unmaskedMatrix(bytes: [UInt8], correction: ErrorCorrection, version: Int) -> QRMatrix {
        let data = QRDataCodewords.make(bytes: bytes, version: version, correction: correction)
        let codewords = QRBlocks.interleave(data: data, version: version, correction: correction)
        var matrix = QRMatrix(version: version)
        matrix.placeCodewords(codewords)
        return matrix
    }
}
