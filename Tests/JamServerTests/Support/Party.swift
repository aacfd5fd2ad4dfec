import JamTestSupport
import Foundation
import JamProtocol

/// A session with a host and guests, each with a token and an open socket.
struct Party: Sendable {
    struct Person: Sendable {
        let auth: GuestAuthResponse
        let socket: TestSocket
        var token: String { auth.token }
        var id: UserID { auth.userId }
    }

    let server: TestServer
    let session: SessionView
    let host: Person
    let guests: [Person]
    var id: SessionID { session.session.id }
    var everyone: [Person] { [host] + guests }

    /// Creates a session hosted by "Host", joins `guestNames` by code and connects everyone.
    static func start(_ server: TestServer, guests guestNames: [String], create: CreateSessionRequest = CreateSessionRequest()) async throws -> Party {
        let hostAuth = try await server.api.guest("Host")
        let view = try await server.api.create(hostAuth.token, create)
        let hostSocket = TestSocket(server: server, session: view.session.id, token: hostAuth.token)
        try await hostSocket.next(.stateSync)
        var guests: [Person] = []
        for name in guestNames {
            let auth = try await server.api.guest(name)
            _ = try await server.api.join(auth.token, code: view.session.joinCode)
            let socket = TestSocket(server: server, session: view.session.id, token: auth.token)
            try await socket.next(.stateSync)
            guests.append(Person(auth: auth, socket: socket))
        }
        return Party(server: server, session: view, host: Person(auth: hostAuth, socket: hostSocket), guests: guests)
    }

    /// Closes every socket.
    func close() async {
        for person in everyone { await person.socket.close() }
    }
}
