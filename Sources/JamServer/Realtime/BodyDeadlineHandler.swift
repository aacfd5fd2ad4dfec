import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Closes a connection whose request body has not fully arrived within `deadline` of its head.
///
/// Hummingbird's idle timeout starts again with every part it reads, so a client sending its
/// body a byte a minute would hold the connection for ever; the header deadline ends with the
/// first head. This counts each request from its head to its end, as Go's `ReadTimeout` does:
/// a 64 KiB body in 30 s needs ~2 KB/s, slower than any phone that can play music.
///
/// The connection is closed rather than answered: the responder is still reading the body and
/// owns the response, so a 408 written here could interleave with its answer.
final class BodyDeadlineHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    private let deadline: TimeAmount
    private var timer: Scheduled<Void>?

    init(deadline: TimeAmount) {
        self.deadline = deadline
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            timer?.cancel()
            let channel = context.channel
            timer = context.eventLoop.scheduleTask(in: deadline) {
                channel.close(promise: nil)
            }
        case .body:
            break
        case .end:
            timer?.cancel()
            timer = nil
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }
}
