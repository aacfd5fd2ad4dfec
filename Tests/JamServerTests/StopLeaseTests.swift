import Foundation
import JamProtocol
import JamTestSupport
import Logging
import PostgresNIO
import Testing

/// A node that stops keeps its sessions' leases until it has written everything it took.
@Suite(.enabled(if: TestPostgres.enabled, "needs PostgreSQL (JAM_TEST_DATABASE_URL)"))
struct StopLeaseTests {
    @Test func aStoppingNodeHoldsTheLeaseUntilItsQueuedWritesAreStored() async throws {
        let location = try await TestPostgres.freshDatabase()
        let node = try await ServerProcess(dataDirectory: TestServer.makeDataDirectory(), extraArguments: ["--database", try location.url])
        let server = node.server
        let host = try await server.api.guest("Host")
        let id = try await server.api.create(host.token).session.id
        let socket = TestSocket(server: server, session: id, token: host.token)
        try await socket.next(.stateSync)
        let logger = Logger(label: "test")
        try await location.withTestConnection(id: 5) { holder in
            try await location.withTestConnection(id: 6) { other in
                // The add is taken, and its commit waits on the lock.
                try await holder.query("BEGIN", logger: logger)
                try await holder.query("LOCK TABLE session_log IN EXCLUSIVE MODE", logger: logger)
                socket.send(.addToQueue(AddToQueue(track: testTrack(1), nonce: "last")), id: "last")
                try await Task.sleep(for: .milliseconds(500))
                node.child.signal(SIGTERM)
                // Sockets close, snapshots are queued, and the node is still writing: another
                // node must not take the session over yet.
                try await Task.sleep(for: .seconds(2))
                #expect(try await other.leaseIsFree(id) == false, "the lease went before the node's last writes")
                try await holder.query("ROLLBACK", logger: logger)
                let released = ContinuousClock.now
                let ending = ChildProcess.Ending(try await node.child.waitForExit(timeout: .seconds(30)))
                #expect(ending == .exited(0), "stopped by itself once its writes went through, after \(ContinuousClock.now - released)")
                // PostgreSQL ends the node's backend, and its locks, a moment after the node's
                // connection closes.
                try await eventually("the lease goes with the node") { try await other.leaseIsFree(id) }
            }
        }
    }
}
