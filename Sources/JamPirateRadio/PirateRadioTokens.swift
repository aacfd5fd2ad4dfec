import Crypto
import Foundation
import HTTPTypes
import JamPirateRadioWire
import JamProtocol
import JamServer

/// PirateRadio's tokens: HS256 JWTs with `sub` (the client's user id), `name`, `iat` and
/// `exp` in seconds, signed with `JWT_SECRET` as given, whatever its length (as that
/// app's server does; JWT libraries that insist on 32-byte keys cannot serve it).
struct PirateRadioTokens: Sendable {
    private struct Header: Codable {
        var alg: String
        var typ: String?
    }

    private struct Claims: Codable {
        var sub: String
        var name: String?
        var iat: Int64?
        var exp: Int64?
    }

    private let key: [UInt8]
    private let lifetimeMs: Int64
    private let clock: any ServerClock

    /// Creates the authority with the server secret.
    init(secret: String, lifetimeMs: Int64, clock: any ServerClock) {
        key = Array(secret.utf8)
        self.lifetimeMs = lifetimeMs
        self.clock = clock
    }

    /// A token for `userId`.
    func sign(userId: String, name: String) -> String {
        let now = clock.now() / 1000
        let header = Self.base64url(Data(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
        let claims = Claims(sub: userId, name: name, iat: now, exp: now + lifetimeMs / 1000)
        let payload = Self.base64url((try? JSONEncoder().encode(claims)) ?? Data())
        return "\(header).\(payload).\(signature(of: "\(header).\(payload)"))"
    }

    /// Who `token` names, or why it is not acceptable.
    func verify(_ token: String) throws(JamError) -> Identity {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let headerData = Self.decodeBase64url(parts[0]), let claimsData = Self.decodeBase64url(parts[1]),
              let signature = Self.decodeBase64url(parts[2])
        else { throw JamError(.unauthorized, "the token is malformed") }
        let header: Header
        let claims: Claims
        // Read before the signature is checked: through the guarded decoder, as any text from outside.
        do throws(JamError) {
            header = try WireCoding.decode(Header.self, from: headerData)
            claims = try WireCoding.decode(Claims.self, from: claimsData)
        } catch {
            throw JamError(.unauthorized, "the token is malformed")
        }
        guard header.alg == "HS256" else { throw JamError(.unauthorized, "the token must be signed with HS256") }
        let signed = Data("\(parts[0]).\(parts[1])".utf8)
        guard HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: signed, using: SymmetricKey(data: key)) else {
            throw JamError(.unauthorized, "the token's signature is not valid")
        }
        if let exp = claims.exp, exp <= clock.now() / 1000 { throw JamError(.unauthorized, "the token has expired") }
        guard !claims.sub.isEmpty else { throw JamError(.unauthorized, "the token names no user") }
        return Identity(userId: JamID(claims.sub), displayName: PirateRadioRoutes.displayName(given: claims.name, userId: claims.sub))
    }

    /// The identity behind a request's `Authorization: Bearer` header: the first, as Node's
    /// HTTP server keeps only the first of several.
    func verify(headers: HTTPFields) throws(JamError) -> Identity {
        guard let token = try BearerToken.read(authorization: headers[values: .authorization].first) else {
            throw JamError(.unauthorized, "missing Authorization header")
        }
        return try verify(token)
    }

    private func signature(of text: String) -> String {
        Self.base64url(Data(HMAC<SHA256>.authenticationCode(for: Data(text.utf8), using: SymmetricKey(data: key))))
    }

    static func base64url(_ data: Data) -> String { TokenSigner.base64url(data) }
    static func decodeBase64url(_ text: String) -> Data? { TokenSigner.decodeBase64url(text) }
}
