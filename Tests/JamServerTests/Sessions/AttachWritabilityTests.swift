import JamCore
import JamProtocol
import JamTestSupport
import Logging
import NIOCore
import NIOEmbedded
import NIOPosix
import Testing

@testable import JamServer

/// A socket can stop draining between the session taking it (and writing its state) and the
/// socket's handler hearing so: the session must still learn it, or it never evicts that reader.
@Suite struct AttachWritabilityTests {
    static let host: UserID = "00000000-0000-0000-0007-00000000000a"
    static let id: SessionID = "00000000-0000-0000-0007-000000000001"

    /// A session with a test channel's socket attached, its backlog limit `backlogLimit`.
    static func attached(backlogLimit: Int) async throws
        -> (session: LiveSession, channel: NIOAsyncTestingChannel, connection: RealtimeConnection, handler: NIOLoopBound<RealtimeHandler>)
    {
        let logger = Logger(label: "test")
        let pipeline = CommitPipeline(store: ReleasedSessionTests.RecordingStore(), logger: logger, timing: .init())
        // Evicted on its backlog alone: the stall timeout is out of reach.
        let environment = SessionEnvironment(
            clock: SystemClock(), ids: RandomIDGenerator(), pipeline: pipeline, logger: logger,
            outbox: SessionOutbox.Configuration(replayLimit: 100, backlogLimit: backlogLimit, stallTimeoutMs: 600_000),
            snapshotEvery: 1_000, timing: Timing())
        let state = SessionState(id: Self.id, joinCode: "ABCDEF", name: "Party", creator: Self.host, creatorName: "Host", now: SystemClock().now())
        let session = LiveSession(
            state: state, storedLsn: 0, wire: OpenJamWire(), environment: environment, eventLoop: MultiThreadedEventLoopGroup.singleton.next())

        let channel = NIOAsyncTestingChannel()
        let loop = channel.testingEventLoop
        var timing = RealtimeHandler.Timing()
        timing.firstFrameDelay = .zero
        let handler = try await loop.submit {
            let sink = RawFrameSink()
            let handler = RealtimeHandler(profile: OpenJamProfile(), sink: sink, clock: SystemClock(), timing: timing, logger: logger)
            try channel.pipeline.syncOperations.addHandlers([sink, handler])
            return NIOLoopBound(handler, eventLoop: loop)
        }.get()
        try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).get()
        await loop.advanceTime(by: .milliseconds(1))
        let connection = try await loop.submit {
            RealtimeConnection(user: Self.host, displayName: "Host", handler: handler.value, eventLoop: loop)
        }.get()
        return (session, channel, connection, handler)
    }

    @Test(.timeLimit(.minutes(1))) func aSocketThatStoppedDrainingBeforeItsHandlerHeardOfTheSessionIsEvictedAsASlowReader() async throws {
        let (session, channel, connection, handler) = try await Self.attached(backlogLimit: 2)
        let loop = channel.testingEventLoop
        try await session.attach(connection, lastSeq: nil)
        // The state filled the socket before the handler was told: the change it saw had no
        // session to go to.
        try await loop.submit {
            channel.isWritable = false
            channel.pipeline.fireChannelWritabilityChanged()
            handler.value.attached(to: session, as: connection)
        }.get()

        for n in 1...4 {
            let track = Track(id: "t\(n)", name: "Track \(n)", artist: "Artist")
            _ = try await session.perform(.add(track: track, nonce: "n\(n)", itemId: ItemID("00000000-0000-0000-0007-00000000010\(n)")), by: Self.host)
        }
        try await eventually("the reader that stopped draining was not evicted", timeout: .seconds(10)) {
            await session.connections.isEmpty
        }
        var closeCode: UInt16?
        while let bytes = try await channel.readOutbound(as: ByteBuffer.self) {
            // A server frame: FIN + opcode, a 7-bit length, then the payload (a close's code first).
            if bytes.getInteger(at: bytes.readerIndex, as: UInt8.self) == 0x88 {
                closeCode = bytes.getInteger(at: bytes.readerIndex + 2, as: UInt16.self)
            }
        }
        #expect(closeCode == CloseCode.slowReader.rawValue)
        _ = try await channel.finish(acceptAlreadyClosed: true)
    }

    @Test(.timeLimit(.minutes(1))) func aPingWhileTheSocketTakesNoMoreBytesIsStillAnswered() async throws {
        let (session, channel, connection, _) = try await Self.attached(backlogLimit: 100)
        try await session.attach(connection, lastSeq: nil)
        while try await channel.readOutbound(as: ByteBuffer.self) != nil {}
        await session.writabilityChanged(connection.id, writable: false)

        await session.receive(ClientFrame(.ping(Ping(clientSendTime: 42.5))), from: connection.id, receivedAt: 1)
        // The frames of the attach may come first.
        let pong = try await eventually("the pong") { () async throws -> String? in
            while let bytes = try await channel.readOutbound(as: ByteBuffer.self) {
                let text = String(buffer: WebSocketText.payload(of: bytes))
                if text.contains(#""type":"pong""#) { return text }
            }
            return nil
        }
        #expect(pong.contains("42.5"), "\(pong)")
        #expect(await !session.connections.isEmpty, "a moment's full buffer is no slow reader")
        _ = try await channel.finish(acceptAlreadyClosed: true)
    }
}
