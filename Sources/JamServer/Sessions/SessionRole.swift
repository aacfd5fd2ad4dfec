/// Whether this node applies a session's commands.
enum SessionRole: Sendable, Equatable {
    /// It holds the session's lease: it applies commands, logs them and runs the timers.
    case owner
    /// Another node does: this one follows the log and forwards its members' commands.
    case replica
}
