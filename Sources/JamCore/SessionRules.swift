import JamProtocol

/// How a session behaves beyond its settings: fixed by the server profile that created it.
public struct SessionRules: Codable, Hashable, Sendable {
    /// Who starts items.
    public enum StartMode: String, Codable, Hashable, Sendable {
        /// The server announces starts ahead (`playPrepare` then `playCommit`), prepares the
        /// next item before the current one ends, and starts the first add at once.
        case scheduled
        /// The DJ's device sets the timeline (prepare, commit, pause, resume, seek); the server
        /// keeps it and advances to the queue head when an item ends.
        case djDriven
    }

    /// Who starts items.
    public var startMode: StartMode
    /// Most items the queue holds; `nil` for no limit.
    public var maxQueueLength: Int?
    /// How long a session with something current or queued outlives its last member;
    /// `nil` ends it when the last member leaves.
    public var emptyGraceMs: Int64?

    /// Creates rules.
    public init(startMode: StartMode, maxQueueLength: Int? = nil, emptyGraceMs: Int64? = nil) {
        self.startMode = startMode
        self.maxQueueLength = maxQueueLength
        self.emptyGraceMs = emptyGraceMs
    }

    /// OpenJam's own rules.
    public static let openJam = SessionRules(startMode: .scheduled)
}

/// A timeline change the DJ's device decided, with the server instant it refers to.
public enum DJTimeline: Hashable, Sendable, Codable {
    /// The prepared item plays from `positionMs` at `at`.
    case commit(positionMs: Int64, at: Millis)
    /// Held at `positionMs` from `at`.
    case pause(positionMs: Int64, at: Millis)
    /// Plays from `positionMs` at `at`.
    case resume(positionMs: Int64, at: Millis)
    /// Moves to `positionMs` at `at`, playing or not.
    case seek(positionMs: Int64, at: Millis)
}
