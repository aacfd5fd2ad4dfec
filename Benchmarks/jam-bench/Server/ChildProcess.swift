import Foundation
import Synchronization

/// A child process started with `posix_spawn`, its output going to a log file.
///
/// posix_spawn and waitpid rather than Foundation's `Process`, so the pid is a plain
/// value that any task may signal and reap, and nothing else reaps it behind our back.
struct ChildProcess: Sendable {
    let pid: pid_t
    /// Where its standard output and error go.
    let logPath: String

    /// Failure to start or stop a child.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Starts `executable` with `arguments`, the current environment plus `environment`.
    static func start(_ executable: String, _ arguments: [String], environment: [String: String] = [:], logPath: String) throws -> ChildProcess {
        var merged = ProcessInfo.processInfo.environment
        for (key, value) in environment { merged[key] = value }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var pid: pid_t = 0
        let status = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        guard status == 0 else { throw Failure(description: "cannot start \(executable): \(String(cString: strerror(status)))") }
        ChildRegistry.shared.add(pid)
        return ChildProcess(pid: pid, logPath: logPath)
    }

    /// The log so far (for error messages and the listening line).
    func log() -> String {
        do {
            return try String(contentsOfFile: logPath, encoding: .utf8)
        } catch {
            return "(log unreadable: \(error.localizedDescription))"
        }
    }

    /// True while the child has not exited; reaps it once it has.
    func isRunning() -> Bool {
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        if result == pid {
            ChildRegistry.shared.remove(pid)
            return false
        }
        return result == 0
    }

    /// Sends `signal`, waits up to `timeout` for the exit, then SIGKILLs. Bounded in time.
    func stop(signal: Int32 = SIGTERM, timeout: Duration = .seconds(10)) async {
        guard isRunning() else { return }
        kill(pid, signal)
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if !isRunning() { return }
            do {
                try await Task.sleep(for: .milliseconds(20))
            } catch {
                break
            }
        }
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        ChildRegistry.shared.remove(pid)
    }
}

/// Children still running, so an interrupted benchmark (Ctrl-C, SIGTERM) does not leave a
/// server behind on the shared machine.
final class ChildRegistry: Sendable {
    /// The process-wide registry.
    static let shared = ChildRegistry()
    private let pids = Mutex<Set<pid_t>>([])

    /// Remembers a running child.
    func add(_ pid: pid_t) { _ = pids.withLock { $0.insert(pid) } }

    /// Forgets a reaped child.
    func remove(_ pid: pid_t) { _ = pids.withLock { $0.remove(pid) } }

    /// Kills every child still registered (from a signal handler's dispatch source).
    func killAll() {
        for pid in pids.withLock({ $0 }) { kill(pid, SIGKILL) }
    }
}
