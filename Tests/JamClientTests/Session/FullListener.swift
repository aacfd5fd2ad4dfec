import NIOCore
import NIOPosix

/// A port on 127.0.0.1 where a connect never completes: the listener's queue of connections
/// waiting to be accepted holds one, one connection fills it, and nothing is ever accepted.
/// Linux then drops every further connection's handshake, as a server behind a network that
/// swallows packets would, and the connecting side waits until it gives up.
struct FullListener {
    /// The port whose connects hang.
    let port: Int

    /// Runs `body` with a full listener, and closes it and its one connection however `body` ends.
    static func with<T: Sendable>(_ body: (FullListener) async throws -> T) async throws -> T {
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 0)
            // Never reading is never accepting: the queue stays full.
            .serverChannelOption(.autoRead, value: false)
            .bind(host: "127.0.0.1", port: 0)
            .get()
        let port = listener.localAddress?.port ?? 0
        let filler: any Channel
        do {
            filler = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: port).get()
        } catch {
            try? await listener.close()
            throw error
        }
        let result: Result<T, any Error>
        do {
            result = .success(try await body(FullListener(port: port)))
        } catch {
            result = .failure(error)
        }
        try? await filler.close()
        try? await listener.close()
        return try result.get()
    }
}
