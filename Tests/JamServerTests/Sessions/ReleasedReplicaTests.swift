import JamCore
import JamProtocol
import Logging
import NIOCore
import NIOEmbedded
import NIOPosix
import Testing

@testable import JamServer

/// A replica this node let go (nobody here used it for a minute, or its lease moved) serves
/// nothing more: a socket or a REST call that found it just before is refused, so the client
/// comes back to the session as it is now instead of a copy that follows nothing.
@Suite struct ReleasedReplicaTests {
    static let host: UserID = "00000000-0000-0000-0008-00000000000a"
    static let id: SessionID = "00000000-0000-0000-0008-000000000001"

    static func releasedReplica() async -> LiveSession {
        let logger = Logger(label: "test")
        let environment = SessionEnvironment.forTests(logger: logger)
        let state = SessionState(id: id, joinCode: "ABCDEF", name: "Party", creator: host, creatorName: "Host", now: SystemClock().now())
        let session = LiveSession(
            state: state, storedLsn: 0, wire: OpenJamWire(), environment: environment, eventLoop: MultiThreadedEventLoopGroup.singleton.next())
        await session.letGoAsReplica()
        return session
    }

    @Test func aSocketOfAMemberIsRefusedOnceTheReplicaIsLetGo() async throws {
        let session = await Self.releasedReplica()
        await #expect(throws: LiveSession.letGoUntouched) { try await session.admitOnReplica(Self.host) }

        let channel = NIOAsyncTestingChannel()
        let loop = channel.testingEventLoop
        let connection = try await loop.submit {
            let sink = RawFrameSink()
            let handler = RealtimeHandler(profile: OpenJamProfile(), sink: sink, clock: SystemClock(), timing: .init(), logger: Logger(label: "test"))
            try channel.pipeline.syncOperations.addHandlers([sink, handler])
            return RealtimeConnection(user: Self.host, displayName: "Host", handler: handler, eventLoop: loop)
        }.get()
        await #expect(throws: LiveSession.letGoUntouched) { try await session.attach(connection, lastSeq: nil) }
        #expect(await session.connections.isEmpty, "nothing attached")
        _ = try await channel.finish(acceptAlreadyClosed: true)
    }

    @Test func aRESTCallIsRefusedAtOnceRatherThanWaitingForAnAnswerThatCannotCome() async throws {
        let session = await Self.releasedReplica()
        let track = Track(id: "t1", name: "Track 1", artist: "Artist")
        await #expect(throws: LiveSession.letGoUntouched) {
            try await session.forwardAndWait(.add(track: track, nonce: "n1", itemId: ItemID("00000000-0000-0000-0008-000000000101")), by: Self.host, replyId: nil)
        }
    }
}

extension LiveSession {
    /// Test access: the session follows its owner, then this node lets it go.
    fileprivate func letGoAsReplica() {
        role = .replica
        releasedFlag.store(true, ordering: .releasing)
    }
}
