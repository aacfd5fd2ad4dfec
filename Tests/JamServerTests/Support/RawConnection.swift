import Foundation
import NIOCore
import NIOPosix

/// A plain TCP connection to the server, for what a misbehaving client does below HTTP.
final class RawConnection: Sendable {
    private let channel: any Channel
    private let closed: EventLoopFuture<Void>

    init(port: Int) async throws {
        channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: port).get()
        closed = channel.closeFuture
    }

    /// Sends `text` as it is.
    func send(_ text: String) async throws {
        try await channel.writeAndFlush(ByteBuffer(string: text)).get()
    }

    /// True when the server closed the connection within `timeout`.
    func closedByServer(within timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if !channel.isActive { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return !channel.isActive
    }

    /// Closes from this side.
    func close() async {
        guard channel.isActive else { return }
        try? await channel.close()
    }
}
