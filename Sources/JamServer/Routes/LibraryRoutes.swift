import Hummingbird
import JamMedia
import JamProtocol

/// `GET /api/v1/search?q=&limit=`: the music library, searchable by anybody signed in;
/// `GET /api/v1/tracks/{id}/artwork`: a library track's cover.
struct LibraryRoutes {
    let catalog: LibraryCatalog

    func register(on router: Router<JamRequestContext>) {
        router.get("api/v1/search") { request, context in
            _ = try context.requireIdentity()
            let query = try RouteHelpers.queryText(request, "q") ?? ""
            guard query.count <= 200 else { throw JamError(.invalidField, "q must be at most 200 characters") }
            var limit = 25
            if let text = request.uri.queryParameters["limit"] {
                guard let value = Int(text), (1...200).contains(value) else { throw JamError(.invalidField, "limit must be between 1 and 200") }
                limit = value
            }
            let found = await catalog.library.search(query, limit: limit)
            return try RouteHelpers.json(SearchResults(tracks: found.map(\.wireTrack)))
        }
        // Like the audio, the cover needs no token: an <img> element cannot send one.
        router.get(RouterPath(MediaRoute.artwork.path)) { _, context in
            let id = try context.parameters.require("id")
            guard await catalog.library.track(id) != nil else { throw JamError(.notFound, "no track \(id) in the library") }
            let cover: CoverArt?
            do {
                cover = try await catalog.cover(id)
            } catch {
                // The reason names folders on the server's disk: it goes to the log only.
                context.logger.warning("a track's cover cannot be read", metadata: ["track.id": "\(id)", "error": .loggable(error)])
                throw JamError(.notFound, "the cover of track \(id) cannot be read")
            }
            guard let cover else { throw JamError(.notFound, "track \(id) has no cover") }
            return Response(
                status: .ok,
                headers: [
                    .contentType: cover.mimeType, .cacheControl: "public, max-age=86400", .contentLength: String(cover.data.count),
                    // Bytes from files on disk: a browser shows them as the type says, or not at all.
                    .xContentTypeOptions: "nosniff", .contentSecurityPolicy: "default-src 'none'; sandbox",
                ],
                body: .init(byteBuffer: .init(bytes: cover.data)))
        }
    }
}

extension LibraryTrack {
    /// The wire form, with the server's artwork URL when the track has a cover.
    package var wireTrack: Track {
        track(artworkURL: hasCover ? "/api/v1/tracks/\(id)/artwork" : nil)
    }
}
