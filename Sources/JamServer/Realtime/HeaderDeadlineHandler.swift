import NIOCore

/// Closes a connection whose first request head has not fully arrived within `deadline`
/// (a client that connects and sends nothing, or drips its headers to hold a slot open).
///
/// It sits first in the pipeline and watches bytes for the blank line that ends a request
/// head, so it needs nothing from the HTTP decoder; once the head is in, it leaves the
/// pipeline. Later requests on a kept-alive connection fall to the HTTP idle timeout.
final class HeaderDeadlineHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let deadline: TimeAmount
    private var timer: Scheduled<Void>?
    private var scan = HeadScan()
    private var done = false

    init(deadline: TimeAmount) {
        self.deadline = deadline
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        if !done, scan.endOfHead(in: bytes) != nil {
            done = true
            timer?.cancel()
            timer = nil
            context.fireChannelRead(data)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            return
        }
        context.fireChannelRead(data)
    }

    private func start(_ context: ChannelHandlerContext) {
        guard timer == nil, !done else { return }
        let channel = context.channel
        timer = context.eventLoop.scheduleTask(in: deadline) {
            channel.close(promise: nil)
        }
    }
}

/// Finds the blank line that ends a request head, across reads. Blank lines before the
/// request line are skipped, as the HTTP parser skips them (RFC 9112 §2.2): counted as the
/// head's end, a client sending only "\r\n\r\n" would escape the deadline for good.
struct HeadScan {
    /// How much of "\r\n\r\n" the bytes so far end with.
    private var matched = 0
    /// Whether a byte other than CR or LF has come: the request line has begun.
    private var started = false

    /// The index just past the head's closing blank line in `bytes`, nil when the head has
    /// not ended yet.
    mutating func endOfHead(in bytes: ByteBuffer) -> Int? {
        let pattern: [UInt8] = [13, 10, 13, 10]
        return bytes.withUnsafeReadableBytes { raw -> Int? in
            for (index, byte) in raw.enumerated() {
                if !started {
                    guard byte != 13, byte != 10 else { continue }
                    started = true
                }
                if byte == pattern[matched] {
                    matched += 1
                    if matched == pattern.count { return index + 1 }
                } else {
                    matched = byte == pattern[0] ? 1 : 0
                }
            }
            return nil
        }
    }
}
