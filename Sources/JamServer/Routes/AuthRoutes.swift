import Hummingbird
import JamProtocol

/// `POST /auth/guest`: a user ID and a signed token for a display name; `POST /auth/refresh`:
/// a fresh token for the caller's still valid one, so a member who keeps coming back never
/// has to become somebody new.
package struct AuthRoutes {
    let signer: TokenSigner
    let clock: any ServerClock
    let ids: any IDGenerator
    let limiter: RateLimiter
    let limits: RateLimits?

    package init(signer: TokenSigner, clock: any ServerClock, ids: any IDGenerator, limiter: RateLimiter, limits: RateLimits?) {
        self.signer = signer
        self.clock = clock
        self.ids = ids
        self.limiter = limiter
        self.limits = limits
    }

    package func register(on router: Router<JamRequestContext>) {
        router.post("auth/guest") { request, context in
            // Read first: a request refused for its body spends none of the limit, so the
            // caller hears what is wrong with it rather than 429 after a few tries.
            let body = try await RouteHelpers.body(GuestAuthRequest.self, from: request, context: context)
            let name = try Validate.displayName(body.displayName)
            if let limits {
                try await limiter.check("guest:\(RouteHelpers.clientAddress(context))", limit: limits.guestAuth)
            }
            return try RouteHelpers.json(issue(Identity(userId: ids.next(), displayName: name)), status: .created)
        }
        router.post("auth/refresh") { _, context in
            let identity = try context.requireIdentity()
            if let limits {
                try await limiter.check("refresh:\(identity.userId)", limit: limits.guestAuth)
            }
            return try RouteHelpers.json(issue(identity), status: .ok)
        }
    }

    private func issue(_ identity: Identity) -> GuestAuthResponse {
        let now = clock.now()
        return GuestAuthResponse(
            userId: identity.userId, displayName: identity.displayName, token: signer.token(for: identity, now: now), expiresAt: signer.expiry(from: now))
    }
}
