import JamProtocol
import NIOCore
import Synchronization

/// One realtime socket as its session sees it: who is on it and where its frames go.
final class RealtimeConnection: Sendable {
    private static let counter = Atomic<Int>(0)

    /// Unique in the process.
    let id: ConnectionID
    /// The authenticated user.
    let user: UserID
    /// The name the user signed in with (joins where sockets are membership).
    let displayName: String
    /// The socket's loop: the handler lives there.
    let eventLoop: any EventLoop
    private let handler: NIOLoopBound<RealtimeHandler>

    init(user: UserID, displayName: String, handler: RealtimeHandler, eventLoop: any EventLoop) {
        id = Self.counter.wrappingAdd(1, ordering: .relaxed).newValue
        self.user = user
        self.displayName = displayName
        self.eventLoop = eventLoop
        self.handler = NIOLoopBound(handler, eventLoop: eventLoop)
    }

    /// Writes `frames` and flushes once; on the connection's loop.
    func send(_ frames: [ByteBuffer]) {
        handler.value.send(frames)
    }

    /// Sends a close frame after what is queued, then closes the socket; on the connection's loop.
    func close(_ code: CloseCode, reason: String) {
        handler.value.close(code: code.rawValue, reason: reason)
    }

    /// What one session turn has for the connections of one loop.
    struct Delivery: Sendable {
        var connection: RealtimeConnection
        var frames: [ByteBuffer]
        var close: (code: CloseCode, reason: String)?
    }

    /// Carries out `deliveries`, each on its connection's loop: one hop per loop, not per socket.
    static func deliver(_ deliveries: [Delivery]) {
        var byLoop: [ObjectIdentifier: (loop: any EventLoop, deliveries: [Delivery])] = [:]
        for delivery in deliveries {
            let key = ObjectIdentifier(delivery.connection.eventLoop)
            byLoop[key, default: (delivery.connection.eventLoop, [])].deliveries.append(delivery)
        }
        for (_, group) in byLoop {
            if group.loop.inEventLoop {
                run(group.deliveries)
            } else {
                let batch = group.deliveries
                group.loop.execute { run(batch) }
            }
        }
    }

    private static func run(_ deliveries: [Delivery]) {
        for delivery in deliveries {
            if !delivery.frames.isEmpty { delivery.connection.send(delivery.frames) }
            if let close = delivery.close { delivery.connection.close(close.code, reason: close.reason) }
        }
    }
}
