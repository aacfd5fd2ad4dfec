/// A REST caller's name for one change (the `Idempotency-Key` request header), so a request
/// sent again after a timeout or a dropped connection is answered as the first one was rather
/// than applied twice. A key belongs to the user who sent it, and to the session it names (for
/// a new session: to the sessions that user creates).
public struct IdempotencyKey: Hashable, Sendable, CustomStringConvertible {
    /// The request header that carries it.
    public static let header = "Idempotency-Key"
    /// The response header that says a request was answered from an earlier one with its key.
    public static let replayedHeader = "Idempotent-Replayed"
    /// Longest key, in characters (as common payment APIs allow).
    public static let maxLength = 255

    /// The key as the caller sent it.
    public let value: String

    /// Checks `value`: 1 to 255 visible ASCII characters (no spaces), so it fits a header as
    /// sent and logs as read.
    public init(_ value: String) throws(JamError) {
        let bytes = value.utf8
        guard !bytes.isEmpty, bytes.count <= Self.maxLength, bytes.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw JamError(
                .invalidField, "the \(Self.header) header must be 1 to \(Self.maxLength) visible ASCII characters without spaces")
        }
        self.value = value
    }

    public var description: String { value }
}
