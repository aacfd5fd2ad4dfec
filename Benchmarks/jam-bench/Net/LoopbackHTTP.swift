import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// An HTTP answer.
struct HTTPReply: Sendable {
    let status: Int
    let body: [UInt8]

    /// The body as text, for error messages.
    var text: String { String(decoding: body.prefix(2000), as: UTF8.self) }
}

/// A minimal HTTP/1.1 client on SwiftNIO that can choose its loopback source address.
///
/// The server limits sign-ins and joins per client address (30 a minute); setting up a
/// thousand members from 127.0.0.1 alone would take half an hour, so set-up requests
/// come from many addresses of 127.0.0.0/8, which Linux routes to `lo` without set-up.
struct LoopbackHTTP: Sendable {
    let group: any EventLoopGroup
    let host: String
    let port: Int

    /// A request that failed below HTTP.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Sends one request on a new connection from `source` (an address in 127.0.0.0/8).
    func send(_ method: HTTPMethod, _ path: String, token: String? = nil, body: [UInt8]? = nil, from source: String? = nil) async throws -> HTTPReply {
        let promise = group.any().makePromise(of: HTTPReply.self)
        var bootstrap = ClientBootstrap(group: group)
            .connectTimeout(.seconds(5))
            .channelOption(.socketOption(.so_reuseaddr), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(ReplyCollector(promise: promise))
                }
            }
        if let source { bootstrap = bootstrap.bind(to: try SocketAddress(ipAddress: source, port: 0)) }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: host, port: port).get()
        } catch {
            promise.fail(error)
            throw Failure(description: "cannot connect to \(host):\(port) from \(source ?? "default"): \(error)")
        }
        var head = HTTPRequestHead(version: .http1_1, method: method, uri: path)
        head.headers.add(name: "Host", value: "\(host):\(port)")
        head.headers.add(name: "Connection", value: "close")
        if let token { head.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let body {
            head.headers.add(name: "Content-Type", value: "application/json")
            head.headers.add(name: "Content-Length", value: String(body.count))
        } else if method == .POST || method == .PUT || method == .PATCH {
            head.headers.add(name: "Content-Length", value: "0")
        }
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        if let body { channel.write(HTTPClientRequestPart.body(.byteBuffer(ByteBuffer(bytes: body))), promise: nil) }
        channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
        // Bounded: a server that never answers fails the request, not the whole run silently.
        let timeout = channel.eventLoop.scheduleTask(in: .seconds(15)) {
            promise.fail(Failure(description: "\(method) \(path) got no answer within 15 s"))
            channel.close(promise: nil)
        }
        defer { timeout.cancel() }
        return try await promise.futureResult.get()
    }

    /// Sends JSON and decodes the answer, failing with the server's message on a non-2xx status.
    func json<Answer: Decodable>(
        _ method: HTTPMethod, _ path: String, token: String? = nil, body: some Encodable, from source: String? = nil, as: Answer.Type
    ) async throws -> Answer {
        let bytes = Array(try JSONEncoder().encode(body))
        let reply = try await send(method, path, token: token, body: bytes, from: source)
        return try Self.decode(Answer.self, reply, "\(method) \(path)")
    }

    /// Decodes a 2xx body as `T`; anything else throws with the status and body.
    static func decode<T: Decodable>(_ type: T.Type, _ reply: HTTPReply, _ what: String) throws -> T {
        guard (200..<300).contains(reply.status) else { throw Failure(description: "\(what) answered \(reply.status): \(reply.text)") }
        do {
            return try JSONDecoder().decode(T.self, from: Data(reply.body))
        } catch {
            throw Failure(description: "\(what) answered a body that is not \(T.self): \(error) — \(reply.text)")
        }
    }
}

/// Collects one HTTP response into a promise; the connection closes after it.
private final class ReplyCollector: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart

    private let promise: EventLoopPromise<HTTPReply>
    private var status = 0
    private var body: [UInt8] = []

    /// A collector completing `promise`.
    init(promise: EventLoopPromise<HTTPReply>) {
        self.promise = promise
    }

    /// Gathers the status and body; completes at the end of the response.
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            status = Int(head.status.code)
        case .body(let buffer):
            body += buffer.readableBytesView
        case .end:
            promise.succeed(HTTPReply(status: status, body: body))
            context.close(promise: nil)
        }
    }

    /// Fails the request with the connection error.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise.fail(error)
        context.close(promise: nil)
    }

    /// Fails the request if the connection closed before the response ended.
    func channelInactive(context: ChannelHandlerContext) {
        // A promise completes once; this only matters when the server hung up mid-answer.
        promise.fail(LoopbackHTTP.Failure(description: "the server closed the connection before answering"))
        context.fireChannelInactive()
    }
}
