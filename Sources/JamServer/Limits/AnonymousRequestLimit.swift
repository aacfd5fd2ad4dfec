import Hummingbird

/// Caps the API requests an address may make without a valid token (`RateLimits.anonymous`):
/// a stranger guessing tokens or hammering the library routes gets 429 with `Retry-After`,
/// while a signed-in member's commands draw from their own budget instead (`CommandBudget`;
/// their reads are not limited). The web client's own files are left out, as a party behind
/// one router loads them all at once; covers and audio, which no element can ask for with a
/// token, have a larger budget of their own (`RateLimits.media`) for the same reason.
package struct AnonymousRequestLimit: RouterMiddleware {
    let limiter: RateLimiter
    let limit: (count: Int, window: Int)
    /// Nil where the profile serves no media: such paths count as any other.
    let mediaLimit: (count: Int, window: Int)?

    /// Counts against `limits`; `servesMedia` says whether the profile registers the
    /// `MediaRoute`s.
    package init(limiter: RateLimiter, limits: RateLimits, servesMedia: Bool) {
        self.limiter = limiter
        limit = limits.anonymous
        mediaLimit = servesMedia ? limits.media : nil
    }

    package func handle(_ request: Request, context: JamRequestContext, next: (Request, JamRequestContext) async throws -> Response) async throws -> Response {
        if case .user = context.authentication {
            return try await next(request, context)
        }
        let segments = request.uri.path.split(separator: "/")
        if let mediaLimit, MediaRoute.reached(by: request.method, segments) != nil {
            try await limiter.check("media:\(RouteHelpers.clientAddress(context))", limit: mediaLimit)
        } else if segments.first == "api" || segments.first == "auth" {
            try await limiter.check("anonymous:\(RouteHelpers.clientAddress(context))", limit: limit)
        }
        return try await next(request, context)
    }
}
