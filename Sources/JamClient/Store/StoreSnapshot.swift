import JamProtocol

/// A queue entry as an app shows it: the server's item with this member's view of it.
public struct StoreItem: Sendable, Equatable, Identifiable {
    /// The item (for a pending add, a local stand-in with a `pending-` id).
    public var item: QueueItem
    /// The member's vote as shown: an in-flight vote shows at once.
    public var myVote: Int
    /// An add the server has not confirmed yet.
    public var pending: Bool
    /// A vote on it is on its way.
    public var voteInFlight: Bool

    public var id: ItemID { item.id }
}

/// A refused action and the server's reason, for the app to show in words.
public struct Rejection: Sendable, Equatable {
    /// Counts the store's refusals: two alike, one after the other, are two (an app that
    /// shows each on change shows both).
    public var id: Int = 0
    /// What the member tried ("vote", "add", "skip"...).
    public var action: String
    /// The server's error code.
    public var code: ErrorCode
    /// The server's message.
    public var message: String
    /// How long to wait before trying again, when the server said (a rate limit, say).
    public var retryAfterMs: Int64? = nil
}

/// Everything an app renders at one moment.
public struct StoreSnapshot: Sendable, Equatable {
    public var session: SessionInfo?
    public var members: [Member]
    public var nowPlaying: NowPlaying?
    public var upNext: NowPlaying?
    public var queue: [StoreItem]
    public var skipRequests: SkipRequestsView
    public var history: [HistoryEntry]
    public var phase: ConnectionPhase
    /// The member's role, once known.
    public var role: Role?
    /// The most recent refusal, until the next action.
    public var lastRejection: Rejection?
    /// True once the session ended.
    public var ended: Bool
    /// A host's skip is on its way, or answered but not yet in this snapshot's state:
    /// `nowPlaying` is hidden until the next item shows, so an app shows "skipping", not an
    /// idle session and not the skipped song again.
    public var skipping: Bool = false

    /// An empty snapshot before the first state arrives.
    public static let empty = StoreSnapshot(
        session: nil, members: [], nowPlaying: nil, upNext: nil, queue: [], skipRequests: SkipRequestsView(count: 0, needed: 1, mine: false),
        history: [], phase: .idle, role: nil, lastRejection: nil, ended: false)
}
