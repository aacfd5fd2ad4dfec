import Hummingbird
import JamProtocol
import NIOCore

/// What the caller's credentials say, decided once per request by `AuthMiddleware`.
public enum Authentication: Sendable {
    /// No token was presented.
    case anonymous
    /// A valid token.
    case user(Identity)
    /// A token was presented but is not acceptable.
    case invalid(JamError)
}

/// The request context of every OpenJam route, REST and realtime alike.
public struct JamRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Set by `AuthMiddleware`.
    public var authentication: Authentication = .anonymous
    /// Largest body the routes read.
    public var maxBodyBytes: Int = 64 * 1024
    /// The peer, for per-address rate limits.
    public let remoteAddress: SocketAddress?
    /// The client, behind a trusted proxy too (set by `ClientAddressMiddleware`).
    public var clientAddress: String?

    /// A context for one request; the authenticated user and client address are set by middleware.
    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    public var maxUploadSize: Int { maxBodyBytes }

    /// The caller, or 401 with the reason.
    public func requireIdentity() throws(JamError) -> Identity {
        switch authentication {
        case .user(let identity): return identity
        case .anonymous: throw JamError(.unauthorized, "sign in first: send a token as 'Authorization: Bearer <token>'")
        case .invalid(let error): throw error
        }
    }
}

/// Reads `Authorization: Bearer <token>` into the context (a `?token=` is refused as invalid).
package struct AuthMiddleware: RouterMiddleware {
    let signer: TokenSigner
    let clock: any ServerClock
    let maxBodyBytes: Int
    let header: BearerToken.HeaderRule

    package init(signer: TokenSigner, clock: any ServerClock, maxBodyBytes: Int, header: BearerToken.HeaderRule = .bearer) {
        self.signer = signer
        self.clock = clock
        self.maxBodyBytes = maxBodyBytes
        self.header = header
    }

    package func handle(_ request: Request, context: JamRequestContext, next: (Request, JamRequestContext) async throws -> Response) async throws -> Response {
        var context = context
        context.maxBodyBytes = maxBodyBytes
        context.authentication = authenticate(request)
        return try await next(request, context)
    }

    func authenticate(_ request: Request) -> Authentication {
        do throws(JamError) {
            // QueueIT's backend reads the first of several headers.
            let authorizations = request.headers[values: .authorization]
            let authorization = header == .bearer ? try BearerToken.single(authorizations) : authorizations.first
            guard let token = try BearerToken.read(authorization: authorization, rule: header, query: request.uri.queryParameters["token"]) else {
                return .anonymous
            }
            return .user(try signer.verify(token, now: clock.now()))
        } catch {
            return .invalid(error)
        }
    }
}

import Foundation
