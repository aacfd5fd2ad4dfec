import Crypto
import Foundation
import JamProtocol
import JamTestSupport
import Testing

@testable import JamServer

/// A guest token signed before names refused the characters that turn the direction of text
/// still creates and joins: its name is taken without them, and a refreshed token drops them.
struct OldTokenNameTests {
    /// A token as a server of the previous release signed it for `name`.
    static func previousReleaseToken(user: String, name: String) throws -> String {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let payload = try JSONSerialization.data(withJSONObject: ["sub": user, "name": name, "iat": now, "exp": now + 3_600_000])
        let body = TokenSigner.base64url(payload)
        let key = SymmetricKey(data: Array(SHA256.hash(data: Data(TestServer.secret.utf8))))
        let signature = HMAC<SHA256>.authenticationCode(for: Data("v1.\(body)".utf8), using: key)
        return "v1.\(body).\(TokenSigner.base64url(Data(signature)))"
    }

    @Test func aNameSignedWithDirectionControlsIsUsedWithoutThem() async throws {
        try await TestServer.with { server in
            let token = try Self.previousReleaseToken(user: "00000000-0000-0000-0000-00000000a11c", name: "\u{202E}ecila")
            let view = try await server.api.create(token)
            #expect(view.members.map(\.displayName) == ["ecila"])
            let refreshed = try await server.api.request("POST", "/auth/refresh", token: token)
            #expect(refreshed.status == 200, "\(String(decoding: refreshed.body, as: UTF8.self))")
            let answer = try JSONDecoder().decode(GuestAuthResponse.self, from: refreshed.body)
            #expect(answer.displayName == "ecila")
        }
    }

    @Test func aNameSignedBeforeNamesHadToShowJoinsAsGuest() async throws {
        try await TestServer.with { server in
            let token = try Self.previousReleaseToken(user: "00000000-0000-0000-0000-00000000b0b0", name: "\u{3164}")
            let view = try await server.api.create(token)
            #expect(view.members.map(\.displayName) == ["Guest"])
        }
    }

    @Test func aNameOfNothingButDirectionControlsBecomesGuest() {
        #expect(Identity(userId: JamID("u"), displayName: "\u{202E}\u{202C}").displayName == "Guest")
        #expect(Identity(userId: JamID("u"), displayName: "\u{3164}").displayName == "Guest", "a name that shows nothing")
        #expect(Identity(userId: JamID("u"), displayName: "\u{202E}\u{3164}").displayName == "Guest")
        #expect(Identity(userId: JamID("u"), displayName: "Ann").displayName == "Ann")
    }
}
