import NIOCore

/// Reads the few fields load measurements need straight from a frame's bytes.
///
/// Decoding every delivered frame with JSONDecoder would cost the load client more than the
/// server spends sending it. Both envelopes put `seq` after `data` (OpenJam sorts its keys:
/// `data, epoch, seq, timestamp, type`; PirateRadio writes `type, data, epoch, seq,
/// timestamp`), so the last `"seq":` and the last `"type":"` are the envelope's own.
enum FrameScan {
    /// The envelope fields of one frame.
    struct Envelope: Sendable, Equatable {
        var type: String
        var seq: Int64
    }

    private static let seqKey = Array(#""seq":"#.utf8)
    private static let typeKey = Array(#""type":""#.utf8)
    private static let idKey = Array(#""id":""#.utf8)
    private static let itemIdKey = Array(#""itemId":""#.utf8)

    /// Type and seq of an envelope; nil when the frame is not one. `typeFirst`: PirateRadio's
    /// layout, where `type` precedes `data`.
    static func envelope(_ buffer: ByteBuffer, typeFirst: Bool = false) -> Envelope? {
        buffer.withUnsafeReadableBytes { bytes in
            guard let typeAt = typeFirst ? firstIndex(of: typeKey, in: bytes) : lastIndex(of: typeKey, in: bytes), let type = string(at: typeAt + typeKey.count, in: bytes),
                  let seqAt = lastIndex(of: seqKey, in: bytes), let seq = integer(at: seqAt + seqKey.count, in: bytes)
            else { return nil }
            return Envelope(type: type, seq: seq)
        }
    }

    /// The first `"id":"…"` (an OpenJam ack's or error's command id).
    static func commandId(_ buffer: ByteBuffer) -> String? {
        buffer.withUnsafeReadableBytes { bytes in
            firstIndex(of: idKey, in: bytes).flatMap { string(at: $0 + idKey.count, in: bytes) }
        }
    }

    /// The first `"itemId":"…"` (an OpenJam add's ack carries the new item's id).
    static func itemId(_ buffer: ByteBuffer) -> String? {
        buffer.withUnsafeReadableBytes { bytes in
            firstIndex(of: itemIdKey, in: bytes).flatMap { string(at: $0 + itemIdKey.count, in: bytes) }
        }
    }

    /// True when `needle` occurs in the frame (PirateRadio queue updates are matched by track id).
    static func contains(_ buffer: ByteBuffer, _ needle: [UInt8]) -> Bool {
        buffer.withUnsafeReadableBytes { firstIndex(of: needle, in: $0) != nil }
    }

    /// Where `pattern` first occurs.
    static func firstIndex(of pattern: [UInt8], in bytes: UnsafeRawBufferPointer) -> Int? {
        guard pattern.count <= bytes.count, let first = pattern.first else { return nil }
        var index = 0
        let last = bytes.count - pattern.count
        while index <= last {
            if bytes[index] == first && matches(pattern, in: bytes, at: index) { return index }
            index += 1
        }
        return nil
    }

    /// Where `pattern` last occurs (searching from the end: envelope fields close the frame).
    static func lastIndex(of pattern: [UInt8], in bytes: UnsafeRawBufferPointer) -> Int? {
        guard pattern.count <= bytes.count, let first = pattern.first else { return nil }
        var index = bytes.count - pattern.count
        while index >= 0 {
            if bytes[index] == first && matches(pattern, in: bytes, at: index) { return index }
            index -= 1
        }
        return nil
    }

    /// True when `pattern` occurs at `start`.
    private static func matches(_ pattern: [UInt8], in bytes: UnsafeRawBufferPointer, at start: Int) -> Bool {
        for offset in 1..<pattern.count where bytes[start + offset] != pattern[offset] { return false }
        return true
    }

    /// The text from `start` to the next quote (ids and types never contain escapes).
    private static func string(at start: Int, in bytes: UnsafeRawBufferPointer) -> String? {
        var end = start
        while end < bytes.count && bytes[end] != UInt8(ascii: "\"") { end += 1 }
        guard end < bytes.count else { return nil }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
    }

    /// The integer starting at `start`.
    private static func integer(at start: Int, in bytes: UnsafeRawBufferPointer) -> Int64? {
        var index = start
        var negative = false
        if index < bytes.count && bytes[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        var value: Int64 = 0
        var digits = 0
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            value = value * 10 + Int64(bytes[index] - UInt8(ascii: "0"))
            index += 1
            digits += 1
        }
        guard digits > 0 else { return nil }
        return negative ? -value : value
    }
}
