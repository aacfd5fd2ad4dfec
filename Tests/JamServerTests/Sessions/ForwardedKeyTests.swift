import Foundation
import JamCore
import JamProtocol
import JamTestSupport
import Logging
import NIOCore
import NIOEmbedded
import NIOPosix
import Testing

@testable import JamServer

/// On a replica, a REST call and a socket command that share an answer key wait for one
/// answer from the owner: the first to wait keeps it.
@Suite(.serialized, .enabled(if: TestPostgres.enabled, "needs PostgreSQL (JAM_TEST_DATABASE_URL)"))
struct ForwardedKeyTests {
    static let host: UserID = "00000000-0000-0000-0009-00000000000a"
    static let id: SessionID = "00000000-0000-0000-0009-000000000001"

    static func add(_ n: Int) -> Command {
        .add(track: Track(id: "t\(n)", name: "Track \(n)", artist: "Artist"), nonce: "n\(n)", itemId: ItemID("00000000-0000-0000-0009-00000000010\(n)"))
    }

    @Test(.timeLimit(.minutes(1))) func aSocketCommandWithTheIdOfAWaitingRESTCallIsRefusedAndTheCallStillHearsItsAnswer() async throws {
        let logger = Logger(label: "test")
        let store = try await PostgresSessionStore.open(try await TestPostgres.freshDatabase(), logger: logger)
        // The node's forwarder does not run: what the replica forwards waits, unanswered,
        // until the test answers it as the owner would.
        let cluster = ClusterNode(store: store, logger: logger)
        let environment = SessionEnvironment.forTests(logger: logger, cluster: cluster)
        let state = SessionState(id: Self.id, joinCode: "ABCDEF", name: "Party", creator: Self.host, creatorName: "Host", now: SystemClock().now())
        let session = LiveSession(
            state: state, storedLsn: 0, wire: OpenJamWire(), environment: environment, eventLoop: MultiThreadedEventLoopGroup.singleton.next())
        await session.becomeReplica()

        let channel = NIOAsyncTestingChannel()
        let loop = channel.testingEventLoop
        var timing = RealtimeHandler.Timing()
        timing.firstFrameDelay = .zero
        let connection = try await loop.submit {
            let sink = RawFrameSink()
            let handler = RealtimeHandler(profile: OpenJamProfile(), sink: sink, clock: SystemClock(), timing: timing, logger: logger)
            try channel.pipeline.syncOperations.addHandlers([sink, handler])
            return RealtimeConnection(user: Self.host, displayName: "Host", handler: handler, eventLoop: loop)
        }.get()
        try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).get()
        await loop.advanceTime(by: .milliseconds(1))
        try await session.attach(connection, lastSeq: nil)
        while try await channel.readOutbound(as: ByteBuffer.self) != nil {}

        // A REST call with an idempotency key waits for the owner's answer ...
        let replyId = "key:add:party-1 fingerprint"
        let key = LiveSession.answerKey(Self.host, replyId)
        let call = Task { try await session.forwardAndWait(Self.add(1), by: Self.host, replyId: replyId) }
        try await eventually("the REST call never waited") { await session.restCallWaits(on: key) }

        // ... and a socket of the same member sends a command under the same id.
        await session.receiveCommand(Self.add(2), from: connection.id, user: Self.host, replyId: replyId, relay: nil)
        let refusal = try await eventually("the socket heard nothing") { () async throws -> String? in
            guard let bytes = try await channel.readOutbound(as: ByteBuffer.self) else { return nil }
            return String(buffer: WebSocketText.payload(of: bytes))
        }
        #expect(refusal.contains("\"conflict\""), "refused as a conflict: \(refusal)")
        #expect(refusal.contains(replyId), "the refusal names the socket's id: \(refusal)")
        guard await session.restCallWaits(on: key) else {
            // Taken over: the owner's one answer would go to the socket, and the call would
            // wait for good. Left waiting rather than awaited.
            Issue.record("the socket's command took the REST call's place")
            return
        }

        // The owner's answer reaches the call.
        let made = ItemID("00000000-0000-0000-0009-000000000101")
        let ack = try WireCoding.encode(ServerEnvelope(event: .ack(Ack(id: replyId, itemId: made)), epoch: 0, seq: 1, timestamp: 0))
        await session.replied(ForwardReply(node: cluster.nodeID, session: Self.id, key: key, connection: nil, frame: String(decoding: ack, as: UTF8.self)))
        let outcome = try await call.value
        #expect(outcome.itemId == made, "the call has the owner's answer")
        #expect(await session.restCallWaits(on: key) == false)
        _ = try await channel.finish(acceptAlreadyClosed: true)
        try await store.close()
    }
}

extension LiveSession {
    /// Test access: the session follows an owner on another node.
    fileprivate func becomeReplica() { role = .replica }

    /// Test access: whether a REST call waits on the owner's answer under `key`.
    fileprivate func restCallWaits(on key: String) -> Bool {
        if case .rest? = forwards[key] { return true }
        return false
    }
}
