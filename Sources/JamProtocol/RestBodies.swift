/// `POST /auth/guest` body.
public struct GuestAuthRequest: Codable, Hashable, Sendable {
    public var displayName: String
    /// Creates the body.
    public init(displayName: String) { self.displayName = displayName }
}

/// `POST /auth/guest` answer: a fresh user ID and the token that proves it.
public struct GuestAuthResponse: Codable, Hashable, Sendable {
    public var userId: UserID
    public var displayName: String
    public var token: String
    /// When the token stops being accepted (server time, ms since 1970); refresh it before
    /// then with `POST /auth/refresh`.
    public var expiresAt: Millis
    /// Creates the body.
    public init(userId: UserID, displayName: String, token: String, expiresAt: Millis) {
        self.userId = userId
        self.displayName = displayName
        self.token = token
        self.expiresAt = expiresAt
    }
}

/// `POST /api/v1/sessions` body; every field is optional.
public struct CreateSessionRequest: Codable, Hashable, Sendable {
    /// The session's name; defaults to "<host>'s session".
    public var name: String?
    /// Overrides the display name from the token for this session.
    public var displayName: String?
    /// Settings other than the defaults.
    public var settings: SettingsPatch?
    /// Creates the body.
    public init(name: String? = nil, displayName: String? = nil, settings: SettingsPatch? = nil) {
        self.name = name
        self.displayName = displayName
        self.settings = settings
    }
}

/// `POST /api/v1/sessions/join` body.
public struct JoinSessionRequest: Codable, Hashable, Sendable {
    /// The join code (case-insensitive).
    public var code: String
    /// Overrides the display name from the token for this session.
    public var displayName: String?
    /// Creates the body.
    public init(code: String, displayName: String? = nil) {
        self.code = code
        self.displayName = displayName
    }
}

/// A host control on the timeline, for `PATCH /api/v1/sessions/{id}`.
public enum PlaybackControl: String, Codable, Hashable, Sendable, CaseIterable, WireEnum {
    case play, pause, resume
}

/// `PATCH /api/v1/sessions/{id}` body: host controls without a socket.
public struct UpdateSessionRequest: Codable, Hashable, Sendable {
    /// Settings to change (`locked` among them).
    public var settings: SettingsPatch?
    /// Play, pause or resume.
    public var playback: PlaybackControl?
    /// Move the current item to this position.
    public var seekMs: Int64?
    /// Issue a new join code (host only).
    public var regenerateJoinCode: Bool?
    /// Creates the body.
    public init(settings: SettingsPatch? = nil, playback: PlaybackControl? = nil, seekMs: Int64? = nil, regenerateJoinCode: Bool? = nil) {
        self.settings = settings
        self.playback = playback
        self.seekMs = seekMs
        self.regenerateJoinCode = regenerateJoinCode
    }

    /// Rejects an empty change and out-of-range values.
    public func validate() throws(JamError) {
        if settings == nil && playback == nil && seekMs == nil && regenerateJoinCode != true {
            throw JamError(.invalidField, "the update must set settings, playback, seekMs or regenerateJoinCode")
        }
        if let settings {
            if settings.isEmpty { throw JamError(.invalidField, "settings must change at least one setting") }
            try settings.validate()
        }
        if let seekMs { try Validate.position(seekMs, field: "seekMs") }
    }
}

/// `POST /api/v1/sessions/{id}/queue` body.
public typealias AddToQueueRequest = AddToQueue

/// `PUT /api/v1/sessions/{id}/queue/{itemId}/vote` body.
public struct VoteRequest: Codable, Hashable, Sendable {
    public var value: Int
    /// Creates the body.
    public init(value: Int) { self.value = value }
}

/// Answer to a vote: the item's new score and the caller's vote.
public struct VoteResponse: Codable, Hashable, Sendable {
    public var itemId: ItemID
    public var score: Int
    public var myVote: Int
    /// Creates the body.
    public init(itemId: ItemID, score: Int, myVote: Int) {
        self.itemId = itemId
        self.score = score
        self.myVote = myVote
    }
}

/// `POST /api/v1/sessions/{id}/members/{userId}/role` body.
public struct RoleRequest: Codable, Hashable, Sendable {
    public var role: Role
    /// Creates the body.
    public init(role: Role) { self.role = role }
}

/// `GET /api/v1/time`: the server clock, for a quick offset estimate over HTTP.
public struct ServerTime: Codable, Hashable, Sendable {
    public var serverTime: Millis
    /// Creates the body.
    public init(serverTime: Millis) { self.serverTime = serverTime }
}

/// `GET /healthz`: 200 with `ok` while the server can take commands, 503 with
/// `unavailable` and the reason while it cannot (a node that lost its database), so a
/// load balancer sends members elsewhere.
public struct Health: Codable, Hashable, Sendable {
    /// Whether the server can take commands now.
    public enum Status: String, Codable, Hashable, Sendable {
        case ok
        case unavailable
    }

    public var status: Status
    public var sessions: Int
    /// Why the server cannot take commands; absent while it can.
    public var reason: String?
    /// Creates the body.
    public init(status: Status, sessions: Int, reason: String? = nil) {
        self.status = status
        self.sessions = sessions
        self.reason = reason
    }
}

/// `GET /api/v1/search?q=`: library tracks matching the query, best first.
public struct SearchResults: Codable, Hashable, Sendable {
    public var tracks: [Track]
    /// Creates the body.
    public init(tracks: [Track]) { self.tracks = tracks }
}
