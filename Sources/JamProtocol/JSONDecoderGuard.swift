/// What must not reach `JSONDecoder`: text that would stop the whole process.
///
/// Foundation's `JSONDecoder` refuses text nested deeper than 512 arrays and objects with an
/// error, except when the array that goes too deep opens on the text's last byte (`[` × 513,
/// 513 bytes): working out where that error happened, it reads past the end and traps. One
/// such request body or socket frame would take the server down. So every text from outside
/// is measured first (`WireCoding.decode`), and one nested deeper than JSONDecoder reads is
/// refused here, as JSONDecoder refuses it anyway.
///
/// JSONDecoder also reads UTF-16 and UTF-32, which it recognises by zero bytes or a byte order
/// mark in the first four bytes, and converts them to UTF-8 before it scans. Counting nesting
/// in such text would need the same conversion; JSON exchanged between systems must be UTF-8
/// (RFC 8259, section 8.1), so such text is refused instead.
package enum JSONDecoderGuard {
    /// Why `bytes` must not be given to `JSONDecoder`, or nil when they may.
    package static func refusal(_ bytes: UnsafeRawBufferPointer) -> String? {
        if bytes.prefix(4).contains(0) || bytes.first == 0xFE || bytes.first == 0xFF {
            return "the text must be UTF-8"
        }
        var depth = 0
        var inString = false
        var index = 0
        // In UTF-8 no byte of a multi-byte character is ASCII, so brackets and quotes are
        // found byte by byte. Strings end where JSONDecoder's scanner ends them: it skips the
        // byte after a backslash, and after `\u` four more as they are (their digits are
        // checked only when the string is read, if ever), so `"\uAAA\"` is one string.
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if inString {
                if byte == UInt8(ascii: "\"") {
                    inString = false
                } else if byte == UInt8(ascii: "\\") {
                    index += index < bytes.count && bytes[index] == UInt8(ascii: "u") ? 5 : 1
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                if depth > JSONValueParser.maxDepth {
                    return "arrays and objects nest deeper than \(JSONValueParser.maxDepth) levels"
                }
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                depth -= 1
            default:
                break
            }
        }
        return nil
    }
}
