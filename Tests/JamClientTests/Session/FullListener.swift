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
    /// The listener's backlog.
    static let backlog: Int32 = 1

    /// Runs `body` with a full listener, and closes it and the connections that fill it
    /// however `body` ends.
    static func with<T: Sendable>(_ body: (FullListener) async throws -> T) async throws -> T {
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: Self.backlog)
            // Never reading is never accepting: the queue stays full.
            .serverChannelOption(.autoRead, value: false)
            .bind(host: "127.0.0.1", port: 0)
            .get()
        let port = listener.localAddress?.port ?? 0
        var fillers: [any Channel] = []
        let result: Result<T, any Error>
        do {
            // Linux takes one connection more than the backlog into the queue; the listening
            // socket's line in /proc/net/tcp says how many are in it (each once the listener's
            // side has taken its handshake, which may come just after the connect returns).
            // Counting them, rather than taking a slow connect for a full queue, holds on a
            // loaded machine too.
            let full = FullListener(port: port)
            while true {
                let made = fillers.count
                let waiting = try await eventually("the listener's queue holds the \(made) connections made", timeout: .seconds(10)) {
                    let waiting = try full.waitingToBeAccepted()
                    return waiting >= made ? waiting : nil
                }
                if waiting > Self.backlog { break }
                guard made < 16 else { throw TestFailure("the listener's queue took 16 connections and is not full") }
                fillers.append(try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                    .connect(host: "127.0.0.1", port: port).get())
            }
            result = .success(try await body(full))
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
        try Self.sockets().filter { $0.remote == port && $0.state == "02" }.count
    }

    /// The sockets on either end of the port and their states (hex, as in `/proc/net/tcp`),
    /// for a failure to show.
    var sockets: String {
        ((try? Self.sockets()) ?? []).filter { $0.local == port || $0.remote == port }
            .map { "\($0.local)->\($0.remote) st \($0.state) rx \($0.received)" }.joined(separator: "; ")
    }

    /// Connections in the listener's queue, waiting to be accepted (its `rx_queue` while it
    /// is `LISTEN`).
    func waitingToBeAccepted() throws -> Int {
        guard let listening = try Self.sockets().first(where: { $0.local == port && $0.state == "0A" }) else {
            throw TestFailure("no listening socket on port \(port) in /proc/net/tcp")
        }
        return listening.received
    }

    /// The IPv4 TCP sockets of this network namespace: their ports, state and receive queue.
    private static func sockets() throws -> [(local: Int, remote: Int, state: Substring, received: Int)] {
        // Read to its end: the kernel makes the file as it is read, and a read of its reported
        // size (0) would stop after the first page.
        guard let file = FileHandle(forReadingAtPath: "/proc/net/tcp") else { throw TestFailure("/proc/net/tcp cannot be read") }
        defer { try? file.close() }
        let table = String(decoding: try file.readToEnd() ?? Data(), as: UTF8.self)
        // "sl local_address rem_address st tx_queue:rx_queue …", addresses as ADDR:PORT in hex.
        return table.split(separator: "\n").dropFirst().compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count > 4, let local = fields[1].split(separator: ":").last.flatMap({ Int($0, radix: 16) }),
                let remote = fields[2].split(separator: ":").last.flatMap({ Int($0, radix: 16) }),
                let received = fields[4].split(separator: ":").last.flatMap({ Int($0, radix: 16) })
            else { return nil }
            return (local, remote, fields[3], received)
        }
    }
}
