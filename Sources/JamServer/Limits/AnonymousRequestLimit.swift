import Hummingbird

/// Caps the API requests an address may make without a valid token (`RateLimits.anonymous`):
/// a stranger guessing tokens or hammering the library routes gets 429 with `Retry-After`,
/// while signed-in members are limited per member instead. The web client's own files are
/// left out, as a party behind one router loads them all at once; covers and audio, which
/// no element can ask for with a token, have a larger budget of their own
/// (`RateLimits.media`) for the same reason.
package struct AnonymousRequestLimit: RouterMiddleware {
    let limiter: RateLimiter
    let limit: (count: Int, window: Int)
    let mediaLimit: (count: Int, window: Int)

    package init(limiter: RateLimiter, limits: RateLimits) {
        self.limiter = limiter
        limit = limits.anonymous
        mediaLimit = limits.media
    }

    package func handle(_ request: Request, context: JamRequestContext, next: (Request, JamRequestContext) async throws -> Response) async throws -> Response {
        if case .user = context.authentication {
            return try await next(request, context)
        }
        let segments = request.uri.path.split(separator: "/")
        if Self.isMedia(segments) {
            try await limiter.check("media:\(RouteHelpers.clientAddress(context))", limit: mediaLimit)
        } else if segments.first == "api" || segments.first == "auth" {
            try await limiter.check("anonymous:\(RouteHelpers.clientAddress(context))", limit: limit)
        }
        return try await next(request, context)
    }

    /// Whether the path (its non-empty segments, as the router reads it) names a track's
    /// audio or cover: `api/v1/tracks/{id}/audio` or `…/artwork`.
    static func isMedia(_ segments: [Substring]) -> Bool {
        segments.count == 5 && segments[0] == "api" && segments[1] == "v1" && segments[2] == "tracks"
            && (segments[4] == "audio" || segments[4] == "artwork")
    }
}
