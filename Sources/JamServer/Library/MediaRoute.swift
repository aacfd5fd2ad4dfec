import HTTPTypes
import Hummingbird

/// A route that serves a library track's media without a token (an `<img>` or `<audio>`
/// element cannot send one), named once for the routes that register it and for the limit
/// that counts its requests apart (`APIRequestLimit`).
enum MediaRoute: CaseIterable {
    /// `GET|HEAD /api/v1/tracks/{id}/audio` (`AudioRoutes`).
    case audio
    /// `GET|HEAD /api/v1/tracks/{id}/artwork` (`LibraryRoutes`; the router answers HEAD).
    case artwork

    /// The path as the router registers it.
    var path: String {
        switch self {
        case .audio: "api/v1/tracks/:id/audio"
        case .artwork: "api/v1/tracks/:id/artwork"
        }
    }

    /// The methods the route answers.
    var methods: [HTTPRequest.Method] {
        switch self {
        case .audio: [.get, .head]
        case .artwork: [.get, .head]
        }
    }

    /// The media route a request reaches, if any: `segments` are its path's non-empty
    /// segments, as the router reads them (so `//api/…` and a trailing slash match too).
    static func reached(by method: HTTPRequest.Method, _ segments: [Substring]) -> MediaRoute? {
        allCases.first { route in
            let pattern = route.path.split(separator: "/")
            return route.methods.contains(method) && pattern.count == segments.count
                && zip(pattern, segments).allSatisfy { $0.hasPrefix(":") || $0 == $1 }
        }
    }
}
