import JamProtocol
import Synchronization

/// One realtime socket: a bounded outbox the session fills without ever waiting,
/// drained by the socket's own writer task.
public final class Connection: Sendable {
    /// Why and how the connection is to be closed.
    public struct CloseRequest: Sendable, Equatable {
        public var code: UInt16
        public var reason: String
    }

    private static let counter = Atomic<Int>(0)

    /// Unique per process.
    public let id: Int
    /// The authenticated user.
    public let userId: UserID
    /// Frames to write, in order.
    let frames: AsyncStream<String>
    private let continuation: AsyncStream<String>.Continuation
    private let closeState = Mutex<CloseRequest?>(nil)
    private let lastHeard = Atomic<Int64>(0)

    /// Creates a connection whose outbox holds at most `limit` frames.
    public init(userId: UserID, limit: Int) {
        id = Self.counter.wrappingAdd(1, ordering: .relaxed).newValue
        self.userId = userId
        (frames, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingOldest(limit))
    }

    /// What happened to a frame handed to the outbox.
    enum SendResult {
        /// Queued for the writer.
        case queued
        /// The outbox is full: the reader has stalled.
        case overflowed
        /// The socket is already going away.
        case closed
    }

    /// Queues a frame without waiting.
    @discardableResult
    func send(_ frame: String) -> SendResult {
        switch continuation.yield(frame) {
        case .enqueued: .queued
        case .dropped: .overflowed
        case .terminated: .closed
        @unknown default: .closed
        }
    }

    /// Stops the outbox; the writer closes the socket with `code` after what is already queued
    /// (or at once for a stalled reader, whose queue is abandoned).
    func close(code: UInt16, reason: String) {
        let first = closeState.withLock { state -> Bool in
            guard state == nil else { return false }
            state = CloseRequest(code: code, reason: reason)
            return true
        }
        if first { continuation.finish() }
    }

    /// The close the server asked for, if any.
    var closeRequest: CloseRequest? { closeState.withLock { $0 } }

    /// Notes that the client sent something at `now` (for idle timeouts).
    func heard(at now: Millis) { lastHeard.store(now, ordering: .relaxed) }

    /// When the client last sent something.
    var lastHeardAt: Millis { lastHeard.load(ordering: .relaxed) }
}
