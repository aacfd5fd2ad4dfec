// The README's "Use the SDK" example, compiled with every build so it cannot rot: the
// lines between the markers appear in README.md exactly as here (a test checks).
// Run it against a server with a session to join:
//   swift run jam-sdk-example http://127.0.0.1:8080 3KCA9W
import Foundation
import JamClient

/// Prints the queue as an app would draw it.
func render(_ snapshot: StoreSnapshot) {
    print(snapshot.queue.map { "\($0.item.score) \($0.item.track.name) (\($0.item.reason))" }.joined(separator: "\n"))
}

// README: begin
func listen(server: URL, code: String) async throws {
    var api = JamAPI(server: server)
    let me = try await api.signIn(displayName: "Gil")
    let view = try await api.join(code: code)
    let participant = Participant(api: api, sessionId: view.session.id, me: me.userId, transport: URLSessionWebSocketTransport())

    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await participant.run() }          // socket, reconnects, clock sync; throws if refused for good
        group.addTask {
            for await snapshot in await participant.store.snapshots() {
                render(snapshot)                              // queue with scores, reasons, pending adds, votes in flight
                if snapshot.ended { return }
                if let item = snapshot.queue.first, item.myVote == 0 {
                    await participant.store.vote(item.id, 1)  // shows at once, rolls back with the reason if refused
                }
            }
        }
        try await group.next()                                 // whichever ends first ends both
        group.cancelAll()
    }
}
// README: end

guard CommandLine.arguments.count == 3, let server = URL(string: CommandLine.arguments[1]) else {
    print("usage: jam-sdk-example SERVER JOIN-CODE")
    exit(2)
}
try await listen(server: server, code: CommandLine.arguments[2])
