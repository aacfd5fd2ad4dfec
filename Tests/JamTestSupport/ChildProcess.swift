import Foundation
import Subprocess
import Synchronization

#if canImport(System)
import System
#else
import SystemPackage
#endif

/// A program a test starts, signals and waits for, watched by swift-subprocess.
///
/// Foundation's `Process` on Linux sometimes never notices that a child exited while
/// other children start and stop around it (the child stays a zombie and
/// `waitUntilExit()` spins on a cooperative thread for ever); swift-subprocess waits
/// on a process descriptor instead, without blocking a thread.
public final class ChildProcess: Sendable {
    /// The child's process id.
    public let pid: pid_t
    private let termination: Task<TerminationStatus, any Error>
    private let record: ExitRecord

    private init(pid: pid_t, termination: Task<TerminationStatus, any Error>, record: ExitRecord) {
        self.pid = pid
        self.termination = termination
        self.record = record
    }

    /// Starts `executable` with its output and error appended to `logFile` (created if missing).
    /// `environment` nil inherits the test's environment.
    public static func start(
        _ executable: URL, arguments: [String], environment: [String: String]? = nil, logFile: URL
    ) async throws -> ChildProcess {
        if !FileManager.default.fileExists(atPath: logFile.path) {
            guard FileManager.default.createFile(atPath: logFile.path, contents: nil) else {
                throw TestFailure("cannot create \(logFile.path)")
            }
        }
        let log = try FileDescriptor.open(FilePath(logFile.path), .writeOnly, options: [.append])
        let launched = LaunchSignal()
        let ended = ExitRecord()
        let termination = Task<TerminationStatus, any Error> {
            do {
                let result = try await Subprocess.run(
                    .path(FilePath(executable.path)), arguments: Arguments(arguments),
                    environment: environment.map(Self.environment) ?? .inherit,
                    input: .none,
                    output: .fileDescriptor(log, closeAfterSpawningProcess: false),
                    error: .fileDescriptor(log, closeAfterSpawningProcess: false)
                ) { execution in
                    launched.resume(.success(execution.processIdentifier.value))
                }
                try? log.close()
                ended.status.withLock { $0 = result.terminationStatus }
                return result.terminationStatus
            } catch {
                try? log.close()
                ended.failed.withLock { $0 = true }
                launched.resume(.failure(error))
                throw error
            }
        }
        let pid = try await launched.value()
        return ChildProcess(pid: pid, termination: termination, record: ended)
    }

    /// Whether the child has not exited yet.
    public var isRunning: Bool {
        record.hasEnded == false
    }

    /// Sends `signal` (SIGTERM, SIGKILL, …) if the child still runs.
    public func signal(_ signal: Int32) {
        if isRunning { _ = Foundation.kill(pid, signal) }
    }

    /// Waits for the child to exit; after `timeout` it is killed with SIGKILL and waited for.
    @discardableResult
    public func waitForExit(timeout: Duration = .seconds(10)) async throws -> TerminationStatus {
        let deadline = ContinuousClock.now + timeout
        while !record.hasEnded, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
        if !record.hasEnded { _ = Foundation.kill(pid, SIGKILL) }
        return try await termination.value
    }

    /// Runs a short command to the end and returns its exit status and its output and
    /// error text (through a file, so a daemon the command leaves behind cannot hold the
    /// output open).
    public static func run(_ executable: URL, arguments: [String], timeout: Duration = .seconds(20)) async throws -> (status: TerminationStatus, output: String) {
        let logFile = FileManager.default.temporaryDirectory.appendingPathComponent("openjam-child-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: logFile) }
        let child = try await start(executable, arguments: arguments, logFile: logFile)
        let status = try await child.waitForExit(timeout: timeout)
        let output = try String(contentsOf: logFile, encoding: .utf8)
        return (status, output)
    }

    /// How a child ended, in terms a test can compare.
    public enum Ending: Equatable, Sendable {
        case exited(Int32)
        case signalled(Int32)

        /// Translates swift-subprocess's status.
        public init(_ status: TerminationStatus) {
            switch status {
            case .exited(let code): self = .exited(code)
            case .signaled(let signal): self = .signalled(signal)
            }
        }
    }

    static func environment(_ values: [String: String]) -> Environment {
        .custom(Dictionary(uniqueKeysWithValues: values.map { (Environment.Key(stringLiteral: $0.key), $0.value) }))
    }
}

/// Whether and how the child ended, written by the task that waits for it.
private final class ExitRecord: Sendable {
    let status = Mutex<TerminationStatus?>(nil)
    let failed = Mutex(false)

    var hasEnded: Bool { status.withLock { $0 != nil } || failed.withLock { $0 } }
}

/// Hands the child's pid (or the launch error) from inside `Subprocess.run` to the starter, once.
private final class LaunchSignal: Sendable {
    private let state = Mutex<(result: Result<pid_t, any Error>?, waiter: CheckedContinuation<pid_t, any Error>?)>((nil, nil))

    func resume(_ result: Result<pid_t, any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<pid_t, any Error>? in
            guard state.result == nil else { return nil }
            state.result = result
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(with: result)
    }

    func value() async throws -> pid_t {
        try await withCheckedThrowingContinuation { continuation in
            let ready = state.withLock { state -> Result<pid_t, any Error>? in
                if let result = state.result { return result }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }
}
