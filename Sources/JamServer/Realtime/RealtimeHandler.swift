import JamProtocol
import Logging
import NIOCore
import NIOWebSocket

/// The last handler of a realtime socket's pipeline, after the WebSocket decoder: it decodes
/// client messages on the socket's own loop and hands them to the session, and writes the
/// session's frames, encoded once for every member, straight to the socket (`RawFrameSink`)
/// with one flush per batch.
///
/// It also keeps the socket healthy: it answers pings, pings an idle peer and closes a
/// dead one, closes after the profile's idle timeout, reports writability to the session
/// (stalled readers are the session outbox's decision) and tells the session when the
/// socket is gone.
final class RealtimeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    /// Timings of one socket.
    struct Timing: Sendable {
        /// Some WebSocket clients (NIO-based ones among them) drop a frame that arrives in the
        /// same read as the `101 Switching Protocols` response, so nothing goes out until the
        /// socket is this old.
        var firstFrameDelay: TimeAmount = .milliseconds(100)
        /// How long a close frame may wait for the peer's before the socket is dropped anyway.
        var closeGrace: TimeAmount = .seconds(5)
        /// Messages held while the session is being found.
        var openingBacklog = 64
    }

    private enum State {
        /// Upgraded; the session is being found. Messages wait.
        case opening(held: [(any DecodedMessage, Double)])
        case attached(session: LiveSession, connection: RealtimeConnection)
        case closing
        case closed
    }

    private let profile: any WireProfile
    /// The profile's, read once: every inbound message consults it.
    private let idleTimeout: IdleTimeout?
    private let sink: RawFrameSink
    private let clock: any ServerClock
    private let timing: Timing
    private let logger: Logger
    private var state: State = .opening(held: [])
    private var context: ChannelHandlerContext?
    /// Frames written before the first-frame delay passed.
    private var early: [ByteBuffer]? = []
    /// A close sent before the first-frame delay passed, with the promise its sender waits on:
    /// a refusal's close must not come in the same read as the upgrade's answer either.
    private var earlyClose: (frame: ByteBuffer, promise: EventLoopPromise<Void>)?
    private var heartbeat: HeartbeatState
    private var lastMessage = NIODeadline.now()
    /// The latest ping's payload, not answered while the socket took no more bytes.
    private var pendingPong: ByteBuffer?
    private(set) var timers = SocketTimers()

    init(profile: any WireProfile, sink: RawFrameSink, clock: any ServerClock, timing: Timing, logger: Logger) {
        self.profile = profile
        idleTimeout = profile.idleTimeout
        // Started again on the loop's own clock once the handler is in a pipeline.
        heartbeat = HeartbeatState(profile.heartbeat, now: .now())
        self.sink = sink
        self.clock = clock
        self.timing = timing
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        let loop = context.eventLoop
        heartbeat = HeartbeatState(profile.heartbeat, now: loop.now)
        let bound = NIOLoopBound(self, eventLoop: loop)
        timers.firstFrame = loop.scheduleTask(in: timing.firstFrameDelay) { bound.value.releaseEarlyFrames() }
        schedulePing(bound)
        if let idle = idleTimeout {
            scheduleIdleCheck(bound, after: .milliseconds(idle.milliseconds), idle: idle)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timers.cancelAll()
        earlyClose?.promise.fail(ChannelError.ioOnClosedChannel)
        earlyClose = nil
        self.context = nil
    }

    // MARK: Session

    /// The session accepted the socket: held messages go to it now.
    func attached(to session: LiveSession, as connection: RealtimeConnection) {
        guard case .opening(let held) = state else {
            // The socket went away while the session was being found.
            session.dispatch { $0.detach(connection.id) }
            return
        }
        state = .attached(session: session, connection: connection)
        // The session may have filled the socket (its state, replays) before this hop: a
        // writability change then found no session to tell, and the outbox must still learn
        // the socket is not draining, or a reader that stopped there is never evicted.
        if let context, !context.channel.isWritable {
            session.dispatch { $0.writabilityChanged(connection.id, writable: false) }
        }
        // A member arriving is activity too, as it is for the original servers' idle rules.
        if idleTimeout != nil { session.lastMessageNanos.store(NIODeadline.now().uptimeNanoseconds, ordering: .relaxed) }
        for (message, receivedAt) in held { forward(message, receivedAt: receivedAt) }
    }

    /// The socket was refused: the profile's refusal frame (if any), then its close code.
    func refuse(frame: ByteBuffer?, code: UInt16, reason: String) {
        if let frame { send([frame]) }
        close(code: code, reason: reason)
    }

    // MARK: Inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        // The loop's clock, which a test's loop advances at will.
        heartbeat.heard(at: context.eventLoop.now)
        switch frame.opcode {
        case .text:
            heardMessage()
            let receivedAt = clock.nowPrecise()
            let payload = frame.unmaskedData
            guard WebSocketText.isUTF8(payload) else {
                close(code: CloseCode.invalidText.rawValue, reason: "a text message must be UTF-8")
                return
            }
            received(profile.decode(payload), receivedAt: receivedAt)
        case .binary:
            heardMessage()
            let receivedAt = clock.nowPrecise()
            if profile.acceptsBinaryFrames {
                received(profile.decode(frame.unmaskedData), receivedAt: receivedAt)
            } else {
                received(.failure(DecodeFailure(error: JamError(.malformed, "binary frames are not supported; send JSON text"), id: nil)), receivedAt: receivedAt)
            }
        case .ping:
            // A peer that pings while it reads nothing would pile pongs up in memory until it
            // is dropped as slow. Only the latest ping needs an answer (RFC 6455, 5.5.3): while
            // the socket takes no more bytes it waits here, and goes once it drains.
            guard context.channel.isWritable else {
                pendingPong = frame.unmaskedData
                break
            }
            pendingPong = nil
            write(WebSocketText.control(opcode: 0xA, payload: frame.unmaskedData), flush: true)
        case .pong:
            break
        case .connectionClose:
            receivedClose(frame)
        default:
            break
        }
    }

    private func heardMessage() {
        let heard = NIODeadline.now()
        lastMessage = heard
        if idleTimeout != nil, case .attached(let session, _) = state {
            session.lastMessageNanos.store(heard.uptimeNanoseconds, ordering: .relaxed)
        }
    }

    private func received(_ result: Result<any DecodedMessage, DecodeFailure>, receivedAt: Double) {
        switch result {
        case .success(let message):
            forward(message, receivedAt: receivedAt)
        case .failure(let failure):
            // The session logs and counts the refusal (`noteRefusal`), once, with its context.
            forward(RejectedMessage(error: failure.error, id: failure.id), receivedAt: receivedAt)
        }
    }

    private func forward(_ message: any DecodedMessage, receivedAt: Double) {
        switch state {
        case .opening(var held):
            guard held.count < timing.openingBacklog else {
                close(code: CloseCode(refusing: .rateLimited).rawValue, reason: "too many messages before the session was ready")
                return
            }
            held.append((message, receivedAt))
            state = .opening(held: held)
        case .attached(let session, let connection):
            session.dispatch { $0.receive(message, from: connection.id, receivedAt: receivedAt) }
        case .closing, .closed:
            break
        }
    }

    private func receivedClose(_ frame: WebSocketFrame) {
        switch state {
        case .closing:
            if let held = earlyClose?.promise {
                // The peer closes while our close is held: it read the upgrade's answer, so
                // the refusal and its close go now, and the connection ends once they are out.
                let channel = context?.channel
                held.futureResult.whenComplete { _ in channel?.close(promise: nil) }
                releaseEarlyFrames()
                return
            }
            // Our close was answered.
            context?.close(promise: nil)
        default:
            // The peer closes: answer with its code, then drop the connection. A close that
            // breaks the rules is answered with the rule's code instead (RFC 6455 §7.4.1).
            var data = frame.unmaskedData
            let payloadBytes = data.readableBytes
            let peerCode = data.readInteger(as: UInt16.self)
            var code = peerCode ?? CloseCode.normal.rawValue
            if let violation = FrameViolation.close(code: peerCode, payloadBytes: payloadBytes) {
                code = violation.code.rawValue
            } else if !WebSocketText.isUTF8(data) {
                code = CloseCode.invalidText.rawValue
            }
            let channel = context?.channel
            sendClose(code: code, reason: "")?.whenComplete { _ in channel?.close(promise: nil) }
            detachFromSession()
            state = .closing
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, let pong = pendingPong {
            pendingPong = nil
            write(WebSocketText.control(opcode: 0xA, payload: pong), flush: true)
        }
        guard case .attached(let session, let connection) = state else { return }
        let writable = context.channel.isWritable
        session.dispatch { $0.writabilityChanged(connection.id, writable: writable) }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        detachFromSession()
        state = .closed
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        logger.debug("realtime socket error", metadata: ["error": .loggable(error)])
        if let violation = error as? FrameViolation {
            close(code: violation.code.rawValue, reason: violation.reason)
            return
        }
        // A fragmented message that broke a rule: NIO's aggregator sends no close frame of
        // its own, and a bare close reads as 1006 (gone) to the client. Say which rule, as
        // one unfragmented frame too large gets 1009 (RFC 6455 §7.4.1).
        if let broken = error as? NIOWebSocketFrameAggregator.Error {
            switch broken {
            case .tooManyFragments, .accumulatedFrameSizeIsTooLarge:
                close(code: CloseCode.tooBig.rawValue, reason: "the message is larger than the server accepts")
            // (Empty fragments are allowed, RFC 6455 §5.4: the size check never fires.)
            case .nonFinalFragmentSizeIsTooSmall, .receivedNewFrameWithoutFinishingPrevious, .didReceiveFragmentBeforeReceivingTextOrBinaryFrame:
                close(code: CloseCode.protocolError.rawValue, reason: "the message's fragments break the WebSocket protocol")
            }
            return
        }
        context.close(promise: nil)
    }

    private func detachFromSession() {
        if case .attached(let session, let connection) = state {
            session.dispatch { $0.detach(connection.id) }
        }
    }

    // MARK: Outbound

    /// Writes encoded frames and flushes once.
    func send(_ frames: [ByteBuffer]) {
        guard let context, context.channel.isActive else { return }
        switch state {
        case .closing, .closed: return
        case .opening, .attached: break
        }
        for bytes in frames { write(bytes, flush: false) }
        if early == nil { sink.flush() }
    }

    /// Sends a close frame behind what is queued; the socket closes when the peer answers,
    /// or after `closeGrace` (a stalled reader may never read it).
    func close(code: UInt16, reason: String) {
        switch state {
        case .closing, .closed: return
        case .opening, .attached: break
        }
        detachFromSession()
        state = .closing
        _ = sendClose(code: code, reason: reason)
        if let context {
            let channel = context.channel
            timers.closeGrace = context.eventLoop.scheduleTask(in: timing.closeGrace) { channel.close(promise: nil) }
        }
    }

    @discardableResult
    private func sendClose(code: UInt16, reason: String) -> EventLoopFuture<Void>? {
        guard let context else { return nil }
        var data = context.channel.allocator.buffer(capacity: 2 + reason.utf8.count)
        data.writeInteger(code)
        // A close reason may hold at most 123 bytes.
        data.writeString(String(decoding: reason.utf8.prefix(123), as: UTF8.self))
        let promise = context.eventLoop.makePromise(of: Void.self)
        let frame = WebSocketText.control(opcode: 0x8, payload: data)
        guard early == nil else {
            // Sent with the frames held before it once the socket is old enough.
            earlyClose = (frame, promise)
            return promise.futureResult
        }
        sink.write(frame, promise: promise)
        sink.flush()
        return promise.futureResult
    }

    private func write(_ bytes: ByteBuffer, flush: Bool) {
        if early != nil {
            early?.append(bytes)
            return
        }
        sink.write(bytes)
        if flush { sink.flush() }
    }

    private func releaseEarlyFrames() {
        guard let frames = early else { return }
        early = nil
        for bytes in frames { sink.write(bytes) }
        if let close = earlyClose {
            earlyClose = nil
            sink.write(close.frame, promise: close.promise)
        } else if frames.isEmpty {
            return
        }
        sink.flush()
    }

    // MARK: Timers

    private func schedulePing(_ bound: NIOLoopBound<RealtimeHandler>) {
        guard let loop = context?.eventLoop else { return }
        timers.ping = loop.scheduleTask(in: heartbeat.heartbeat.interval) { bound.value.pingTick(bound) }
    }

    private func pingTick(_ bound: NIOLoopBound<RealtimeHandler>) {
        guard let context, context.channel.isActive else { return }
        switch heartbeat.tick(at: context.eventLoop.now) {
        case .none:
            break
        case .ping:
            write(WebSocketText.control(opcode: 0x9, payload: ByteBuffer()), flush: true)
        case .close:
            // No answer to the last ping and nothing else heard since: the peer is gone.
            context.close(promise: nil)
            return
        }
        schedulePing(bound)
    }

    private func scheduleIdleCheck(_ bound: NIOLoopBound<RealtimeHandler>, after delay: TimeAmount, idle: IdleTimeout) {
        guard let loop = context?.eventLoop else { return }
        timers.idle = loop.scheduleTask(in: delay) { bound.value.idleCheck(bound, idle: idle) }
    }

    /// Once nobody in its session sent a message for the idle timeout, has the session end
    /// and close its sockets (`LiveSession.idledOut`); a socket in no session yet (silent
    /// itself for that long) closes on its own.
    private func idleCheck(_ bound: NIOLoopBound<RealtimeHandler>, idle: IdleTimeout) {
        let limit = TimeAmount.milliseconds(idle.milliseconds)
        let now = NIODeadline.now()
        var silent = now - lastMessage
        if case .attached(let session, _) = state { silent = min(silent, session.silence(at: now)) }
        if silent >= limit {
            guard case .attached(let session, _) = state, let loop = context?.eventLoop else {
                close(code: idle.code, reason: idle.reason)
                return
            }
            // The session closes its sockets once the end is stored, so a client that hears
            // the close and asks again finds the session gone.
            session.dispatch { session in
                switch session.idledOut(idle) {
                case .ends:
                    break
                case .socketClosesAlone:
                    loop.execute { bound.value.close(code: idle.code, reason: idle.reason) }
                case .heard(let lookAgainIn):
                    loop.execute { bound.value.scheduleIdleCheck(bound, after: lookAgainIn, idle: idle) }
                }
            }
        } else {
            scheduleIdleCheck(bound, after: limit - silent, idle: idle)
        }
    }
}
