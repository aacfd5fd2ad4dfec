import Hummingbird
import JamProtocol

/// `POST /auth/guest`: a user ID and a signed token for a display name.
struct AuthRoutes {
    let signer: TokenSigner
    let clock: any ServerClock
    let ids: any IDGenerator
    let limiter: RateLimiter
    let limits: RateLimits?

    func register(on router: Router<JamRequestContext>) {
        router.post("auth/guest") { request, context in
            if let limits {
                try await limiter.check("guest:\(RouteHelpers.clientAddress(context))", limit: limits.guestAuth)
            }
            let body = try await RouteHelpers.body(GuestAuthRequest.self, from: request, context: context)
            let name = try Validate.displayName(body.displayName)
            let identity = Identity(userId: ids.next(), displayName: name)
            let token = signer.token(for: identity, now: clock.now())
            return try RouteHelpers.json(GuestAuthResponse(userId: identity.userId, displayName: name, token: token), status: .created)
        }
    }
}
