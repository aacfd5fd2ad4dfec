import NIOCore

/// Server-to-client WebSocket frames, encoded once.
///
/// A server frame is never masked, so its bytes are the same for every socket: a session
/// encodes each frame once, header included, and every member's socket writes that one
/// buffer (`RawFrameSink`), instead of NIO's encoder framing it again per socket.
enum WebSocketText {
    /// The text frame carrying `json`.
    static func frame(_ json: [UInt8]) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(json.count + 10)
        writeHeader(opcode: 0x1, length: json.count, into: &buffer)
        buffer.writeBytes(json)
        return buffer
    }

    /// The text frame carrying `json`.
    static func frame(_ json: ByteBuffer) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(json.readableBytes + 10)
        writeHeader(opcode: 0x1, length: json.readableBytes, into: &buffer)
        buffer.writeImmutableBuffer(json)
        return buffer
    }

    /// A control frame (`ping` 0x9, `pong` 0xA, `close` 0x8) with `payload` (at most 125 bytes).
    static func control(opcode: UInt8, payload: ByteBuffer) -> ByteBuffer {
        var buffer = ByteBuffer()
        writeHeader(opcode: opcode, length: payload.readableBytes, into: &buffer)
        buffer.writeImmutableBuffer(payload)
        return buffer
    }

    /// Whether `payload` is UTF-8, as a text message must be (RFC 6455 §8.1). Messages are
    /// almost always ASCII, so eight bytes at a time are checked for a high bit first.
    static func isUTF8(_ payload: ByteBuffer) -> Bool {
        payload.withUnsafeReadableBytes { bytes in
            var index = 0
            while index + 8 <= bytes.count {
                if bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { break }
                index += 8
            }
            // The rest through the standard library's decoder, which refuses overlong forms,
            // surrogates and code points past U+10FFFF, and allocates nothing.
            var rest = bytes[index...].makeIterator()
            var decoder = UTF8()
            while true {
                switch decoder.decode(&rest) {
                case .scalarValue: continue
                case .emptyInput: return true
                case .error: return false
                }
            }
        }
    }

    /// The JSON inside a frame `frame(_:)` made.
    static func payload(of frame: ByteBuffer) -> ByteBuffer {
        guard frame.readableBytes >= 2, let second = frame.getInteger(at: frame.readerIndex + 1, as: UInt8.self) else { return ByteBuffer() }
        let header = switch second & 0x7F {
        case 126: 4
        case 127: 10
        default: 2
        }
        return frame.getSlice(at: frame.readerIndex + header, length: frame.readableBytes - header) ?? ByteBuffer()
    }

    private static func writeHeader(opcode: UInt8, length: Int, into buffer: inout ByteBuffer) {
        buffer.writeInteger(0x80 | opcode)
        switch length {
        case ..<126:
            buffer.writeInteger(UInt8(length))
        case ..<65_536:
            buffer.writeInteger(UInt8(126))
            buffer.writeInteger(UInt16(length))
        default:
            buffer.writeInteger(UInt8(127))
            buffer.writeInteger(UInt64(length))
        }
    }
}

/// The first handler of a realtime socket's pipeline: frames written through it reach the
/// socket as they are, past NIO's WebSocket encoder (which stays for the protocol-error
/// closes NIO sends itself).
final class RawFrameSink: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    /// Queues encoded frame bytes.
    func write(_ bytes: ByteBuffer, promise: EventLoopPromise<Void>? = nil) {
        guard let context else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        context.write(wrapOutboundOut(bytes), promise: promise)
    }

    /// Sends what is queued.
    func flush() { context?.flush() }
}
