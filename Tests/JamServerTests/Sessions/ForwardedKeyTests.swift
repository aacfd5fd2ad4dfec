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

/// On a replica, the owner's answer under an answer key reaches the request it answers: a
/// REST call and a socket command that share the key wait for one answer (the first to wait
/// keeps it), and an answer or failure that comes after its caller stopped waiting does not
/// answer the command sent under the id since.
@Suite(.serialized, .enabled(if: TestPostgres.enabled, "needs PostgreSQL (JAM_TEST_DATABASE_URL)"))
struct ForwardedKeyTests {
    static let host: UserID = "00000000-0000-0000-0009-00000000000a"
    static let id: SessionID = "00000000-0000-0000-0009-000000000001"

    static func add(_ n: Int) -> Command {
        .add(track: Track(id: "t\(n)", name: "Track \(n)", artist: "Artist"), nonce: "n\(n)", itemId: ItemID("00000000-0000-0000-0009-00000000010\(n)"))
    }

    /// A replica of a fresh session with the host's socket attached, on a node whose forwarder
    /// does not run: what the replica forwards waits, unanswered, until the test answers it as
    /// the owner would.
    static func withReplica(
        _ body: (_ session: LiveSession, _ socket: RealtimeConnection, _ channel: NIOAsyncTestingChannel, _ cluster: ClusterNode) async throws -> Void
    ) async throws {
        let logger = Logger(label: "test")
        let store = try await PostgresSessionStore.open(try await TestPostgres.freshDatabase(), logger: logger)
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
        try await body(session, connection, channel, cluster)
        _ = try await channel.finish(acceptAlreadyClosed: true)
        try await store.close()
    }

    /// The next frame the session writes to the socket, as text.
    static func nextFrame(of channel: NIOAsyncTestingChannel, _ what: String) async throws -> String {
        try await eventually(what) { () async throws -> String? in
            guard let bytes = try await channel.readOutbound(as: ByteBuffer.self) else { return nil }
            return String(buffer: WebSocketText.payload(of: bytes))
        }
    }

    /// `event` as a frame, the way an owner's reply carries it.
    static func frame(_ event: ServerEvent) throws -> String {
        String(decoding: try WireCoding.encode(ServerEnvelope(event: event, epoch: 0, seq: 1, timestamp: 0)), as: UTF8.self)
    }

    /// The host's add under "c-1" is forwarded and its wait runs out (as its timer would end
    /// it: ended here, the next command's own timer cannot run out first on a slow machine);
    /// then the host sends another add under the same id.
    static func secondCommandAfterTheFirstsWaitRanOut(
        _ session: LiveSession, _ connection: RealtimeConnection, _ channel: NIOAsyncTestingChannel
    ) async throws {
        await session.receiveCommand(Self.add(1), from: connection.id, user: Self.host, replyId: "c-1", relay: nil)
        await session.forwardFailed(key: LiveSession.answerKey(Self.host, "c-1"), replyId: "c-1", LiveSession.forwardUnanswered)
        let unanswered = try await Self.nextFrame(of: channel, "the add's wait never ran out")
        #expect(unanswered.contains("\"unavailable\""), "\(unanswered)")
        await session.receiveCommand(Self.add(2), from: connection.id, user: Self.host, replyId: "c-1", relay: nil)
    }

    /// The owner refuses the second add under "c-1" (it stored the first one's answer), and the
    /// socket's next frame is expected to be that refusal.
    static func ownerRefusesTheSecondCommand(
        _ session: LiveSession, _ connection: RealtimeConnection, _ channel: NIOAsyncTestingChannel, _ cluster: ClusterNode, _ why: String
    ) async throws {
        let error = ErrorEvent(id: "c-1", code: .keyReused, message: LiveSession.idReused.message)
        await session.replied(
            ForwardReply(
                node: cluster.nodeID, session: Self.id, key: LiveSession.answerKey(Self.host, "c-1"), connection: connection.id,
                frame: try Self.frame(.error(error)), command: RequestFingerprint.forSocket(Self.add(2)), errorCode: .keyReused,
                errorMessage: error.message))
        let answer = try await Self.nextFrame(of: channel, "the second command was not answered")
        #expect(answer.contains("\"keyReused\""), "\(why): \(answer)")
    }

    @Test(.timeLimit(.minutes(1))) func aSocketCommandWithTheIdOfAWaitingRESTCallIsRefusedAndTheCallStillHearsItsAnswer() async throws {
        try await Self.withReplica { session, connection, channel, cluster in
            // A REST call with an idempotency key waits for the owner's answer ...
            let replyId = "key:add:party-1 fingerprint"
            let key = LiveSession.answerKey(Self.host, replyId)
            let call = Task { try await session.forwardAndWait(Self.add(1), by: Self.host, replyId: replyId) }
            try await eventually("the REST call never waited") { await session.restCallWaits(on: key) }

            // ... and a socket of the same member sends a command under the same id.
            await session.receiveCommand(Self.add(2), from: connection.id, user: Self.host, replyId: replyId, relay: nil)
            let refusal = try await Self.nextFrame(of: channel, "the socket heard nothing")
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
            let ack = try Self.frame(.ack(Ack(id: replyId, itemId: made)))
            await session.replied(ForwardReply(node: cluster.nodeID, session: Self.id, key: key, connection: nil, frame: ack))
            let outcome = try await call.value
            #expect(outcome.itemId == made, "the call has the owner's answer")
            #expect(await session.restCallWaits(on: key) == false)
        }
    }

    @Test(.timeLimit(.minutes(1))) func anOwnersLateAnswerDoesNotAnswerAnotherCommandSentUnderItsIdSince() async throws {
        try await Self.withReplica { session, connection, channel, cluster in
            try await Self.secondCommandAfterTheFirstsWaitRanOut(session, connection, channel)
            // The owner's answer to the first comes late, before its refusal of the second.
            let made = ItemID("00000000-0000-0000-0009-000000000101")
            await session.replied(
                ForwardReply(
                    node: cluster.nodeID, session: Self.id, key: LiveSession.answerKey(Self.host, "c-1"), connection: connection.id,
                    frame: try Self.frame(.ack(Ack(id: "c-1", itemId: made))), command: RequestFingerprint.forSocket(Self.add(1))))
            try await Self.ownerRefusesTheSecondCommand(
                session, connection, channel, cluster, "the second command gets its own answer, not the first one's ack")
            // The first command's answer is kept for it: sent again, it gets the ack.
            await session.receiveCommand(Self.add(1), from: connection.id, user: Self.host, replyId: "c-1", relay: nil)
            let again = try await Self.nextFrame(of: channel, "the first command sent again was not answered")
            #expect(again.contains(made.rawValue), "\(again)")
        }
    }

    @Test(.timeLimit(.minutes(1))) func aForwardThatFailsAfterItsWaitRanOutDoesNotFailTheCommandSentUnderItsIdSince() async throws {
        try await Self.withReplica { session, connection, channel, cluster in
            try await Self.secondCommandAfterTheFirstsWaitRanOut(session, connection, channel)
            // Then the first one's forward fails (the database was out of reach for longer than the wait).
            let queued = cluster.outgoing.withLock { $0.commands }.filter { $0.0.replyId == "c-1" }
            try #require(queued.count == 2, "both commands wait to be forwarded")
            #expect(queued[0].0.command == Self.add(1) && queued[1].0.command == Self.add(2))
            queued[0].1(JamError(.unavailable, "the database is out of reach"))
            try await Self.ownerRefusesTheSecondCommand(
                session, connection, channel, cluster, "the first command's failure is not the second one's answer")
        }
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
