import Crypto
import Foundation

/// Standard HS256 JSON Web Tokens, made and read by the tests themselves.
enum JWT {
    static func base64url(_ data: Data) -> String {
        data.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func base64urlDecode(_ text: Substring) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }

    /// A token `header.payload.signature` signed with HMAC-SHA256 keyed by the UTF-8 bytes of `secret`
    /// (what `jsonwebtoken`'s `jwt.sign(payload, secret)` makes).
    static func sign(_ payload: JSONObject, secret: String) throws -> String {
        let header = base64url(try JSONSerialization.data(withJSONObject: ["alg": "HS256", "typ": "JWT"], options: [.sortedKeys]))
        let body = base64url(try JSONSerialization.data(withJSONObject: payload, options: [.sortedKeys]))
        let input = "\(header).\(body)"
        let mac = HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: SymmetricKey(data: Data(secret.utf8)))
        return "\(input).\(base64url(Data(mac)))"
    }

    /// Whether `token`'s signature is HMAC-SHA256 of `header.payload` keyed by `secret`'s UTF-8 bytes.
    static func hasValidSignature(_ token: String, secret: String) -> Bool {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let signature = base64urlDecode(parts[2]) else { return false }
        return HMAC<SHA256>.isValidAuthenticationCode(
            signature, authenticating: Data("\(parts[0]).\(parts[1])".utf8), using: SymmetricKey(data: Data(secret.utf8)))
    }

    /// The decoded header (part 1) of a compact JWT.
    static func header(_ token: String) -> JSONObject? {
        part(token, 0)
    }

    /// The decoded payload (part 2) of a compact JWT.
    static func payload(_ token: String) -> JSONObject? {
        part(token, 1)
    }

    private static func part(_ token: String, _ index: Int) -> JSONObject? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let data = base64urlDecode(parts[index]) else { return nil }
        return parseJSONObject(data)
    }

    /// A claims set for `userId`, issued `issuedSecondsAgo` ago and expiring `expiresInSeconds` from now
    /// (negative: already expired).
    static func claims(userId: String, name: String, issuedSecondsAgo: Int = 0, expiresInSeconds: Int) -> JSONObject {
        let now = Int(Date().timeIntervalSince1970)
        return ["sub": userId, "name": name, "iat": now - issuedSecondsAgo, "exp": now + expiresInSeconds]
    }
}
