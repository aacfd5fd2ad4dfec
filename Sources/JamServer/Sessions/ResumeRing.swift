import NIOCore

/// A session's newest logged frames, for `hello {lastSeq}`: at most `limit` frames and
/// `byteLimit` bytes, the oldest dropped first, the newest kept whatever its size.
///
/// One rule for the outbox, which keeps frames as they are released, and for recovery, which
/// regenerates them by replaying the log: a replay of thousands of records never holds more
/// than the ring it fills.
struct ResumeRing {
    /// Most frames kept.
    let limit: Int
    /// Most bytes kept (beyond the newest frame).
    let byteLimit: Int
    /// Oldest first.
    private(set) var frames = CircularBuffer<(seq: Int64, bytes: ByteBuffer)>()
    /// The bytes of `frames`.
    private(set) var bytes = 0

    /// An empty ring with the outbox's limits.
    init(_ configuration: SessionOutbox.Configuration) {
        limit = configuration.replayLimit
        byteLimit = configuration.replayBytesLimit
    }

    /// Keeps `frame`, dropping the oldest beyond the count or the bytes.
    mutating func append(_ frame: (seq: Int64, bytes: ByteBuffer)) {
        frames.append(frame)
        bytes += frame.bytes.readableBytes
        while frames.count > 1, frames.count > limit || bytes > byteLimit {
            bytes -= frames.removeFirst().bytes.readableBytes
        }
    }

    /// Forgets every frame.
    mutating func removeAll() {
        frames.removeAll()
        bytes = 0
    }
}
