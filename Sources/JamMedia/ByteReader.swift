import Foundation

/// A bounds-checked cursor over bytes already in memory. Every read that would run past
/// the end throws "truncated <what>", so a corrupt length field becomes a reason, not a crash.
struct ByteReader {
    let bytes: [UInt8]
    var position: Int
    /// Names the structure being read, for the error.
    let what: String

    init(_ bytes: [UInt8], at position: Int = 0, what: String) {
        self.bytes = bytes
        self.position = position
        self.what = what
    }

    var remaining: Int { max(0, bytes.count - position) }
    var isAtEnd: Bool { remaining == 0 }

    private func need(_ count: Int) throws(AudioFile.ReadError) {
        guard count >= 0, position >= 0, count <= remaining else { throw AudioFile.ReadError("truncated \(what)") }
    }

    mutating func skip(_ count: Int) throws(AudioFile.ReadError) {
        try need(count)
        position += count
    }

    mutating func read(_ count: Int) throws(AudioFile.ReadError) -> [UInt8] {
        try need(count)
        defer { position += count }
        return Array(bytes[position..<position + count])
    }

    mutating func u8() throws(AudioFile.ReadError) -> UInt8 {
        try need(1)
        defer { position += 1 }
        return bytes[position]
    }

    mutating func u32be() throws(AudioFile.ReadError) -> UInt32 { UInt32(try uintBE(4)) }
    mutating func u64be() throws(AudioFile.ReadError) -> UInt64 { try uintBE(8) }
    mutating func u16le() throws(AudioFile.ReadError) -> UInt16 { UInt16(try uintLE(2)) }
    mutating func u32le() throws(AudioFile.ReadError) -> UInt32 { UInt32(try uintLE(4)) }
    mutating func u64le() throws(AudioFile.ReadError) -> UInt64 { try uintLE(8) }

    mutating func uintBE(_ count: Int) throws(AudioFile.ReadError) -> UInt64 {
        try need(count)
        defer { position += count }
        return Bytes.uintBE(bytes, position, count)
    }

    mutating func uintLE(_ count: Int) throws(AudioFile.ReadError) -> UInt64 {
        try need(count)
        var value: UInt64 = 0
        for index in (0..<count).reversed() { value = value << 8 | UInt64(bytes[position + index]) }
        position += count
        return value
    }

    /// A 32-bit little-endian length followed by that many bytes (Vorbis comments).
    mutating func lengthPrefixedLE() throws(AudioFile.ReadError) -> [UInt8] {
        let length = Int(try u32le())
        return try read(length)
    }
}

/// Byte helpers shared by the readers.
enum Bytes {
    /// Big-endian unsigned integer of `count` bytes at `offset`; the caller checks bounds.
    static func uintBE(_ bytes: [UInt8], _ offset: Int, _ count: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in 0..<count { value = value << 8 | UInt64(bytes[offset + index]) }
        return value
    }

    /// Whether `bytes` hold `ascii` at `offset` (false when they are too short).
    static func match(_ bytes: [UInt8], _ offset: Int, _ ascii: String) -> Bool {
        let wanted = Array(ascii.utf8)
        guard offset >= 0, offset + wanted.count <= bytes.count else { return false }
        return bytes[offset..<offset + wanted.count].elementsEqual(wanted)
    }

    /// Four bytes as a Latin-1 string, so MP4's `©nam` reads as "©nam".
    static func fourCC(_ bytes: [UInt8], _ offset: Int) -> String {
        guard offset >= 0, offset + 4 <= bytes.count else { return "" }
        return String(String.UnicodeScalarView(bytes[offset..<offset + 4].map { Unicode.Scalar($0) }))
    }

    /// The bytes with ID3 unsynchronisation undone: every `FF 00` becomes `FF`.
    static func resynchronised(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var previous: UInt8 = 0
        for byte in bytes {
            if !(previous == 0xFF && byte == 0x00) { out.append(byte) }
            previous = byte
        }
        return out
    }
}

/// Text decoding for tag fields.
enum TagText {
    static func latin1(_ bytes: some Collection<UInt8>) -> String {
        String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    }

    static func utf8(_ bytes: some Collection<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }

    /// Text in a field that names no encoding (RIFF INFO): UTF-8 when the bytes are valid
    /// UTF-8, else Windows-1252, which Windows' own tools write ("Café" would otherwise read
    /// as "Caf\u{FFFD}").
    static func utf8OrWindows1252(_ bytes: some Collection<UInt8>) -> String {
        let bytes = Array(bytes)
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        return String(String.UnicodeScalarView(bytes.map { byte in
            (0x80...0x9F).contains(byte) ? Unicode.Scalar(windows1252From80[Int(byte) - 0x80])! : Unicode.Scalar(byte)
        }))
    }

    /// Windows-1252's 0x80–0x9F; its five unassigned bytes stay as Latin-1 reads them.
    private static let windows1252From80: [UInt32] = [
        0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8D, 0x017D, 0x8F,
        0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178,
    ]

    /// UTF-16 with an optional byte-order mark; without one, `bigEndian` decides.
    static func utf16(_ bytes: [UInt8], bigEndian: Bool) -> String {
        var big = bigEndian
        var start = 0
        if bytes.count >= 2 {
            if bytes[0] == 0xFE, bytes[1] == 0xFF { big = true; start = 2 }
            else if bytes[0] == 0xFF, bytes[1] == 0xFE { big = false; start = 2 }
        }
        var units: [UInt16] = []
        units.reserveCapacity(bytes.count / 2)
        var index = start
        while index + 1 < bytes.count {
            let pair = (UInt16(bytes[index]), UInt16(bytes[index + 1]))
            units.append(big ? pair.0 << 8 | pair.1 : pair.1 << 8 | pair.0)
            index += 2
        }
        return String(decoding: units, as: UTF16.self)
    }

    /// Trimmed of spaces and NULs; nil when nothing is left, so empty tags fall back.
    static func clean(_ text: String?) -> String? {
        guard let text else { return nil }
        let trimmed = text.trimmingCharacters(in: CharacterSet.whitespacesAndNewlines.union(CharacterSet(charactersIn: "\0")))
        return trimmed.isEmpty ? nil : trimmed
    }
}
