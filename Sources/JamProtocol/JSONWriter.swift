/// Writes JSON text straight into bytes, for the frames the server sends most.
///
/// `JSONEncoder` is the definition of every wire shape; this writer produces the same
/// bytes as `WireCoding.encoder` (sorted keys, slashes unescaped) about six times faster,
/// because it builds no intermediate tree. Keys are written in sorted order by each
/// `JSONWritable` conformance, and `JSONWriterTests` compares both encoders byte for byte.
public struct JSONWriter: Sendable {
    /// The JSON written so far.
    public private(set) var bytes: [UInt8] = []
    /// Whether the next key or element needs a comma before it.
    private var needsComma = false

    /// Creates an empty writer with room for `capacity` bytes.
    public init(capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
    }

    /// The JSON text of `value`.
    public static func encode(_ value: some JSONWritable) -> [UInt8] {
        var writer = JSONWriter()
        value.write(to: &writer)
        return writer.bytes
    }

    // MARK: Structure

    /// Writes `{`, the members `body` writes, and `}`.
    public mutating func object(_ body: (inout JSONWriter) -> Void) {
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
        body(&self)
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    /// Writes `[`, one element per value, and `]`.
    public mutating func array<S: Sequence>(_ values: S) where S.Element: JSONWritable {
        separate()
        bytes.append(UInt8(ascii: "["))
        needsComma = false
        for value in values { value.write(to: &self) }
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// Writes `"key":` (the key is plain ASCII and needs no escaping).
    public mutating func key(_ key: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    /// Writes a member `"key":value`.
    public mutating func field(_ name: StaticString, _ value: some JSONWritable) {
        key(name)
        value.write(to: &self)
    }

    /// Writes a member only when `value` is present, as `encodeIfPresent` does.
    public mutating func field(_ name: StaticString, ifPresent value: (some JSONWritable)?) {
        guard let value else { return }
        key(name)
        value.write(to: &self)
    }

    /// Writes an array member.
    public mutating func field<S: Sequence>(_ name: StaticString, array values: S) where S.Element: JSONWritable {
        key(name)
        array(values)
    }

    /// Writes a member whose absent value is written as `null` (an `encode` of an optional,
    /// not `encodeIfPresent`).
    public mutating func field(_ name: StaticString, orNull value: (some JSONWritable)?) {
        key(name)
        if let value {
            value.write(to: &self)
        } else {
            separate()
            bytes.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])
            needsComma = true
        }
    }

    /// Writes a dictionary member with its keys sorted, as the sorted-keys encoder does.
    public mutating func field(_ name: StaticString, _ dictionary: [String: Int]) {
        key(name)
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
        for entry in dictionary.sorted(by: { $0.key < $1.key }) {
            string(entry.key)
            bytes.append(UInt8(ascii: ":"))
            needsComma = false
            entry.value.write(to: &self)
        }
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    /// Writes `"key":` for a key known only at run time, escaped like any string.
    public mutating func dynamicKey(_ key: String) {
        string(key)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    /// Writes `text`, which must already be one valid JSON value, as it is: for values a
    /// profile keeps as the client sent them (PirateRadio's queue entries).
    public mutating func raw(_ text: String) {
        separate()
        bytes.append(contentsOf: text.utf8)
        needsComma = true
    }

    mutating func separate() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }

    // MARK: Scalars

    /// Writes a string with JSONEncoder's escapes: `\"`, `\\`, `\b\f\n\r\t` and `\u00XX` for
    /// the other control characters; everything else, `/` included, as it is.
    public mutating func string(_ value: String) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        var text = value
        text.withUTF8 { utf8 in
            var start = 0
            for index in 0..<utf8.count {
                let byte = utf8[index]
                guard byte == 0x22 || byte == 0x5C || byte < 0x20 else { continue }
                if start < index { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index])) }
                escape(byte)
                start = index + 1
            }
            if start < utf8.count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<utf8.count])) }
        }
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }

    private mutating func escape(_ byte: UInt8) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case 0x22: bytes.append(UInt8(ascii: "\""))
        case 0x5C: bytes.append(UInt8(ascii: "\\"))
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x0C: bytes.append(UInt8(ascii: "f"))
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        default:
            let hex: StaticString = "0123456789abcdef"
            bytes.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
            bytes.append(hex.utf8Start[Int(byte >> 4)])
            bytes.append(hex.utf8Start[Int(byte & 0x0F)])
        }
    }

    /// Writes an integer.
    public mutating func integer(_ value: Int64) {
        separate()
        if value == 0 {
            bytes.append(UInt8(ascii: "0"))
        } else {
            if value < 0 { bytes.append(UInt8(ascii: "-")) }
            // Digits come out last first; the magnitude of Int64.min still fits a UInt64.
            var magnitude = value.magnitude
            var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
            var count = 0
            withUnsafeMutableBytes(of: &digits) { buffer in
                while magnitude > 0 {
                    buffer[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                    magnitude /= 10
                    count += 1
                }
                while count > 0 {
                    count -= 1
                    bytes.append(buffer[count])
                }
            }
        }
        needsComma = true
    }

    /// Writes a number as JSONEncoder does: whole values without a fraction, others in
    /// Swift's shortest round-tripping form.
    public mutating func double(_ value: Double) {
        if value.isFinite, value == value.rounded(), abs(value) < 1e15, !(value == 0 && value.sign == .minus) {
            integer(Int64(value))
            return
        }
        separate()
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        bytes.append(contentsOf: text.utf8)
        needsComma = true
    }

    /// Writes `true` or `false`.
    public mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: value ? [0x74, 0x72, 0x75, 0x65] : [0x66, 0x61, 0x6C, 0x73, 0x65])
        needsComma = true
    }
}

/// A value that can write itself with `JSONWriter`, byte for byte as its `Encodable` form.
public protocol JSONWritable {
    /// Writes the value's JSON.
    func write(to json: inout JSONWriter)
}

extension String: JSONWritable {
    public func write(to json: inout JSONWriter) { json.string(self) }
}

extension Int: JSONWritable {
    public func write(to json: inout JSONWriter) { json.integer(Int64(self)) }
}

extension Int64: JSONWritable {
    public func write(to json: inout JSONWriter) { json.integer(self) }
}

extension Double: JSONWritable {
    public func write(to json: inout JSONWriter) { json.double(self) }
}

extension Bool: JSONWritable {
    public func write(to json: inout JSONWriter) { json.bool(self) }
}

extension JamID: JSONWritable {
    public func write(to json: inout JSONWriter) { json.string(rawValue) }
}

extension JSONWritable where Self: RawRepresentable, RawValue == String {
    /// String enums write their raw value.
    public func write(to json: inout JSONWriter) { json.string(rawValue) }
}
