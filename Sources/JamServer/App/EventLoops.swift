import JamProtocol
import NIOCore

/// How many event loops `jam serve` runs. With SQLite, one fewer than the machine has cores:
/// the store's commit thread, busy under load with every group commit and its fsync, keeps a
/// core of its own instead of taking turns with the loops (measured in docs/PERFORMANCE.md).
/// PostgreSQL's client does its work on the loops themselves, so there every core gets a loop.
public enum EventLoops {
    /// The loops for a machine of `cores` cores, with or without a busy `commitThread`: never
    /// fewer than one.
    public static func count(cores: Int, commitThread: Bool) -> Int {
        max(1, commitThread ? cores - 1 : cores)
    }

    /// Sizes the shared event loop group; NIO's own `NIO_SINGLETON_GROUP_LOOP_COUNT`, when
    /// `environment` holds a count there, wins. Once per process, before anything uses the
    /// group: NIO stops the process when the size is set a second time. A value there that is
    /// not a count is refused rather than replaced: somebody set it to get a number of loops.
    public static func configure(environment: [String: String], commitThread: Bool) throws(JamError) {
        if let text = environment[environmentVariable] {
            // NIO itself would quietly clamp anything above its limit.
            guard let given = Int(text), (1...maxLoops).contains(given) else {
                throw JamError(.invalidField, "\(environmentVariable) must be a whole number of event loops from 1 to \(maxLoops), got \"\(text)\"")
            }
            return
        }
        NIOSingletons.groupLoopCountSuggestion = count(cores: System.coreCount, commitThread: commitThread)
    }

    /// The most loops NIO's shared group runs.
    public static let maxLoops = 1024

    /// The variable NIO reads its loop count from.
    public static let environmentVariable = "NIO_SINGLETON_GROUP_LOOP_COUNT"
}
