import Foundation

/// QueueIT's wire vocabulary (its backend's `app/schemas`), snake_case as that backend
/// writes it and with every field its app's decoders require.
enum QueueIT {
    /// A user as `host` and `added_by` show one; the app requires `id` and `is_anonymous`.
    struct User: Encodable, Sendable, Equatable {
        var id: String
        @Nullable var username: String?
        /// The backend never passes the stored value for nested users, so its default shows.
        var musicProvider = "none"
        var storefront = "us"
        var isAnonymous = false

        enum CodingKeys: String, CodingKey {
            case id, username, storefront
            case musicProvider = "music_provider"
            case isAnonymous = "is_anonymous"
        }
    }

    /// A song (`TrackOut`): `isrc`, `album` and `duration_ms` are never null, `image_url` may be.
    struct Track: Encodable, Sendable, Equatable {
        var id: String
        var isrc: String
        var name: String
        var artists: String
        var album: String
        var durationMs: Int64
        @Nullable var imageURL: String?
        /// "spotify" or "apple_music": the only values the app's enum accepts.
        var source: String

        enum CodingKeys: String, CodingKey {
            case id, isrc, name, artists, album, source
            case durationMs = "duration_ms"
            case imageURL = "image_url"
        }
    }

    /// One queued song (`QueuedSongResponse`).
    struct QueuedSong: Encodable, Sendable, Equatable {
        var id: String
        /// "queued", "playing", "played" or "skipped".
        var status: String
        var addedAt: String
        var votes: Int
        var song: Track
        var addedBy: User
        @Nullable var lastEnteredTierAt: String?
        var enteredTierByGain: Bool

        enum CodingKeys: String, CodingKey {
            case id, status, votes, song
            case addedAt = "added_at"
            case addedBy = "added_by"
            case lastEnteredTierAt = "last_entered_tier_at"
            case enteredTierByGain = "entered_tier_by_gain"
        }
    }

    /// The session itself (`SessionBase`).
    struct Session: Encodable, Sendable, Equatable {
        var id: String
        var joinCode: String
        var createdAt: String
        var host: User
        /// Always "spotify" from the backend (its mapper never passes the stored value).
        var hostProvider = "spotify"

        enum CodingKeys: String, CodingKey {
            case id, host
            case joinCode = "join_code"
            case createdAt = "created_at"
            case hostProvider = "host_provider"
        }
    }

    /// What create, join and current answer (`CurrentSessionResponse`).
    struct CurrentSession: Encodable, Sendable, Equatable {
        var session: Session
        @Nullable var currentSong: QueuedSong?
        var queue: [QueuedSong]
        var myVotes: [String: Int]
        var skipRequestCount: Int
        var participantCount: Int
        var userRequestedSkip: Bool
        var lastSkipWasCrowdsourced: Bool

        enum CodingKeys: String, CodingKey {
            case session, queue
            case currentSong = "current_song"
            case myVotes = "my_votes"
            case skipRequestCount = "skip_request_count"
            case participantCount = "participant_count"
            case userRequestedSkip = "user_requested_skip"
            case lastSkipWasCrowdsourced = "last_skip_was_crowdsourced"
        }
    }

    /// `POST /sessions/request_skip`'s answer (`SkipRequestResponse`).
    struct SkipResponse: Encodable, Sendable, Equatable {
        var ok = true
        var skipRequestCount: Int
        var participantCount: Int
        var skipped: Bool

        enum CodingKeys: String, CodingKey {
            case ok, skipped
            case skipRequestCount = "skip_request_count"
            case participantCount = "participant_count"
        }
    }

    /// A vote's answer.
    struct VoteResponse: Encodable, Sendable, Equatable {
        var ok = true
        var totalVotes: Int

        enum CodingKeys: String, CodingKey {
            case ok
            case totalVotes = "total_votes"
        }
    }

    /// `{"ok": true}`: the app decodes it as `[String: Bool]`, so it holds nothing else.
    struct OK: Encodable, Sendable, Equatable {
        var ok = true
    }

    /// `GET /secure-test`'s answer: the token's subject.
    struct SecureTest: Encodable, Sendable, Equatable {
        var message = "Your token is valid!"
        var userId: String

        enum CodingKeys: String, CodingKey {
            case message
            case userId = "user_id"
        }
    }

    /// `GET /spotify/search`'s answer.
    struct SearchResults: Encodable, Sendable, Equatable {
        var tracks: [Track]
    }

    /// A realtime event: `{"event", "session_id", "data"}`, as the app's socket client reads it.
    struct Event: Encodable, Sendable {
        var event: String
        var sessionId: String
        var data: EventData

        enum CodingKeys: String, CodingKey {
            case event, data
            case sessionId = "session_id"
        }
    }

    /// What an event carries; absent fields are left out.
    struct EventData: Encodable, Sendable {
        var queuedSongId: String?
        var totalVotes: Int?
        var queue: [QueuedSong]?
        var currentSong: QueuedSong?
        var message: String?
        /// Set on `now_playing.updated`, whose `current_song` may be null.
        var carriesCurrentSong = false

        enum CodingKeys: String, CodingKey {
            case queue, message
            case queuedSongId = "queued_song_id"
            case totalVotes = "total_votes"
            case currentSong = "current_song"
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encodeIfPresent(queuedSongId, forKey: .queuedSongId)
            try c.encodeIfPresent(totalVotes, forKey: .totalVotes)
            try c.encodeIfPresent(queue, forKey: .queue)
            if carriesCurrentSong { try c.encode(currentSong, forKey: .currentSong) }
            try c.encodeIfPresent(message, forKey: .message)
        }
    }

    /// Dates as the app decodes them: ISO 8601 with a zone (here `Z`) and milliseconds.
    static func date(_ millis: Int64) -> String {
        Date(timeIntervalSince1970: Double(millis) / 1000).formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    /// JSON as the backend writes it (no escaped slashes, keys in a stable order).
    static func encode<T: Encodable>(_ value: T) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }
}
