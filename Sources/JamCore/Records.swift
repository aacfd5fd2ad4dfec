import JamProtocol

/// A member as the session stores it.
public struct MemberRecord: Codable, Hashable, Sendable {
    public var userId: UserID
    public var displayName: String
    public var role: Role
    /// Open realtime connections; zero after a restart until clients reconnect.
    public var connections: Int
    public var joinedAt: Millis
    /// Join order, to break ties between members who joined in the same millisecond.
    public var joinOrder: Int64
    /// Since when the member has had no open socket and sent nothing; nil while connected
    /// (`Timing.dropAwayMs`).
    public var awaySince: Millis? = nil
    /// When the member last added a song.
    public var lastAddedAt: Millis? = nil

    /// True while at least one realtime connection is open.
    public var connected: Bool { connections > 0 }

    /// The wire view of this member.
    public var view: Member {
        Member(userId: userId, displayName: displayName, role: role, connected: connected, lastAddedAt: lastAddedAt)
    }
}

/// A queue item as the session stores it: the track, who added it and every vote.
public struct ItemRecord: Codable, Hashable, Sendable {
    public var id: ItemID
    public var track: Track
    public var addedBy: UserID
    /// The adder's name at the time, shown if they leave.
    public var addedByName: String
    public var addedAt: Millis
    /// Insertion order: the final tie-break.
    public var addOrder: Int64
    /// Each member's vote: +1 or -1 (a cleared vote is absent).
    public var votes: [UserID: Int]
    /// When the score last changed (or the add time): "held that score longest" wins ties.
    public var scoreSince: Millis
    /// The score last changed by falling (a vote lost); nil when it rose or never changed.
    /// Read by the `fallenFirst` rule for equal scores.
    public var scoreFell: Bool?

    /// Sum of the votes.
    public var score: Int { Self.score(of: votes) }

    /// The score `votes` give an item.
    static func score(of votes: [UserID: Int]) -> Int { votes.values.reduce(0, +) }
}

/// The item on the timeline and where it stands.
public struct CurrentItem: Codable, Hashable, Sendable {
    public var item: ItemRecord
    public var epoch: Int64
    public var state: PlaybackState
    /// Position at `anchorMs`.
    public var positionMs: Int64
    /// While preparing: the planned start. Otherwise: the instant `positionMs` refers to.
    public var anchorMs: Millis
    /// When the item became current.
    public var startedAt: Millis
    /// While preparing: when `playCommit` goes out at the latest.
    public var commitBy: Millis

    /// The playback position at `t`, clamped to the track (`PlaybackPosition`).
    public func position(at t: Millis) -> Int64 {
        PlaybackPosition.at(t, state: state, positionMs: positionMs, anchorMs: anchorMs, durationMs: item.track.durationMs)
    }

    /// The server instant the item reaches its end, when it is playing and has a duration.
    public var endsAt: Millis? {
        guard state == .playing, let duration = item.track.durationMs else { return nil }
        return anchorMs + max(0, duration - positionMs)
    }
}

/// The item that follows the current one without a gap, announced ahead of time.
public struct UpNext: Codable, Hashable, Sendable {
    public var item: ItemRecord
    /// The epoch it will have.
    public var epoch: Int64
    /// The instant it starts: the current item's end.
    public var startAt: Millis
}

/// How far ahead of the timeline one device plays (its output latency plus its delay):
/// the start's commit has to reach it at least that much earlier.
public struct DeviceLead: Codable, Hashable, Sendable {
    public var userId: UserID
    /// Empty for a device that does not name itself.
    public var deviceId: String
    public var leadMs: Int64
    /// Creates the record.
    public init(userId: UserID, deviceId: String, leadMs: Int64) {
        self.userId = userId
        self.deviceId = deviceId
        self.leadMs = leadMs
    }
}

/// One device's latest round trip to the server, for the start lead: a member is led for
/// by their slowest device that reported lately, not by whichever reported last.
public struct DeviceRoundTrip: Codable, Hashable, Sendable {
    public var userId: UserID
    /// Empty for a device that does not name itself.
    public var deviceId: String
    public var roundTripMs: Double
    /// The report's time: a device that stops reporting (it left) stops counting.
    public var reportedAt: Millis
    /// Creates the record.
    public init(userId: UserID, deviceId: String, roundTripMs: Double, reportedAt: Millis) {
        self.userId = userId
        self.deviceId = deviceId
        self.roundTripMs = roundTripMs
        self.reportedAt = reportedAt
    }
}

/// Timing rules of the two-phase start and auto-advance.
public struct Timing: Codable, Hashable, Sendable {
    /// Shortest lead between `playPrepare` and the start for skip/play.
    public var minLeadMs: Int64
    /// Longest lead, however slow a device's round trip.
    public var maxLeadMs: Int64
    /// How long before the current item ends the next one is prepared (gapless).
    public var prepareAheadMs: Int64
    /// How long before the start `playCommit` goes out at the latest.
    public var commitMarginMs: Int64
    /// Playback pauses once no member has been connected for this long, so a session
    /// nobody listens to stops advancing (and writing); `nil` never pauses. Absent in
    /// sessions stored before it existed, until the next restart applies the server's.
    public var unattendedPauseMs: Int64?
    /// A session ends once no member has been connected for this long; `nil` never.
    public var abandonAfterMs: Int64?
    /// A member away this long (no socket, nothing sent) leaves the session while others are
    /// there, so a session people come and go from neither fills up with the absent nor
    /// keeps them for ever; `nil` never.
    public var dropAwayMs: Int64?

    /// Pause after 15 minutes without a connected member.
    public static let defaultUnattendedPauseMs: Int64 = 15 * 60_000
    /// End after a day without a connected member.
    public static let defaultAbandonAfterMs: Int64 = 24 * 3_600_000
    /// A member away for 12 hours leaves.
    public static let defaultDropAwayMs: Int64 = 12 * 3_600_000

    /// Creates timing rules; the defaults suit real networks.
    public init(
        minLeadMs: Int64 = 500, maxLeadMs: Int64 = 5000, prepareAheadMs: Int64 = 5000, commitMarginMs: Int64 = 150,
        unattendedPauseMs: Int64? = Timing.defaultUnattendedPauseMs, abandonAfterMs: Int64? = Timing.defaultAbandonAfterMs,
        dropAwayMs: Int64? = Timing.defaultDropAwayMs
    ) {
        self.minLeadMs = minLeadMs
        self.maxLeadMs = maxLeadMs
        self.prepareAheadMs = prepareAheadMs
        self.commitMarginMs = commitMarginMs
        self.unattendedPauseMs = unattendedPauseMs
        self.abandonAfterMs = abandonAfterMs
        self.dropAwayMs = dropAwayMs
    }
}
