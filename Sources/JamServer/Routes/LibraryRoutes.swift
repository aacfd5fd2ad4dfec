import Hummingbird
import JamMedia
import JamProtocol

/// `GET /api/v1/search?q=&limit=`: the music library, searchable by anybody signed in.
struct LibraryRoutes {
    let library: MusicLibrary

    func register(on router: Router<JamRequestContext>) {
        router.get("api/v1/search") { request, context in
            _ = try context.requireIdentity()
            let query = request.uri.queryParameters["q"].map(String.init) ?? ""
            guard query.count <= 200 else { throw JamError(.invalidField, "q must be at most 200 characters") }
            var limit = 25
            if let text = request.uri.queryParameters["limit"] {
                guard let value = Int(text), (1...200).contains(value) else { throw JamError(.invalidField, "limit must be between 1 and 200") }
                limit = value
            }
            return try RouteHelpers.json(SearchResults(tracks: library.search(query, limit: limit).map(\.track)))
        }
    }
}
