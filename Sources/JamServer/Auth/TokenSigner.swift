import Crypto
import Foundation
import JamProtocol

/// Who a valid token says the caller is.
public struct Identity: Sendable, Hashable {
    /// The user.
    public var userId: UserID
    /// The name chosen at sign-in.
    public var displayName: String

    /// Creates an identity (the profiles' own token formats name users too). A name signed
    /// before names refused the characters that turn the direction of text is taken without
    /// them, and one that shows nothing is "Guest", so its token still joins and a refreshed
    /// one no longer carries them.
    package init(userId: UserID, displayName: String) {
        self.userId = userId
        let cleaned = Validate.withoutDirectionControls(displayName)
        if cleaned == displayName, displayName.unicodeScalars.contains(where: Validate.shows) {
            self.displayName = displayName
        } else {
            let trimmed = cleaned.trimmingCharacters(in: .whitespacesAndNewlines)
            self.displayName = trimmed.unicodeScalars.contains(where: Validate.shows) ? trimmed : "Guest"
        }
    }
}

/// Mints and checks guest tokens: `v1.<payload>.<HMAC-SHA256>`, both parts base64url.
public struct TokenSigner: Sendable {
    private struct Payload: Codable {
        var sub: String
        var name: String
        var iat: Int64
        var exp: Int64
    }

    private let keyBytes: [UInt8]
    private var key: SymmetricKey { SymmetricKey(data: keyBytes) }
    /// How long a guest token is valid unless the server is told otherwise.
    public static let defaultLifetimeMs: Int64 = 30 * 24 * 3_600_000
    /// How long the tokens this signer mints are valid.
    public let lifetimeMs: Int64

    /// Creates a signer with the server secret.
    public init(secret: String, lifetimeMs: Int64 = TokenSigner.defaultLifetimeMs) {
        keyBytes = Array(SHA256.hash(data: Data(secret.utf8)))
        self.lifetimeMs = lifetimeMs
    }

    /// When a token minted at `now` expires.
    public func expiry(from now: Millis) -> Millis {
        now + lifetimeMs
    }

    /// A token for `identity`, valid from `now` until `expiry(from: now)`.
    public func token(for identity: Identity, now: Millis) -> String {
        let payload = Payload(sub: identity.userId.rawValue, name: identity.displayName, iat: now, exp: expiry(from: now))
        let body = (try? JSONEncoder().encode(payload)).map(Self.base64url) ?? ""
        let signature = HMAC<SHA256>.authenticationCode(for: Data("v1.\(body)".utf8), using: key)
        return "v1.\(body).\(Self.base64url(Data(signature)))"
    }

    /// The identity in `token`, or a specific reason it is not acceptable.
    public func verify(_ token: String, now: Millis) throws(JamError) -> Identity {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "v1" else { throw JamError(.unauthorized, "the token is malformed") }
        guard let signature = Self.decodeBase64url(String(parts[2])) else { throw JamError(.unauthorized, "the token is malformed") }
        guard HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: Data("v1.\(parts[1])".utf8), using: key) else {
            throw JamError(.unauthorized, "the token's signature is not valid")
        }
        guard let json = Self.decodeBase64url(String(parts[1])) else { throw JamError(.unauthorized, "the token is malformed") }
        let payload: Payload
        do {
            payload = try JSONDecoder().decode(Payload.self, from: json)
        } catch {
            throw JamError(.unauthorized, "the token is malformed")
        }
        guard payload.exp > now else { throw JamError(.unauthorized, "the token has expired; sign in again (refresh a token before it expires: POST /auth/refresh)") }
        return Identity(userId: JamID(payload.sub), displayName: payload.name)
    }

    package static func base64url(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    package static func decodeBase64url(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }
}
