import Foundation
import Hummingbird
import JamWebClient
import NIOCore

/// Serves the browser client built into the binary through Hummingbird's `FileMiddleware`,
/// so embedded files get the same entity tags, `Last-Modified`, ranges and `HEAD` answers
/// as files on disk.
struct EmbeddedFileProvider: FileProvider {
    /// What `FileMiddleware` needs to know about a path.
    struct FileAttributes: FileMiddlewareFileAttributes, Sendable {
        let isFolder: Bool
        let size: Int
        let modificationDate: Date
    }

    /// A path below the client's root, without slashes at either end ("" is the root).
    typealias FileIdentifier = String

    private let files: [String: (body: ByteBuffer, attributes: FileAttributes)]
    private let folders: [String: FileAttributes]

    init(_ files: [String: WebFile]) {
        var bodies: [String: (body: ByteBuffer, attributes: FileAttributes)] = [:]
        var folders: [String: FileAttributes] = [:]
        for (path, file) in files {
            bodies[path] = (ByteBuffer(bytes: file.bytes), FileAttributes(isFolder: false, size: file.bytes.count, modificationDate: file.modificationDate))
            var folder = Substring(path)
            repeat {
                folder = folder.lastIndex(of: "/").map { folder[..<$0] } ?? ""
                let newest = max(folders[String(folder)]?.modificationDate ?? .distantPast, file.modificationDate)
                folders[String(folder)] = FileAttributes(isFolder: true, size: 0, modificationDate: newest)
            } while !folder.isEmpty
        }
        self.files = bodies
        self.folders = folders
    }

    /// The file itself, when the client has one at `path`.
    func file(_ path: String) -> ByteBuffer? { files[path]?.body }

    func getFileIdentifier(_ path: String) -> String? {
        String(path.drop { $0 == "/" }.reversed().drop { $0 == "/" }.reversed())
    }

    func getAttributes(id: String) async throws -> FileAttributes? {
        files[id]?.attributes ?? folders[id]
    }

    func loadFile(id: String, context: some RequestContext) async throws -> ResponseBody {
        guard let body = files[id]?.body else { throw HTTPError(.notFound) }
        return ResponseBody(byteBuffer: body)
    }

    func loadFile(id: String, range: ClosedRange<Int>, context: some RequestContext) async throws -> ResponseBody {
        guard let body = files[id]?.body else { throw HTTPError(.notFound) }
        // FileMiddleware passes an open range as `start...Int.max` (whose count overflows) and
        // a start past the end as it is; its headers already say `start...size-1`.
        guard range.lowerBound >= 0, range.lowerBound < body.readableBytes else {
            throw HTTPError(
                .rangeNotSatisfiable, headers: [.contentRange: "bytes */\(body.readableBytes)"],
                message: "the range starts past the end of the file (\(body.readableBytes) bytes)")
        }
        let end = min(range.upperBound, body.readableBytes - 1)
        return ResponseBody(byteBuffer: body.getSlice(at: range.lowerBound, length: end - range.lowerBound + 1) ?? ByteBuffer())
    }
}
