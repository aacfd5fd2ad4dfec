import Foundation
import JamTestSupport
import NIOCore
import NIOPosix

/// A port on 127.0.0.1 where a connect never completes: connections fill the listener's queue
/// of those waiting to be accepted, and nothing is ever accepted. Linux then drops every
/// further connection's handshake, as a server behind a network that swallows packets would,
/// and the connecting side waits until it gives up.
struct FullListener {
    /// The port whose connects hang.
    let port: Int

    /// Runs `body` with a full listener, and closes it and the connections that fill it
    /// however `body` ends.
    static func with<T: Sendable>(_ body: (FullListener) async throws -> T) async throws -> T {
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 1)
            // Never reading is never accepting: the queue stays full.
            .serverChannelOption(.autoRead, value: false)
            .bind(host: "127.0.0.1", port: 0)
            .get()
        let port = listener.localAddress?.port ?? 0
        var fillers: [any Channel] = []
        let result: Result<T, any Error>
        do {
            // How many the queue takes depends on the kernel: connect until one hangs.
            var full = false
            while !full {
                guard fillers.count < 16 else { throw TestFailure("the listener's queue took 16 connections and is not full") }
                do {
                    fillers.append(try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                        .connectTimeout(.milliseconds(300))
                        .connect(host: "127.0.0.1", port: port).get())
                } catch ChannelError.connectTimeout {
                    full = true
                }
            }
            result = .success(try await body(FullListener(port: port)))
        } catch {
            result = .failure(error)
        }
        for filler in fillers { try? await filler.close() }
        try? await listener.close()
        return try result.get()
    }

    /// Connects to the port this machine has sent a handshake for and is still waiting on
    /// (`SYN_SENT` in `/proc/net/tcp`): the connects under way.
    func connectsUnderWay() throws -> Int {
        let table = try String(contentsOfFile: "/proc/net/tcp", encoding: .utf8)
        let remote = ":" + String(format: "%04X", port)
        return table.split(separator: "\n").dropFirst().filter { line in
            let fields = line.split(separator: " ")
            return fields.count > 3 && fields[2].hasSuffix(remote) && fields[3] == "02"
        }.count
    }
}
