import JamProtocol
import NIOCore
import NIOWebSocket

/// Checks each frame a client sends against the rules NIO's decoder leaves to the server
/// (RFC 6455 §5.1–5.2): a client masks every frame, sets no reserved bit (OpenJam negotiates no
/// extension) and uses only the opcodes the protocol defines.
///
/// It sits before the fragment aggregator, which drops a fragment's mask and reserved bits. A
/// frame that breaks a rule goes no further; the socket's handler hears a `FrameViolation` and
/// closes with 1002, as the original servers' WebSocket libraries do.
final class ClientFrameCheck: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = WebSocketFrame

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        if let violation = FrameViolation(frame) {
            context.fireErrorCaught(violation)
        } else {
            context.fireChannelRead(data)
        }
    }
}

/// A client frame that breaks the WebSocket protocol, and the words its close carries.
struct FrameViolation: Error, Equatable {
    /// Why the frame is refused, short enough for a close frame's reason.
    let reason: String
    /// The close code it gets.
    var code: CloseCode { .protocolError }

    /// The rule `frame` breaks, or nil when it keeps them all.
    init?(_ frame: WebSocketFrame) {
        if frame.maskKey == nil {
            reason = "a client's frames must be masked"
        } else if frame.rsv1 || frame.rsv2 || frame.rsv3 {
            reason = "reserved bits must be 0: no extension was agreed"
        } else {
            switch frame.opcode {
            case .continuation, .text, .binary, .connectionClose, .ping, .pong:
                return nil
            default:
                reason = "opcode \(UInt8(webSocketOpcode: frame.opcode)) is reserved"
            }
        }
    }

    private init(reason: String) { self.reason = reason }

    /// A close frame whose payload breaks the rules for close frames (RFC 6455 §5.5.1, §7.4),
    /// or nil. Its reason must be UTF-8 too; `RealtimeHandler` checks that, as it answers 1007.
    static func close(code: UInt16?, payloadBytes: Int) -> FrameViolation? {
        if payloadBytes == 1 { return FrameViolation(reason: "a close frame's code takes two bytes") }
        if let code, !CloseCode(rawValue: code).mayAppearInCloseFrame {
            return FrameViolation(reason: "close code \(code) may not be sent")
        }
        return nil
    }
}
