import JamTestSupport
import Foundation

/// `jam serve` as a separate process, so a test can kill it with SIGKILL.
final class ServerProcess: @unchecked Sendable {
    let process: Process
    let port: Int
    let dataDirectory: URL

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

    /// Starts `jam serve` on a free port and waits until it prints that it is listening.
    init(dataDirectory: URL, extraArguments: [String] = []) async throws {
        self.dataDirectory = dataDirectory
        let output = dataDirectory.appendingPathComponent("serve-\(UUID().uuidString).log")
        guard FileManager.default.createFile(atPath: output.path, contents: nil) else { throw TestFailure("cannot create \(output.path)") }
        let handle = try FileHandle(forWritingTo: output)
        process = Process()
        process.executableURL = try Self.executable
        process.arguments = ["serve", "--port", "0", "--data-dir", dataDirectory.path, "--secret", "kill-test-secret-0123456789abcdef01234", "--log-level", "warning", "--music", try DemoFolder.shared().path] + extraArguments
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            if let range = text.range(of: #"listening on http://127\.0\.0\.1:(\d+)"#, options: .regularExpression) {
                let digits = text[range].split(separator: ":").last.map(String.init) ?? ""
                guard let port = Int(digits) else { break }
                self.port = port
                return
            }
            if !process.isRunning { throw TestFailure("jam serve exited: \(text)") }
            try await Task.sleep(for: .milliseconds(20))
        }
        process.terminate()
        throw TestFailure("jam serve did not start: \((try? String(contentsOf: output, encoding: .utf8)) ?? "")")
    }

    var server: TestServer { TestServer(port: port, dataDirectory: dataDirectory) }

    /// SIGKILL: no chance to flush anything.
    func kill() {
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// SIGTERM: a graceful shutdown.
    func terminate() {
        process.terminate()
        process.waitUntilExit()
    }
}
