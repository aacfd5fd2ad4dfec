import NIOCore
import NIOHTTP1

/// Answers 400 and closes a connection whose first request cannot be parsed (no request line,
/// a control character in a header, a `Content-Length` that is not a number).
///
/// Until the first request is read, the upgrade handler holds the connection, and it neither
/// answers a parse error nor closes: the header deadline has let go once the head's blank line
/// came, so such a connection would stay open, unanswered, for good. Once the first request
/// is read (an upgrade, or plain HTTP, where Hummingbird answers parse errors itself), this
/// handler leaves the pipeline.
final class FirstRequestErrorHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = Never
    typealias OutboundOut = HTTPServerResponsePart

    /// NIO's decoder reports some faults twice (a version other than HTTP/1.x): one answer.
    private var answered = false

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard error is HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        guard !answered else { return }
        answered = true
        let head = HTTPResponseHead(version: .http1_1, status: .badRequest, headers: ["Connection": "close", "Content-Length": "0"])
        let channel = context.channel
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }
}
