import Hummingbird

/// Caps the API requests an address may make without a valid token (`RateLimits.anonymous`):
/// a stranger guessing tokens or hammering the library and audio routes gets 429 with
/// `Retry-After`, while signed-in members are limited per member instead. The web client's
/// own files are left out: a party behind one router loads them all at once.
package struct AnonymousRequestLimit: RouterMiddleware {
    let limiter: RateLimiter
    let limit: (count: Int, window: Int)

    package init(limiter: RateLimiter, limit: (count: Int, window: Int)) {
        self.limiter = limiter
        self.limit = limit
    }

    package func handle(_ request: Request, context: JamRequestContext, next: (Request, JamRequestContext) async throws -> Response) async throws -> Response {
        if case .user = context.authentication {
            return try await next(request, context)
        }
        let first = RouteHelpers.firstSegment(request.uri.path)
        if first == "api" || first == "auth" {
            try await limiter.check("anonymous:\(RouteHelpers.clientAddress(context))", limit: limit)
        }
        return try await next(request, context)
    }
}
