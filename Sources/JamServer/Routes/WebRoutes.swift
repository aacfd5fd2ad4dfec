import Foundation
import Hummingbird
import JamProtocol
import JamQR
import JamWebClient

/// The browser client: its files at `/`, join links `/j/{code}` (the same page, which
/// reads the code from the address) and `GET /api/v1/qr.svg?text=` for invite codes.
struct WebRoutes {
    /// Where the client's files come from.
    enum Source {
        /// Built into the binary: what `jam serve` serves.
        case embedded(EmbeddedFileProvider)
        /// A folder holding `index.html` and the modules, for working on the client.
        case folder(URL)
    }

    let source: Source

    /// Serves the client from `folder`, or the one built into the binary when nil.
    init(folder: URL?) {
        source = folder.map(Source.folder) ?? .embedded(EmbeddedFileProvider(WebClient.files))
    }

    func register(on router: Router<JamRequestContext>) {
        router.add(middleware: WebPageHeaders())
        switch source {
        case .embedded(let files):
            router.add(middleware: FileMiddleware(fileProvider: files, searchForIndexHtml: true))
        case .folder(let root):
            router.add(middleware: WebRootGuard(root: root))
            router.add(middleware: FileMiddleware(root.path, searchForIndexHtml: true))
        }
        // Link previews in chat apps ask with HEAD first: the router answers it from this.
        router.get("j/:code") { _, context in
            _ = try context.parameters.require("code")
            return try await indexPage()
        }
        router.get("api/v1/qr.svg") { request, _ in
            guard let text = try RouteHelpers.queryText(request, "text"), !text.isEmpty else {
                throw JamError(.invalidField, "text is required: the text to encode")
            }
            guard text.utf8.count <= 512 else { throw JamError(.invalidField, "text must be at most 512 bytes") }
            let code: QRCode
            do {
                code = try QRCode(text, correction: .medium)
            } catch {
                throw JamError(.invalidField, "text cannot be encoded as a QR code: \(error)")
            }
            return Response(
                status: .ok, headers: [.contentType: "image/svg+xml", .cacheControl: "public, max-age=86400"],
                body: .init(byteBuffer: .init(string: code.svg())))
        }
    }

    private func indexPage() async throws -> Response {
        let body: ByteBuffer
        switch source {
        case .embedded(let files):
            guard let page = files.file("index.html") else { throw JamError(.notFound, "this server was built without the web client's index.html") }
            body = page
        case .folder(let root):
            let page = root.appendingPathComponent("index.html")
            do {
                body = ByteBuffer(bytes: try Data(contentsOf: page))
            } catch {
                throw JamError(.notFound, "the web client's folder has no readable index.html (\(page.path): \(error.localizedDescription))")
            }
        }
        return Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8"], body: .init(byteBuffer: body))
    }
}

/// Keeps pages to the server's own scripts (the client loads nothing from elsewhere) and
/// makes browsers revalidate them, so a new server version is picked up at once.
struct WebPageHeaders: RouterMiddleware {
    typealias Context = JamRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var request = request
        if RouteHelpers.firstSegment(request.uri.path) != "api", let range = request.headers[.range], !Self.isPlainRange(range) {
            var head = request.head
            // The web client's files go through FileMiddleware, which reads `bytes=-500` (the
            // last 500 bytes) as the first 501 and knows no list of ranges: such a request gets
            // the whole file, as a server may answer. Audio has its own reader (`ByteRange`).
            head.headerFields[.range] = nil
            request = Request(head: head, body: request.body)
        }
        var response = try await next(request, context)
        response.headers[.xContentTypeOptions] = "nosniff"
        if response.headers[.contentType]?.hasPrefix("text/html") == true {
            response.headers[.contentSecurityPolicy] =
                "default-src 'self'; img-src 'self' data:; media-src 'self' blob:; connect-src 'self'; style-src 'self'; object-src 'none'; base-uri 'none'"
        }
        if RouteHelpers.firstSegment(request.uri.path) != "api", response.headers[.cacheControl] == nil {
            response.headers[.cacheControl] = "no-cache"
        }
        return response
    }

    /// `bytes=first-last` or `bytes=first-`: one range counted from the start.
    static func isPlainRange(_ value: String) -> Bool {
        guard value.hasPrefix("bytes=") else { return false }
        let spec = value.dropFirst("bytes=".count)
        guard let dash = spec.firstIndex(of: "-") else { return false }
        let first = spec[..<dash], last = spec[spec.index(after: dash)...]
        let digit = { (character: Character) in character.isASCII && character.isWholeNumber }
        return !first.isEmpty && first.allSatisfy(digit) && last.allSatisfy(digit)
    }
}

/// Keeps a web root given on the command line to the web client's own files: a file or
/// folder whose name starts with a dot (`.git`, `.env`, an editor's swap file) is not served,
/// nor anything a link inside the folder leads to outside it. (FileMiddleware itself only
/// refuses `..`.)
struct WebRootGuard: RouterMiddleware {
    let root: URL
    private let resolvedRoot: String

    init(root: URL) {
        self.root = root
        resolvedRoot = root.resolvingSymlinksInPath().standardizedFileURL.path
    }

    func handle(_ request: Request, context: JamRequestContext, next: (Request, JamRequestContext) async throws -> Response) async throws -> Response {
        guard Self.mayServe(request.uri.path, root: root, resolvedRoot: resolvedRoot) else {
            throw JamError(.notFound, "no such file")
        }
        return try await next(request, context)
    }

    /// Whether `path` (as requested, percent-encoded) names a file the guard lets through.
    static func mayServe(_ path: String, root: URL, resolvedRoot: String) -> Bool {
        // A path that does not decode is not checked as something else: it is refused.
        guard let decoded = path.removingPercentEncoding else { return false }
        let segments = decoded.split(separator: "/")
        if segments.contains(where: { $0.hasPrefix(".") }) { return false }
        let target = segments.reduce(root) { $0.appendingPathComponent(String($1)) }
        var isFolder: ObjCBool = false
        // Only what exists can lead elsewhere; the rest is FileMiddleware's to answer 404.
        guard FileManager.default.fileExists(atPath: target.path, isDirectory: &isFolder) else { return true }
        // A folder is answered with its index.html, which may itself be a link.
        let served = isFolder.boolValue ? target.appendingPathComponent("index.html") : target
        guard FileManager.default.fileExists(atPath: served.path) else { return true }
        let resolved = served.resolvingSymlinksInPath().standardizedFileURL.path
        return resolved.hasPrefix(resolvedRoot + "/")
    }
}
