import ArgumentParser
import Foundation

/// Which protocol the server under test speaks.
enum WireProtocol: String, Sendable, CaseIterable, ExpressibleByArgument {
    case openjam
    case pirateRadio = "pirate-radio"
}

/// A server under test: `jam serve` started by the benchmark on loopback, or one already
/// running at a URL (then CPU and memory come from `--server-pid` if given).
struct ServerUnderTest: Sendable {
    let host: String
    let port: Int
    /// The process to sample, when known.
    let pid: pid_t?
    /// The child, when the benchmark started it.
    let child: ChildProcess?
    /// Its data folder (removed at the end unless kept).
    let dataDirectory: URL?
    /// How long from start until it printed that it listens, seconds.
    let startupSeconds: Double?
    /// The other nodes when several serve one database (`fanout --nodes`): members connect
    /// to all of them, and samples add their CPU and memory up.
    var peers: [ServerUnderTest] = []

    /// Every node: this one, then its peers.
    var nodes: [ServerUnderTest] { [self] + peers }

    /// `http://host:port`.
    var baseURL: String { "http://\(host):\(port)" }

    /// The token secret the benchmark gives servers it starts.
    static let secret = "jam-bench-secret-0123456789abcdef0123456789"

    /// Failure to start.
    struct StartFailure: Error, CustomStringConvertible {
        let description: String
    }

    /// Starts `jam serve` with a fresh data folder on the ext4 disk (so fsync is real) and
    /// waits for its listening line. OpenJam: `--port 0 --secret`; PirateRadio: `--profile
    /// pirate-radio` with `PORT=0` and `JWT_SECRET` in the environment, as its own server reads them.
    static func start(
        _ jam: JamExecutable, protocol wire: WireProtocol, music: URL? = nil, extraArguments: [String] = [], dataDirectory: URL? = nil,
        port: Int = 0, timeout: Duration = .seconds(120)
    ) async throws -> ServerUnderTest {
        let data = dataDirectory ?? FileManager.default.temporaryDirectory.appendingPathComponent("jam-bench-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        var arguments = ["serve", "--host", "127.0.0.1", "--data-dir", data.path, "--log-level", "warning"]
        var environment: [String: String] = [:]
        switch wire {
        case .openjam:
            arguments += ["--port", "\(port)", "--secret", secret]
            // An empty folder: no demo library to synthesise unless a benchmark wants music.
            let folder: URL
            if let music {
                folder = music
            } else {
                folder = data.appendingPathComponent("no-music")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            }
            arguments += ["--music", folder.path]
            // One load client stands in for many members sending far faster than people do.
            environment["JAM_SOCKET_LIMITS"] = "off"
        case .pirateRadio:
            arguments += ["--profile", "pirate-radio"]
            environment = ["PORT": "\(port)", "JWT_SECRET": secret]
        }
        arguments += extraArguments
        let started = MonoTime.seconds()
        let child = try ChildProcess.start(jam.path, arguments, environment: environment, logPath: data.appendingPathComponent("serve-\(UUID().uuidString.prefix(6)).log").path)
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let log = child.log()
            if let range = log.range(of: #"listening on http://127\.0\.0\.1:(\d+)"#, options: .regularExpression),
               let port = log[range].split(separator: ":").last.flatMap({ Int($0) }) {
                return ServerUnderTest(
                    host: "127.0.0.1", port: port, pid: child.pid, child: child, dataDirectory: data,
                    startupSeconds: MonoTime.seconds() - started)
            }
            guard child.isRunning() else { throw StartFailure(description: "jam serve exited before listening:\n\(log)") }
            try await Task.sleep(for: .milliseconds(10))
        }
        await child.stop()
        throw StartFailure(description: "jam serve did not listen within \(timeout):\n\(child.log())")
    }

    /// A server somebody else runs, e.g. another PirateRadio implementation.
    static func external(url: String, pid: pid_t?) throws -> ServerUnderTest {
        guard let components = URLComponents(string: url), let host = components.host, let port = components.port else {
            throw StartFailure(description: "--server-url must look like http://127.0.0.1:3000, got \(url)")
        }
        guard host.hasPrefix("127.") || host == "localhost" else {
            throw StartFailure(description: "benchmarks only talk to loopback (127.0.0.0/8), not \(host)")
        }
        return ServerUnderTest(host: host == "localhost" ? "127.0.0.1" : host, port: port, pid: pid, child: nil, dataDirectory: nil, startupSeconds: nil)
    }

    /// CPU and memory now, when the process is known.
    func sample() -> ProcessSample? {
        var total: ProcessSample?
        for node in nodes {
            guard let pid = node.pid else { return nil }
            do {
                let one = try ProcFile.sample(pid: pid)
                total = total.map { $0 + one } ?? one
            } catch {
                Console.line("warning: \(error)")
                return nil
            }
        }
        return total
    }

    /// The failure to report when a server the benchmark started died during the run (a
    /// crash under load is a finding), with the end of its log; nil while it runs.
    func deathNotice() -> String? {
        for node in nodes {
            guard let child = node.child, !child.isRunning() else { continue }
            return "jam serve died during the run:\n\(child.log().suffix(4000))"
        }
        return nil
    }

    /// Stops a server the benchmark started (SIGTERM, bounded) and removes its data unless `keep`.
    func stop(keepData: Bool) async {
        for peer in peers { await peer.stop(keepData: keepData) }
        guard let child else { return }
        await child.stop()
        guard let dataDirectory else { return }
        if keepData {
            Console.line("server data kept in \(dataDirectory.path)")
            return
        }
        do {
            try FileManager.default.removeItem(at: dataDirectory)
        } catch {
            Console.line("warning: could not remove \(dataDirectory.path): \(error.localizedDescription)")
        }
    }
}
