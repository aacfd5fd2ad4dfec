/// How much of the symbol is spent on Reed–Solomon recovery: about 7 %, 15 %, 25 % or 30 % of the codewords.
public enum ErrorCorrection: Sendable, Hashable, CaseIterable {
    case low, medium, quartile, high

    // Row of the block tables, ordered L, M, Q, H as in ISO/IEC 18004 Table 9.
    var tableIndex: Int {
        switch self {
        case .low: 0
        case .medium: 1
        case .quartile: 2
        case .high: 3
        }
    }

    // The two format-information bits; the standard's order is deliberately not L, M, Q, H.
    var formatBits: Int {
        switch self {
        case .low: 1
        case .medium: 0
        case .quartile: 3
        case .high: 2
        }
    }
}
