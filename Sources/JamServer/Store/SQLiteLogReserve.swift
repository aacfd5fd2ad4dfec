#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes the write-ahead log's file out to the size it keeps while it starts over, before
/// the server's first commit, so commits rewrite blocks the file already holds instead of
/// allocating new ones.
///
/// Once the log starts over (`SQLiteSessionStore.resetFrames`) its writes reuse the same
/// blocks; until then, on a fresh data folder and after every restart (SQLite removes the
/// log when it closes), each commit's fsync waits for blocks the disk allocates first. On a
/// virtual disk mounted with `discard` such an fsync took ~1.7 times a rewrite's, and now and
/// then a first write took up to 156 ms at the device (a commit waited up to 331 ms) (docs/PERFORMANCE.md, "First writes: stalls traced to the disk"). PostgreSQL fills each new WAL segment
/// with zeros for the same reason (`wal_init_zero`). The zeros past SQLite's last frame are
/// never taken for frames: a frame counts only when its salt matches the log's header and
/// its checksum continues the chain.
enum SQLiteLogReserve {
    /// The log's size for `frames` frames of `pageSize`-byte pages: a 32-byte header, then a
    /// 24-byte header before each page.
    static func bytes(frames: Int, pageSize: Int) -> Int { 32 + frames * (pageSize + 24) }

    /// Extends the file at `path` with zeros to `bytes` and fsyncs it, never touching what it
    /// holds already; a file that long is left as it is. Returns how many bytes it wrote.
    @discardableResult
    static func reserve(path: String, bytes: Int) throws(LogReserveFailure) -> Int {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw LogReserveFailure(path: path, step: "open", errno: errno) }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw LogReserveFailure(path: path, step: "stat", errno: errno) }
        var offset = Int(status.st_size)
        guard offset < bytes else { return 0 }
        let start = offset
        let zeros = [UInt8](repeating: 0, count: 1 << 20)
        while offset < bytes {
            let count = min(zeros.count, bytes - offset)
            let written = zeros.withUnsafeBytes { pwrite(fd, $0.baseAddress, count, off_t(offset)) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw LogReserveFailure(path: path, step: "write", errno: written < 0 ? errno : EIO) }
            offset += written
        }
        guard fsync(fd) == 0 else { throw LogReserveFailure(path: path, step: "fsync", errno: errno) }
        return offset - start
    }
}

/// The log could not be reserved; the store works on and lets the log grow as it writes.
struct LogReserveFailure: Error, CustomStringConvertible, Equatable {
    let path: String
    let step: String
    let errno: Int32

    var description: String { "could not reserve the write-ahead log \(path) (\(step)): \(String(cString: strerror(errno)))" }
}
