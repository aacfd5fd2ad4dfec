import Foundation
import Synchronization
import class JamTestSupport.ChildProcess

/// `jam serve --profile pirate-radio` as a separate process, for the length of one test.
///
/// Start it with `PirateServer.with { server in ... }`: the process is stopped (SIGTERM, then
/// SIGKILL if it hangs) when the body returns or throws.
final class PirateServer: @unchecked Sendable {
    /// The secret passed as `JWT_SECRET`.
    static let secret = "pirate-radio-test-secret-0123456789abcdef"

    /// Timings that tests shorten; `nil` keeps the server's default.
    struct Options: Sendable {
        var idleTimeoutMs: Int? = nil
        var gracePeriodMs: Int? = nil
        var codeLifetimeMs: Int? = nil
        var sweepIntervalMs: Int? = nil
        var pingIntervalMs: Int? = nil
    }

    let process: ChildProcess
    let port: Int
    let dataDirectory: URL
    let logFile: URL
    private let sockets = Mutex<[PirateSocket]>([])

    var baseURL: String { "http://127.0.0.1:\(port)" }
    var webSocketBaseURL: String { "ws://127.0.0.1:\(port)" }
    var http: PirateHTTP { PirateHTTP(baseURL: baseURL) }

    private init(process: ChildProcess, port: Int, dataDirectory: URL, logFile: URL) {
        self.process = process
        self.port = port
        self.dataDirectory = dataDirectory
        self.logFile = logFile
    }

    /// Runs `body` against a fresh server with a fresh data folder, then stops the server.
    static func with(_ options: Options = Options(), _ body: (PirateServer) async throws -> Void) async throws {
        await ServerSlots.shared.acquire()
        let server: PirateServer
        do {
            server = try await start(options)
        } catch {
            await ServerSlots.shared.release()
            throw error
        }
        do {
            try await body(server)
        } catch {
            FileHandle.standardError.write(Data("---- jam serve log (\(server.logFile.path)), test failed with \(error):\n\(server.logTail())\n----\n".utf8))
            await server.stop(removeData: false)
            await ServerSlots.shared.release()
            throw error
        }
        await server.stop(removeData: true)
        await ServerSlots.shared.release()
    }

    /// The command line used: `jam serve --profile pirate-radio --host 127.0.0.1 --data-dir <dir> [timings]`
    /// with `PORT=0` and `JWT_SECRET` in the environment.
    static func arguments(dataDirectory: URL, options: Options) -> [String] {
        var arguments = ["serve", "--profile", "pirate-radio", "--host", "127.0.0.1", "--data-dir", dataDirectory.path]
        if let value = options.idleTimeoutMs { arguments += ["--idle-timeout-ms", String(value)] }
        if let value = options.gracePeriodMs { arguments += ["--grace-period-ms", String(value)] }
        if let value = options.codeLifetimeMs { arguments += ["--code-lifetime-ms", String(value)] }
        if let value = options.sweepIntervalMs { arguments += ["--sweep-interval-ms", String(value)] }
        if let value = options.pingIntervalMs { arguments += ["--ping-interval-ms", String(value)] }
        return arguments
    }

    /// The `jam` executable built beside the test bundle (or `.build/debug/jam`).
    static func executable() throws -> URL {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("jam")
        if FileManager.default.isExecutableFile(atPath: beside.path) { return beside }
        let local = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(".build/debug/jam")
        if FileManager.default.isExecutableFile(atPath: local.path) { return local }
        throw TestFailure("the jam executable was not found beside \(beside.path) nor at \(local.path); build it first")
    }

    /// Kills this server with SIGKILL (nothing flushed) and starts another on the same data
    /// folder, which `body` gets; that one is stopped when `body` ends.
    func afterKill<T>(_ options: Options = Options(), _ body: (PirateServer) async throws -> T) async throws -> T {
        process.signal(SIGKILL)
        _ = try await process.waitForExit(timeout: .seconds(10))
        let second = try await Self.start(options, dataDirectory: dataDirectory)
        do {
            let result = try await body(second)
            await second.stop(removeData: false)
            return result
        } catch {
            await second.stop(removeData: false)
            throw error
        }
    }

    private static func start(_ options: Options, dataDirectory existing: URL? = nil) async throws -> PirateServer {
        let dataDirectory = existing ?? FileManager.default.temporaryDirectory.appendingPathComponent("pirate-radio-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
        let logFile = dataDirectory.appendingPathComponent("serve-\(UUID().uuidString.prefix(8)).log")
        var environment = ProcessInfo.processInfo.environment
        for key in environment.keys where key.hasPrefix("JAM_") { environment[key] = nil }
        environment["PORT"] = "0"
        environment["JWT_SECRET"] = secret
        let process = try await ChildProcess.start(
            try executable(), arguments: arguments(dataDirectory: dataDirectory, options: options),
            environment: environment, logFile: logFile)

        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let text = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
            if let port = listeningPort(in: text) {
                return PirateServer(process: process, port: port, dataDirectory: dataDirectory, logFile: logFile)
            }
            if !process.isRunning {
                let status = try await process.waitForExit()
                throw TestFailure("jam serve exited (\(status)) before listening:\n\(text)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        _ = try? await process.waitForExit(timeout: .zero)
        throw TestFailure("jam serve did not print a `listening on` line within 30 s:\n\((try? String(contentsOf: logFile, encoding: .utf8)) ?? "")")
    }

    /// The port in a line containing `listening on http://<host>:<port>`.
    static func listeningPort(in text: String) -> Int? {
        guard let range = text.range(of: #"listening on http://[^\s:/]+:[0-9]+"#, options: .regularExpression) else { return nil }
        return text[range].split(separator: ":").last.flatMap { Int($0) }
    }

    func register(_ socket: PirateSocket) {
        sockets.withLock { $0.append(socket) }
    }

    /// The end of the server's log, for failure messages.
    func logTail(lines: Int = 60) -> String {
        let text = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
        return text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(separator: "\n")
    }

    /// Closes every socket the test opened, then SIGTERM (SIGKILL after 5 s).
    private func stop(removeData: Bool) async {
        let open = sockets.withLock { $0 }
        await withTaskGroup(of: Void.self) { group in
            for socket in open { group.addTask { await socket.close() } }
        }
        process.signal(SIGTERM)
        do {
            try await process.waitForExit(timeout: .seconds(5))
        } catch {
            FileHandle.standardError.write(Data("waiting for jam serve to stop failed: \(error)\n".utf8))
        }
        if removeData { try? FileManager.default.removeItem(at: dataDirectory) }
    }
}

/// Bounds how many servers run at once, so the timing tests keep their precision on a small machine.
actor ServerSlots {
    static let shared = ServerSlots(limit: ProcessInfo.processInfo.environment["PIRATE_TEST_MAX_SERVERS"].flatMap(Int.init) ?? 5)

    private var available: Int
    private var waiters: [CheckedContinuation<Void, Never>] = []

    init(limit: Int) { available = max(1, limit) }

    func acquire() async {
        if available > 0 {
            available -= 1
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    func release() {
        if waiters.isEmpty {
            available += 1
        } else {
            waiters.removeFirst().resume()
        }
    }
}

/// A failure raised by test support code.
struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
