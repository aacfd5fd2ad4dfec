import Foundation

/// Reads JSON text into a `JSONValue` in one pass. On UTF-8 text it gives what `JSONDecoder`
/// gives decoding `JSONValue`, leniencies included (the fuzz target and `JSONValueParserTests`
/// compare the two), without the thrown type mismatches that decoding any value through
/// `Decodable` costs: 7 µs for a PirateRadio `addToQueue` frame instead of 49, and linear time
/// in the nesting depth instead of cubic. Of a key written twice, the last value counts, as in
/// the servers whose clients send this text (Node's `JSON.parse`, Python's `json`).
package struct JSONValueParser {
    /// The deepest nesting of arrays and objects read, as `JSONDecoder` allows.
    package static let maxDepth = 512

    private let bytes: UnsafeRawBufferPointer
    private var index: Int
    private var repeatedKey = false

    private init(_ bytes: UnsafeRawBufferPointer, from start: Int) {
        self.bytes = bytes
        index = start
    }

    /// The value `bytes` hold; nil when they are not one JSON text in UTF-8.
    package static func parse(_ bytes: UnsafeRawBufferPointer) -> JSONValue? {
        var repeatedKey = false
        return parse(bytes, repeatedKey: &repeatedKey)
    }

    /// The value, and whether an object in it repeats a key: the one case where JSONDecoder
    /// reads otherwise. It keeps the first value, and never checks the one it drops
    /// (`{"a":1,"a":01}` is `{"a":1}` there, and not JSON here, nor for `JSON.parse`).
    package static func parse(_ bytes: UnsafeRawBufferPointer, repeatedKey: inout Bool) -> JSONValue? {
        // A UTF-8 byte order mark is skipped, as JSONDecoder does.
        let start = bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF ? 3 : 0
        var parser = JSONValueParser(bytes, from: start)
        defer { repeatedKey = parser.repeatedKey }
        parser.skipWhitespace()
        guard let value = parser.value(depth: 0) else { return nil }
        parser.skipWhitespace()
        return parser.index == bytes.count ? value : nil
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): index += 1
            default: return
            }
        }
    }

    private mutating func value(depth: Int) -> JSONValue? {
        guard let byte = current else { return nil }
        switch byte {
        case UInt8(ascii: "{"): return object(depth: depth + 1)
        case UInt8(ascii: "["): return array(depth: depth + 1)
        case UInt8(ascii: "\""): return string().map(JSONValue.string)
        case UInt8(ascii: "t"): return literal("true") ? .bool(true) : nil
        case UInt8(ascii: "f"): return literal("false") ? .bool(false) : nil
        case UInt8(ascii: "n"): return literal("null") ? .null : nil
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
        default: return nil
        }
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard bytes.count - index >= count else { return false }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
        index += count
        return true
    }

    private mutating func object(depth: Int) -> JSONValue? {
        guard depth <= Self.maxDepth else { return nil }
        index += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            guard current == UInt8(ascii: "\""), let key = string() else { return nil }
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { return nil }
            index += 1
            skipWhitespace()
            if members[key] != nil { repeatedKey = true }
            guard let value = value(depth: depth) else { return nil }
            members[key] = value
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","):
                index += 1
                skipWhitespace()
                // A comma before the closing brace is allowed, as JSONDecoder allows it.
                if current == UInt8(ascii: "}") {
                    index += 1
                    return .object(members)
                }
            case UInt8(ascii: "}"):
                index += 1
                return .object(members)
            default:
                return nil
            }
        }
    }

    private mutating func array(depth: Int) -> JSONValue? {
        guard depth <= Self.maxDepth else { return nil }
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            guard let element = value(depth: depth) else { return nil }
            elements.append(element)
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","):
                index += 1
                skipWhitespace()
                if current == UInt8(ascii: "]") {
                    index += 1
                    return .array(elements)
                }
            case UInt8(ascii: "]"):
                index += 1
                return .array(elements)
            default:
                return nil
            }
        }
    }

    /// A string from its opening quote; nil for a control character, a bad escape, a lone
    /// surrogate or bytes that are not UTF-8.
    private mutating func string() -> String? {
        index += 1
        let start = index
        var ascii = true
        // The common case: no escapes, the bytes are the string.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                defer { index += 1 }
                let text = UnsafeRawBufferPointer(rebasing: bytes[start..<index])
                // ASCII needs no validation; `String(validating:)` looks its generic
                // specialisation up at run time on every call, which shows in profiles.
                return ascii ? String(decoding: text, as: UTF8.self) : String(validating: text, as: UTF8.self)
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { return nil }
            if byte >= 0x80 { ascii = false }
            index += 1
        }
        guard index < bytes.count else { return nil }
        var decoded = Array(UnsafeRawBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return String(validating: decoded, as: UTF8.self)
            case UInt8(ascii: "\\"):
                index += 1
                guard let escaped = current else { return nil }
                index += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escaped)
                case UInt8(ascii: "b"): decoded.append(0x08)
                case UInt8(ascii: "f"): decoded.append(0x0C)
                case UInt8(ascii: "n"): decoded.append(0x0A)
                case UInt8(ascii: "r"): decoded.append(0x0D)
                case UInt8(ascii: "t"): decoded.append(0x09)
                case UInt8(ascii: "u"):
                    guard let scalar = unicodeEscape() else { return nil }
                    decoded.append(contentsOf: String(Character(scalar)).utf8)
                default: return nil
                }
            case 0..<0x20:
                return nil
            default:
                decoded.append(byte)
                index += 1
            }
        }
        return nil
    }

    /// The scalar of `\uXXXX` (the `\u` read), joining a surrogate pair.
    private mutating func unicodeEscape() -> Unicode.Scalar? {
        guard let high = hex4() else { return nil }
        switch high {
        case 0xD800...0xDBFF:
            guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else { return nil }
            index += 2
            guard let low = hex4(), (0xDC00...0xDFFF).contains(low) else { return nil }
            return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
        case 0xDC00...0xDFFF:
            return nil
        default:
            return Unicode.Scalar(high)
        }
    }

    private mutating func hex4() -> UInt32? {
        guard bytes.count - index >= 4 else { return nil }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    /// A number. As JSONDecoder decodes `Int64` before `Double`: plain digits that fit stay
    /// exact; a fraction or exponent whose value, as a `Double`, is whole and fits is a whole
    /// number too (`1.0`, `1e3`, `0.99999999999999999`), from 2^53 on when JSONDecoder reads
    /// it as one (`9007199254740993.10`); any other is a `Double`, and one that does not fit is
    /// not JSON.
    private mutating func number() -> JSONValue? {
        let start = index
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return nil }
        index += 1
        if first != UInt8(ascii: "0") { skipDigits() }
        let integerEnd = index
        var fractionEnd = index
        if current == UInt8(ascii: ".") {
            index += 1
            guard digits() else { return nil }
            fractionEnd = index
        }
        var exponent: Int?
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            let exponentStart = index
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard digits() else { return nil }
            // An exponent too long for Int puts the point past every digit.
            let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[exponentStart..<index]), as: UTF8.self)
            exponent = Int(text) ?? (text.first == "-" ? Int.min / 2 : Int.max / 2)
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        if fractionEnd == integerEnd, exponent == nil, let integer = Int64(text) { return .integer(integer) }
        guard let double = Double(text), double.isFinite else { return nil }
        guard let whole = Int64(exactly: double) else { return .number(double) }
        // Below 2^53 every whole number is a Double: the Double is the value.
        if double.magnitude < 9_007_199_254_740_992 { return .integer(whole) }
        // Beyond it JSONDecoder's own rule for a fraction or exponent (which reads
        // `9007199254740993.10` as whole but not `1708888888888888888.08`) is asked directly:
        // such numbers are rare, and a rule of its own here drifted from it.
        do {
            return .integer(try JSONDecoder().decode(Int64.self, from: Data(text.utf8)))
        } catch {
            // Not a whole number to JSONDecoder (the text is valid JSON already): its Double.
            return .number(double)
        }
    }

    private mutating func skipDigits() {
        while let byte = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { index += 1 }
    }

    /// At least one digit, skipped.
    private mutating func digits() -> Bool {
        let start = index
        skipDigits()
        return index > start
    }
}
