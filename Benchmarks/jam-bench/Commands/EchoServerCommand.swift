import ArgumentParser
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// `jam-bench echo-server`: the trivial server the fan-out load is checked against.
///
/// Sockets at `/echo/<room>` form rooms. Every text message is answered the way OpenJam
/// answers a command, with none of its work: one event (padded to `--bytes`) to everyone
/// in the room with the next seq, then an ack carrying the message's id. If the load client
/// keeps up with this at the rates it offers the real server, the client is not what limits
/// the real figures. Rooms under `/echo/durable/` first write each message's 4 KiB block and
/// fsync it, on the loop: the least a server that stores a command before answering can do.
struct EchoServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "echo-server", abstract: "A trivial fan-out echo server (used by fanout to check the load client).", shouldDisplay: false)

    @Option(help: "Port on 127.0.0.1 (0 picks one).")
    var port = 0

    @Option(help: "Size of each event frame, bytes.")
    var bytes = 2048

    @Option(help: "Seconds after which the server stops by itself.")
    var lifetime = 300

    @Option(name: .customLong("sync-dir"), help: "Folder of the file the durable rooms write and fsync (default: the temporary folder).")
    var syncDirectory: String?

    /// Serves on loopback until `--lifetime` runs out.
    func run() async throws {
        // One loop: the rooms need no locks and every member gets events in seq order.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let directory = syncDirectory.map { URL(fileURLWithPath: $0) } ?? FileManager.default.temporaryDirectory
        let rooms = EchoRooms(padding: max(0, bytes - 80), log: try SyncedBlockFile(in: directory, name: "echo-log"))
        let upgrader = NIOWebSocketServerUpgrader(
            maxFrameSize: 1 << 20,
            shouldUpgrade: { channel, _ in channel.eventLoop.makeSucceededFuture(HTTPHeaders()) },
            upgradePipelineHandler: { channel, head in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(EchoHandler(rooms: rooms, room: head.uri))
                }
            })
        let listener = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelOption(.backlog, value: 1024)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline(withServerUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
            }
            .bind(host: "127.0.0.1", port: port).get()
        FileHandle.standardOutput.write(Data("echo listening on 127.0.0.1:\(listener.localAddress?.port ?? 0)\n".utf8))
        // Bounded: it stops by itself even if its parent never stops it.
        try await Task.sleep(for: .seconds(lifetime))
        try await listener.close()
        try await group.shutdownGracefully()
    }
}

/// The rooms of the echo server (used on its single event loop only).
final class EchoRooms: @unchecked Sendable {
    private var members: [String: [any Channel]] = [:]
    private var seqs: [String: Int64] = [:]
    private let padding: String
    private let log: SyncedBlockFile

    /// Rooms whose events carry `padding` bytes of filler; durable rooms write to `log`.
    init(padding: Int, log: SyncedBlockFile) {
        self.padding = String(repeating: "x", count: padding)
        self.log = log
    }

    /// The path prefix of rooms that store each message before answering.
    static let durablePrefix = "/echo/durable/"

    /// A new socket joins `room` and, 100 ms later, gets a snapshot carrying the room's seq.
    /// (NIO clients lose a frame that arrives with the upgrade response; OpenJam waits too.)
    func join(_ channel: any Channel, room: String) {
        channel.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(100)) {
            self.members[room, default: []].append(channel)
            let frame = #"{"data":{},"epoch":1,"seq":\#(self.seqs[room, default: 0]),"timestamp":0,"type":"stateSync"}"#
            channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .text, data: channel.allocator.buffer(string: frame)), promise: nil)
        }
    }

    /// A socket left.
    func leave(_ channel: any Channel, room: String) {
        members[room]?.removeAll { $0 === channel }
    }

    /// One message: in a durable room written and fsynced first, then an event to the room and
    /// the ack to the sender. A failed write closes the sender's socket, unanswered.
    func message(_ text: ByteBuffer, from channel: any Channel, room: String) {
        if room.hasPrefix(Self.durablePrefix) {
            do {
                _ = try log.writeAndSync()
            } catch {
                FileHandle.standardError.write(Data("echo: \(error)\n".utf8))
                channel.close(promise: nil)
                return
            }
        }
        let seq = seqs[room, default: 0] + 1
        seqs[room] = seq
        let event = channel.allocator.buffer(string: #"{"data":{"pad":"\#(padding)"},"epoch":1,"seq":\#(seq),"timestamp":0,"type":"votesUpdate"}"#)
        for member in members[room] ?? [] {
            member.writeAndFlush(WebSocketFrame(fin: true, opcode: .text, data: event), promise: nil)
        }
        let id = FrameScan.commandId(text) ?? "?"
        let ack = #"{"data":{"id":"\#(id)"},"epoch":1,"seq":\#(seq),"timestamp":0,"type":"ack"}"#
        channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .text, data: channel.allocator.buffer(string: ack)), promise: nil)
    }
}

/// One echo socket.
private final class EchoHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let rooms: EchoRooms
    private let room: String

    /// A socket of `room`.
    init(rooms: EchoRooms, room: String) {
        self.rooms = rooms
        self.room = room
    }

    /// The upgrade is done: the socket joins its room.
    func handlerAdded(context: ChannelHandlerContext) {
        rooms.join(context.channel, room: room)
    }

    /// Echoes text as an event and an ack; answers pings and closes.
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text: rooms.message(frame.unmaskedData, from: context.channel, room: room)
        case .connectionClose: context.close(promise: nil)
        case .ping: context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)), promise: nil)
        default: break
        }
    }

    /// The socket leaves its room.
    func channelInactive(context: ChannelHandlerContext) {
        rooms.leave(context.channel, room: room)
        context.fireChannelInactive()
    }
}
