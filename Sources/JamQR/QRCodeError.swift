/// Why a ``QRCode`` could not be made.
public enum QRCodeError: Error, Sendable, Hashable {
    /// The data does not fit in version 40, or in the forced version, at the requested correction level.
    case tooLong
    /// A forced version outside 1...40.
    case invalidVersion(Int)
    /// A forced mask outside 0...7.
    case invalidMask(Int)
}
