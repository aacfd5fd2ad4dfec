import Foundation
import JamClient
import JamProtocol
import JamTestSupport
import Testing

/// Runs `body` with a store following a client on a scripted socket, its state an empty
/// session; the store's and the client's runs are cancelled after `body`.
func withScriptedStore(_ body: (ScriptedSocket, SessionClient, SessionStore) async throws -> Void) async throws {
    let socket = ScriptedSocket()
    let api = JamAPI(server: try #require(URL(string: "http://127.0.0.1:9")))
    let client = SessionClient(api: api, sessionId: "session", me: "host", transport: ScriptedTransport(socket: socket), seed: 1)
    let store = SessionStore(client: client)
    let following = Task { await store.run() }
    defer { following.cancel() }
    let running = Task { try await client.run() }
    defer { running.cancel() }
    await socket.push(ServerEnvelope(event: .stateSync(Fixture.view(nowPlaying: nil)), epoch: 0, seq: 1, timestamp: 0))
    try await eventually("the state") { await store.current.session != nil }
    try await body(socket, client, store)
}
