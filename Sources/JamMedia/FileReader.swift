import Foundation

/// Random access to a file through a 64 kB window, so the readers can seek to the few
/// places they need (headers, the last Ogg page, MP4 atoms) and walk frame headers byte
/// by byte without a system call per byte or the whole file in memory. It also reads
/// bytes already in memory (an upload, a fuzzer's input) through the same calls.
///
/// It also bounds how much reading a file may take. A reader walks a file about once; a
/// crafted file that makes some reader go over the same bytes again and again (the square of
/// its size has been seen twice) runs into `workLimit` and is refused, instead of holding
/// the library scan, and so the server's start, for hours.
final class FileReader {
    let url: URL
    let size: Int
    /// How many bytes the readers may take from this file in all.
    let workLimit: Int
    /// How many they have taken so far.
    private(set) var work = 0
    private let handle: FileHandle?
    private var window: [UInt8] = []
    private var windowStart = 0
    private static let windowSize = 65_536

    init(_ url: URL) throws(AudioFile.ReadError) {
        self.url = url
        do {
            let handle = try FileHandle(forReadingFrom: url)
            size = Int(try handle.seekToEnd())
            self.handle = handle
        } catch {
            throw AudioFile.ReadError("the file cannot be opened (\(Self.reason(error)))")
        }
        workLimit = Self.workLimit(size: size)
    }

    /// Reads `bytes` as if they were a file's; `workLimit` replaces the one for their size.
    init(bytes: [UInt8], workLimit: Int? = nil) {
        url = URL(fileURLWithPath: "/dev/null")
        size = bytes.count
        handle = nil
        window = bytes
        self.workLimit = workLimit ?? Self.workLimit(size: bytes.count)
    }

    /// The reading a file of `size` bytes may take: 16 times its size, and 64 MiB for
    /// small files. The readers take at most 1.5 times a file's size (`ReadingWorkTests`
    /// holds every fixture to that), so only a reader looping over the same bytes gets near it.
    static func workLimit(size: Int) -> Int {
        let (scaled, overflow) = size.multipliedReportingOverflow(by: 16)
        return overflow ? Int.max : max(scaled, 64 << 20)
    }

    deinit {
        // Only reads went through this handle, so a failing close loses nothing.
        try? handle?.close()
    }

    /// Up to `count` bytes from `offset`; fewer at the end of the file.
    func read(at offset: Int, count: Int) throws(AudioFile.ReadError) -> [UInt8] {
        guard offset >= 0, count > 0, offset < size else { return [] }
        let count = min(count, size - offset)
        try take(count)
        if offset >= windowStart, offset + count <= windowStart + window.count {
            return Array(window[(offset - windowStart)..<(offset - windowStart + count)])
        }
        if count > Self.windowSize { return try readDirect(at: offset, count: count) }
        window = try readDirect(at: offset, count: Self.windowSize)
        windowStart = offset
        return Array(window.prefix(count))
    }

    /// Exactly `count` bytes from `offset`, or "truncated <what>".
    func bytes(at offset: Int, count: Int, what: String) throws(AudioFile.ReadError) -> [UInt8] {
        let bytes = try read(at: offset, count: count)
        guard bytes.count == count, count >= 0 else { throw AudioFile.ReadError("truncated \(what)") }
        return bytes
    }

    /// One byte, nil past the end (for scanning).
    func byte(at offset: Int) throws(AudioFile.ReadError) -> UInt8? {
        if offset >= windowStart, offset < windowStart + window.count {
            try take(1)
            return window[offset - windowStart]
        }
        return try read(at: offset, count: 1).first
    }

    /// Counts `count` more bytes read, or refuses the file once they pass `workLimit`.
    private func take(_ count: Int) throws(AudioFile.ReadError) {
        work += count
        guard work <= workLimit else {
            throw AudioFile.ReadError("reading the file took more than \(workLimit) bytes for its \(size): a damaged or crafted file")
        }
    }

    /// Where `pattern` next starts at or after `offset` and before `limit`, if anywhere.
    func find(_ pattern: [UInt8], from offset: Int, before limit: Int) throws(AudioFile.ReadError) -> Int? {
        guard let first = pattern.first else { return nil }
        var position = max(0, offset)
        let end = min(limit, size) - pattern.count
        while position <= end {
            if try byte(at: position) == first, try read(at: position, count: pattern.count) == pattern { return position }
            position += 1
        }
        return nil
    }

    private func readDirect(at offset: Int, count: Int) throws(AudioFile.ReadError) -> [UInt8] {
        guard let handle else { return [] }  // in memory: the window is all of it
        do {
            try handle.seek(toOffset: UInt64(offset))
            return [UInt8](try handle.read(upToCount: count) ?? Data())
        } catch {
            throw AudioFile.ReadError("the file cannot be read (\(Self.reason(error)))")
        }
    }

    private static func reason(_ error: any Error) -> String {
        let text = (error as NSError).localizedDescription
        return text.isEmpty ? "\(error)" : text
    }
}
