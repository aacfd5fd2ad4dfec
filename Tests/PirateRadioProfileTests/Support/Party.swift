import Foundation
import Testing

/// A signed-in user with an open socket.
struct Connected: Sendable {
    let user: PirateUser
    let socket: PirateSocket
    var id: String { user.id }
}

extension PirateServer {
    /// Opens a socket for `user` on `session` and waits for the `stateSync` that greets it.
    func connect(_ user: PirateUser, to session: String, path: String = "/") async throws -> Connected {
        let socket = PirateSocket(self, token: user.token, session: session, path: path, label: user.id)
        try await socket.next("stateSync", "on connect")
        return Connected(user: user, socket: socket)
    }
}

/// A session with its creator (the DJ) and members, everyone connected, in that order.
struct Party: Sendable {
    let server: PirateServer
    let session: CreatedSession
    let dj: Connected
    let members: [Connected]

    var everyone: [Connected] { [dj] + members }
    var id: String { session.id }
    var http: PirateHTTP { server.http }

    /// Signs in the DJ `"dj"` ("Ann") and `memberIds` (display name = "Name of <id>"), creates a session,
    /// joins the members over REST (unless `restJoin` is false) and connects everyone one by one.
    static func start(_ server: PirateServer, members memberIds: [String] = ["m1"], restJoin: Bool = true) async throws -> Party {
        let djUser = try await server.http.signIn("dj", displayName: "Ann")
        let session = try await server.http.createSession(djUser)
        let dj = try await server.connect(djUser, to: session.id)
        var members: [Connected] = []
        for id in memberIds {
            let user = try await server.http.signIn(id, displayName: "Name of \(id)")
            if restJoin { _ = try await server.http.joinOK(user, code: session.joinCode) }
            let member = try await server.connect(user, to: session.id)
            // Everyone already there hears about the newcomer before the test starts.
            for other in [dj] + members {
                try await other.socket.next("memberJoined", "for \(id)") { $0.data.string("userId") == id }
            }
            members.append(member)
        }
        return Party(server: server, session: session, dj: dj, members: members)
    }

    /// The current snapshot, read with the DJ's token.
    func snapshot() async throws -> JSONObject {
        try await http.snapshot(dj.user, session: id)
    }

    /// A barrier: the DJ queues track `n` and every socket in `sockets` (default: everyone) receives
    /// the `queueUpdate` that contains it. Anything the server broadcast before arrives before it.
    func marker(_ n: Int, on sockets: [PirateSocket]? = nil) async throws {
        let id = prTrack(n)["id"] as! String
        dj.socket.send("addToQueue", ["track": prTrack(n), "nonce": "marker-\(n)-\(UUID().uuidString)"])
        for socket in sockets ?? everyone.map(\.socket) {
            try await socket.next("queueUpdate", "containing marker \(id)") { trackIds($0.data.objects("queue")).contains(id) }
        }
    }
}

extension Party {
    /// The DJ prepares `track` and commits it playing from `positionMs` now; waits until everyone,
    /// the DJ included, has the broadcast `playCommit`. Returns when the commit was sent.
    @discardableResult
    func play(_ track: JSONObject, positionMs: Int = 0) async throws -> ContinuousClock.Instant {
        dj.socket.send("playPrepare", ["trackId": track["id"] as! String, "track": track])
        let sent = ContinuousClock.now
        dj.socket.send("playCommit", ["positionMs": positionMs, "ntpTimestamp": nowMs()])
        // The DJ's own playCommit, not a ping: a pong answered late on a loaded machine would
        // pass over what a short track sent after it (its end's stateSync).
        for person in everyone { try await person.socket.next("playCommit") }
        return sent
    }
}

extension PirateSocket {
    /// Expects that no `error` frame has come in so far (PirateRadio's server never sends one).
    func expectNoErrors(sourceLocation: SourceLocation = #_sourceLocation) async {
        let errors = await frames("error")
        let seen = await summary()
        #expect(errors.isEmpty, "\(label) got an error: \(seen)", sourceLocation: sourceLocation)
    }

    /// Sends a ping and waits for its pong: everything the server sent this socket before is in.
    func roundTrip(timeout: Duration = .seconds(5)) async throws {
        let stamp = Int.random(in: 1...1_000_000_000)
        send("ping", ["clientSendTime": stamp])
        try await next("pong", timeout: timeout, "echoing \(stamp)") { jsonInt($0.data["clientSendTime"]) == stamp }
    }

    /// Queues `track` and waits for the `queueUpdate` that contains it.
    func addAndWait(_ track: JSONObject, nonce: String = UUID().uuidString) async throws -> Frame {
        let id = track["id"] as! String
        send("addToQueue", ["track": track, "nonce": nonce])
        return try await next("queueUpdate", "containing \(id)") { trackIds($0.data.objects("queue")).contains(id) }
    }
}

/// Milliseconds between two instants.
func milliseconds(from start: ContinuousClock.Instant, to end: ContinuousClock.Instant) -> Int {
    let duration = end - start
    return Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
}
