import Foundation
import HTTPTypes
import Hummingbird
import JamMedia
import JamProtocol
import NIOPosix

/// `GET|HEAD /api/v1/tracks/{id}/audio` (with byte ranges, so players can seek and
/// browsers can stream).
///
/// It asks for no token: an `<audio>` element cannot send one, and a guest token is
/// free to anybody who can reach the server anyway.
struct AudioRoutes {
    let catalog: LibraryCatalog

    func register(on router: Router<JamRequestContext>) {
        router.get(RouterPath(MediaRoute.audio.path)) { request, context in
            try await audio(request, context, sendBody: true)
        }
        router.head(RouterPath(MediaRoute.audio.path)) { request, context in
            try await audio(request, context, sendBody: false)
        }
    }

    private func track(_ context: JamRequestContext) async throws -> LibraryTrack {
        let id = try context.parameters.require("id")
        guard let track = await catalog.library.track(id) else { throw JamError(.notFound, "no track \(id) in the library") }
        return track
    }

    private func audio(_ request: Request, _ context: JamRequestContext, sendBody: Bool) async throws -> Response {
        let track = try await track(context)
        guard let file = await ServedFile.at(track.file.path) else {
            throw JamError(.notFound, "the audio of track \(track.id) is no longer on the server")
        }
        let size = file.size
        let eTag = file.eTag
        let validators: HTTPFields = [.eTag: eTag, .cacheControl: "public, max-age=3600"]
        // A copy the client holds is still good: a revalidation after max-age costs no bytes.
        // A 304 carries the validators only (RFC 9110 §15.4.5), no metadata of the body.
        if let ifNoneMatch = request.headers[.ifNoneMatch], Self.matches(ifNoneMatch, eTag: eTag) {
            return Response(status: .notModified, headers: validators)
        }
        var headers = validators
        headers.append(contentsOf: [
            HTTPField(name: .contentType, value: track.contentType), HTTPField(name: .acceptRanges, value: "bytes"),
            // Bytes from a file on disk: played as the type says, never run as a page of this origin.
            HTTPField(name: .xContentTypeOptions, value: "nosniff"),
            HTTPField(name: .contentSecurityPolicy, value: "default-src 'none'; sandbox"),
        ])
        // Ranges are defined for GET only (RFC 9110 §14.2): a HEAD tells the whole file.
        var range = sendBody ? ByteRange(header: request.headers[.range], size: size) : .whole
        // A range is only honoured for the version of the file the client saw.
        if let ifRange = request.headers[.ifRange], ifRange != eTag { range = .whole }
        switch range {
        case .unsatisfiable:
            headers[.contentRange] = "bytes */\(size)"
            return Response(status: .rangeNotSatisfiable, headers: headers)
        case .whole:
            headers[.contentLength] = String(size)
            guard sendBody, size > 0 else { return Response(status: .ok, headers: headers) }
            return Response(status: .ok, headers: headers, body: file.body(track.file.path, range: 0...size - 1))
        case .partial(let bytes):
            headers[.contentRange] = "bytes \(bytes.lowerBound)-\(bytes.upperBound)/\(size)"
            headers[.contentLength] = String(bytes.count)
            guard sendBody else { return Response(status: .partialContent, headers: headers) }
            return Response(status: .partialContent, headers: headers, body: file.body(track.file.path, range: bytes))
        }
    }

    /// Whether an `If-None-Match` value names `eTag`: `*`, or a list of tags compared weakly
    /// (RFC 9110 §13.1.2: a `W/` prefix on either side does not matter).
    static func matches(_ ifNoneMatch: String, eTag: String) -> Bool {
        let wanted = Self.opaque(eTag)
        return ifNoneMatch.split(separator: ",").contains { candidate in
            let tag = candidate.trimmingCharacters(in: .whitespaces)
            return tag == "*" || Self.opaque(tag) == wanted
        }
    }

    private static func opaque(_ tag: some StringProtocol) -> Substring {
        let tag = Substring(tag)
        return tag.hasPrefix("W/") ? tag.dropFirst(2) : tag
    }
}
