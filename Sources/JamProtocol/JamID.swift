import Foundation

/// An opaque identifier for users, sessions and queue items.
///
/// Anything that parses as a UUID is normalised to lowercase on creation and on
/// decoding, so an upper-case ID from one client and a lower-case one from
/// another can never name two different things.
public struct JamID: Hashable, Comparable, Sendable, Codable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The normalised text of the identifier.
    public let rawValue: String

    /// Wraps `raw`, lowercasing it when it is a UUID.
    public init(_ raw: String) {
        if let lowercase = Self.lowercaseUUID(raw) {
            rawValue = lowercase
        } else {
            rawValue = raw
        }
    }

    /// `text` in lowercase when it is a UUID (8-4-4-4-12 hexadecimal digits), else nil.
    /// Every ID on the wire goes through here, so it reads the bytes itself rather than
    /// have Foundation's `UUID(uuidString:)` scan them.
    static func lowercaseUUID(_ text: String) -> String? {
        var text = text
        return text.withUTF8 { bytes -> String? in
            guard bytes.count == 36 else { return nil }
            var lowered = false
            for (index, byte) in bytes.enumerated() {
                switch index {
                case 8, 13, 18, 23:
                    guard byte == UInt8(ascii: "-") else { return nil }
                default:
                    switch byte {
                    case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"): break
                    case UInt8(ascii: "A")...UInt8(ascii: "F"): lowered = true
                    default: return nil
                    }
                }
            }
            guard lowered else { return String(decoding: bytes, as: UTF8.self) }
            return String(decoding: bytes.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "F") ? $0 + 32 : $0 }, as: UTF8.self)
        }
    }

    /// Wraps a UUID in its canonical lowercase form.
    public init(_ uuid: UUID) {
        rawValue = uuid.uuidString.lowercased()
    }

    /// A random (version 4) UUID in its canonical lowercase form, drawn from `generator`.
    ///
    /// The server mints one for every added item. Foundation's `UUID()` opens, reads and
    /// closes `/dev/urandom` on each call on Linux and then formats and lowercases its text
    /// (~5.7 µs here); this takes two words from the generator and writes the text once (~1.3 µs).
    public static func randomUUID(using generator: inout some RandomNumberGenerator) -> JamID {
        // RFC 9562: version 4 in the top nibble of byte 6, variant 0b10 in the top bits of byte 8.
        let high = (generator.next() as UInt64) & ~0xF000 | 0x4000
        let low = (generator.next() as UInt64) & 0x3FFF_FFFF_FFFF_FFFF | 0x8000_0000_0000_0000
        return uuid(high: high, low: low)
    }

    /// The UUID whose 128 bits are `high` then `low`, in its canonical lowercase form; the
    /// caller has set the version and variant bits.
    public static func uuid(high: UInt64, low: UInt64) -> JamID {
        let digits: StaticString = "0123456789abcdef"
        let text = String(unsafeUninitializedCapacity: 36) { buffer in
            var index = 0
            for position in 0..<32 {
                if position == 8 || position == 12 || position == 16 || position == 20 {
                    buffer[index] = UInt8(ascii: "-")
                    index += 1
                }
                let word = position < 16 ? high : low
                let nibble = Int(truncatingIfNeeded: word >> UInt64(60 - 4 * (position % 16))) & 0xF
                buffer[index] = digits.utf8Start[nibble]
                index += 1
            }
            return index
        }
        return JamID(minted: text)
    }

    /// Wraps text already known to be a lowercase UUID.
    private init(minted text: String) {
        rawValue = text
    }

    /// Creates an identifier from a string literal (tests, fixtures).
    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// Parses an identifier that OpenJam minted: it must be a UUID.
    public static func uuid(_ raw: String) -> JamID? {
        guard lowercaseUUID(raw) != nil else { return nil }
        return JamID(raw)
    }

    /// True when the identifier is a UUID (every ID OpenJam mints is one, but the library
    /// shuffle's item IDs).
    public var isUUID: Bool { Self.lowercaseUUID(rawValue) != nil }

    public var description: String { rawValue }

    public static func < (lhs: JamID, rhs: JamID) -> Bool { lhs.rawValue < rhs.rawValue }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let raw = try container.decode(String.self)
        guard Self.accepts(raw) else {
            let why = raw.isEmpty ? "an ID must not be empty" : "an ID must be at most \(JamID.maxLength) bytes"
            throw DecodingError.dataCorruptedError(in: container, debugDescription: why)
        }
        self.init(raw)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// Longest identifier accepted on the wire.
    public static let maxLength = 128

    /// Whether `raw` may be an ID on the wire (1 to `maxLength` bytes): the one test for a
    /// JSON field, the socket's quick reader and a REST path alike.
    public static func accepts(_ raw: String) -> Bool {
        !raw.isEmpty && raw.utf8.count <= maxLength
    }
}

/// Server time: Unix milliseconds.
public typealias Millis = Int64

/// A user's identifier.
public typealias UserID = JamID
/// A session's identifier.
public typealias SessionID = JamID
/// A queue item's identifier.
public typealias ItemID = JamID
