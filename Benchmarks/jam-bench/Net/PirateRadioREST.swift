import JamPirateRadioWire
import Foundation
import JamProtocol

/// The PirateRadio REST calls set-up needs: `/auth` and `POST /sessions`. Members join by
/// opening a socket with `?token&sessionId`, as the app does.
struct PirateRadioREST: Sendable {
    let http: LoopbackHTTP

    /// A token for user `id`.
    func auth(_ id: String, name: String) async throws -> String {
        try await http.json(
            .POST, "/auth", body: PirateRadio.AuthRequest(spotifyUserId: id, displayName: name), from: SourceAddresses.shared.next(),
            as: PirateRadio.AuthResponse.self
        ).token
    }

    /// A new session with `token`'s user as DJ.
    func create(_ token: String) async throws -> PirateRadio.CreateResponse {
        let reply = try await http.send(.POST, "/sessions", token: token, body: Array("{}".utf8), from: SourceAddresses.shared.next())
        return try LoopbackHTTP.decode(PirateRadio.CreateResponse.self, reply, "POST /sessions")
    }

    /// The socket path of a member: any path with the token and session id.
    static func socketPath(token: String, session: String) -> String {
        "/?token=\(token)&sessionId=\(session)"
    }
}
