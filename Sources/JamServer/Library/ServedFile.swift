import Hummingbird
import JamProtocol
import NIOCore
import NIOFileSystem

/// A library track's file as the audio route serves it: opened without following a link,
/// and still the same file (device, inode, size and change time) when its bytes are read as when its
/// headers were made. Someone who can write to the music folder could otherwise swap a
/// scanned song for a link to the server's database and fetch its bytes as "audio".
struct ServedFile: Equatable, Sendable {
    let device: UInt64
    let inode: UInt64
    let size: Int
    /// The last change to its bytes or its entry, ns since 1970: the change time, which a copy
    /// that keeps the old modification time (`cp -p`, a tag editor) still moves.
    let changed: Int

    /// The regular file at `path`, nil when there is none (gone, a link, a folder).
    static func at(_ path: String) async -> ServedFile? {
        try? await FileSystem.shared.withFileHandle(forReadingAt: FilePath(path), options: Self.noLinks) { handle in
            Self(try await handle.info())
        }
    }

    /// The bytes of `range`, read when the response body is written, from the file at `path`
    /// if it is still this one; otherwise the response ends short, and the client sees an
    /// error rather than another file's bytes. A file cut shorter while it is read ends the
    /// same way: finished short, the connection would wait, open, for bytes its length
    /// promised until the idle timeout (75 s), and the player with it.
    func body(_ path: String, range: ClosedRange<Int>) -> ResponseBody {
        ResponseBody(contentLength: range.count) { writer in
            try await FileSystem.shared.withFileHandle(forReadingAt: FilePath(path), options: Self.noLinks) { handle in
                guard Self(try await handle.info()) == self else {
                    throw JamError(.notFound, "the audio file changed while it was being served")
                }
                let bytes = Int64(range.lowerBound)..<Int64(range.upperBound) + 1
                var written = 0
                for try await chunk in handle.readChunks(in: bytes, chunkLength: .kibibytes(128)) {
                    written += chunk.readableBytes
                    try await writer.write(chunk)
                }
                guard written == range.count else {
                    throw JamError(.notFound, "the audio file was cut short while it was being served")
                }
                try await writer.finish(nil)
            }
        }
    }

    private static let noLinks = OpenOptions.Read(followSymbolicLinks: false, closeOnExec: true)

    private init?(_ info: FileInfo) {
        guard info.type == .regular, let status = info.platformSpecificStatus else { return nil }
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
        size = Int(info.size)
        changed = info.lastStatusChangeTime.seconds * 1_000_000_000 + info.lastStatusChangeTime.nanoseconds
    }

    /// Names this version of the file: another inode, size or change gets another tag.
    var eTag: String {
        "\"\(String(inode, radix: 16))-\(String(size, radix: 16))-\(String(changed, radix: 16))\""
    }
}
