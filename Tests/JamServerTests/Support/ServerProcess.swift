import JamTestSupport
import Foundation

/// `jam serve` as a separate process, so a test can kill it with SIGKILL.
final class ServerProcess: Sendable {
    let child: ChildProcess
    let port: Int
    let dataDirectory: URL
    /// Where its standard output and error go.
    let logFile: URL

    /// The `jam` executable built beside the test bundle.
    static var executable: URL {
        get throws {
            let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("jam")
            if FileManager.default.isExecutableFile(atPath: beside.path) { return beside }
            let local = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(".build/debug/jam")
            if FileManager.default.isExecutableFile(atPath: local.path) { return local }
            throw TestFailure("the jam executable was not found beside \(beside.path); run swift build first")
        }
    }

    /// Starts `jam serve` on a free port and waits until it prints that it is listening;
    /// `environment` is added to the test's own, and the variables named in `removing` are
    /// taken out of it.
    init(
        dataDirectory: URL, extraArguments: [String] = [], environment: [String: String] = [:], removing: Set<String> = [],
        secret: String? = "kill-test-secret-0123456789abcdef01234"
    ) async throws {
        self.dataDirectory = dataDirectory
        let output = dataDirectory.appendingPathComponent("serve-\(UUID().uuidString).log")
        logFile = output
        let arguments = ["serve", "--port", "0", "--data-dir", dataDirectory.path] + (secret.map { ["--secret", $0] } ?? [])
            + ["--log-level", "warning", "--music", try DemoFolder.shared().path] + extraArguments
        let removing = secret == nil ? removing.union(["JAM_SECRET"]) : removing
        let merged = environment.isEmpty && removing.isEmpty
            ? nil : ProcessInfo.processInfo.environment.merging(environment) { $1 }.filter { !removing.contains($0.key) }
        child = try await ChildProcess.start(try Self.executable, arguments: arguments, environment: merged, logFile: output)
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            let text = try String(contentsOf: output, encoding: .utf8)
            if let range = text.range(of: #"listening on http://127\.0\.0\.1:(\d+)"#, options: .regularExpression),
               let port = text[range].split(separator: ":").last.flatMap({ Int($0) }) {
                self.port = port
                return
            }
            if !child.isRunning { throw TestFailure("jam serve exited: \(text)") }
            try await Task.sleep(for: .milliseconds(20))
        }
        try await child.waitForExit(timeout: .zero)
        throw TestFailure("jam serve did not start: \(try String(contentsOf: output, encoding: .utf8))")
    }

    /// Runs `body` against a fresh `jam serve`, which is stopped with SIGTERM afterwards, also when `body` throws.
    static func with<T>(dataDirectory: URL, _ body: (ServerProcess) async throws -> T) async throws -> T {
        let server = try await ServerProcess(dataDirectory: dataDirectory)
        do {
            let result = try await body(server)
            try await server.terminate()
            return result
        } catch {
            _ = try? await server.terminate()
            throw error
        }
    }

    var server: TestServer { TestServer(port: port, dataDirectory: dataDirectory) }

    /// Runs `jam serve --port 0 --data-dir <new folder>` with `arguments`, and `environment`
    /// added to the test's own, expecting it to refuse to start: its exit status and output.
    /// A server that says it is listening instead is stopped, and its status is nil.
    /// `asNobody` runs it as user 65534 when the tests run as root, who may read any folder.
    /// On `ChildProcess`: Foundation's `Process.run()` crashed the test process when several
    /// tests started children at once.
    static func refusal(_ arguments: [String], environment: [String: String] = [:], asNobody: Bool = false) async throws -> (status: Int32?, errors: String) {
        let serve = ["serve", "--port", "0", "--data-dir", TestServer.makeDataDirectory().path] + arguments
        let (executable, launch) = asNobody && getuid() == 0
            ? (URL(fileURLWithPath: "/usr/bin/setpriv"), ["--reuid=65534", "--regid=65534", "--clear-groups", try self.executable.path] + serve)
            : (try self.executable, serve)
        let log = TestServer.makeDataDirectory().appendingPathComponent("serve.log")
        let child = try await ChildProcess.start(
            executable, arguments: launch, environment: ProcessInfo.processInfo.environment.merging(environment) { $1 }, logFile: log)
        let deadline = ContinuousClock.now + .seconds(20)
        var listening = false
        while child.isRunning, ContinuousClock.now < deadline, !listening {
            try await Task.sleep(for: .milliseconds(20))
            listening = try String(contentsOf: log, encoding: .utf8).contains("listening on")
        }
        let started = child.isRunning
        if started { child.signal(SIGTERM) }
        let ending = ChildProcess.Ending(try await child.waitForExit(timeout: .seconds(20)))
        let output = try String(contentsOf: log, encoding: .utf8)
        guard !started else { return (nil, output) }
        switch ending {
        case .exited(let code): return (code, output)
        case .signalled(let signal): return (128 + signal, output)
        }
    }

    /// SIGKILL: no chance to flush anything.
    func kill() async throws {
        child.signal(SIGKILL)
        try await child.waitForExit()
    }

    /// SIGTERM: a graceful shutdown; returns how the server ended.
    @discardableResult
    func terminate() async throws -> ChildProcess.Ending {
        child.signal(SIGTERM)
        return ChildProcess.Ending(try await child.waitForExit())
    }
}
