import Hummingbird
import JamProtocol

/// Caps the API requests (`/api/`, `/auth/`) each caller may make: a signed-in member per
/// user (`RateLimits.member`), anyone without a valid token
/// per address (`RateLimits.anonymous`). A stranger guessing tokens, or a member polling a
/// session or the library search in a loop, gets 429 with `Retry-After`; a member's commands
/// also draw from the session's own budget (`CommandBudget`), and the sockets they open from
/// this one (`OpenJamProfile.openRealtime`, as upgrades do not reach the router). The web
/// client's own files are left out, as a party behind one router loads them all at once;
/// covers and audio, which no element can ask for with a token, count per address in a
/// larger budget of their own (`RateLimits.media`) for the same reason, whoever asks.
package struct APIRequestLimit: RouterMiddleware {
    let limiter: RateLimiter
    let anonymous: (count: Int, window: Int)
    let member: (count: Int, window: Int)
    /// Nil where the profile serves no media: such paths count as any other.
    let media: (count: Int, window: Int)?

    /// Counts against `limits`; `servesMedia` says whether the profile registers the
    /// `MediaRoute`s.
    package init(limiter: RateLimiter, limits: RateLimits, servesMedia: Bool) {
        self.limiter = limiter
        anonymous = limits.anonymous
        member = limits.member
        media = servesMedia ? limits.media : nil
    }

    package func handle(_ request: Request, context: JamRequestContext, next: (Request, JamRequestContext) async throws -> Response) async throws -> Response {
        let segments = request.uri.path.split(separator: "/")
        if let media, MediaRoute.reached(by: request.method, segments) != nil {
            try await limiter.check("media:\(RouteHelpers.clientAddress(context))", limit: media)
        } else if segments.first == "api" || segments.first == "auth" {
            switch context.authentication {
            case .user(let identity):
                // Per user, not per address: a party behind one router shares its address.
                try await limiter.check(Self.memberKey(identity.userId), limit: member)
            case .anonymous, .invalid:
                try await limiter.check("anonymous:\(RouteHelpers.clientAddress(context))", limit: anonymous)
            }
        }
        return try await next(request, context)
    }

    /// The limiter's key for `user`'s requests.
    package static func memberKey(_ user: UserID) -> String { "member:\(user)" }
}
