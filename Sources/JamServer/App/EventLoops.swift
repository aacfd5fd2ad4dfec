import NIOCore

/// How many event loops `jam serve` runs: one fewer than the machine has cores, so the
/// store's commit thread, busy under load with every group commit and its fsync, keeps a core
/// of its own instead of taking turns with the loops (measured in docs/PERFORMANCE.md).
public enum EventLoops {
    /// The loops for a machine of `cores` cores: never fewer than one.
    public static func count(cores: Int) -> Int {
        max(1, cores - 1)
    }

    /// Sizes the shared event loop group before anything uses it; NIO's own
    /// `NIO_SINGLETON_GROUP_LOOP_COUNT`, when `environment` has it, wins. Once per process.
    public static func configure(environment: [String: String]) {
        guard environment[environmentVariable] == nil else { return }
        NIOSingletons.groupLoopCountSuggestion = count(cores: System.coreCount)
    }

    /// The variable NIO reads its loop count from.
    public static let environmentVariable = "NIO_SINGLETON_GROUP_LOOP_COUNT"
}
