import Foundation
import JamProtocol

/// OpenJam's own track, named apart from `PirateRadio.Track`.
public typealias OpenJamTrack = Track

/// The wire types of the PirateRadio protocol, spoken by `jam serve --profile pirate-radio`.
public enum PirateRadio {
    /// A track as PirateRadio sends it.
    public struct Track: Codable, Hashable, Sendable {
        public var id: String
        public var name: String
        public var artist: String
        public var albumName: String?
        public var albumArtURL: String?
        public var durationMs: Int64?

        /// Creates a track.
        public init(id: String, name: String, artist: String, albumName: String? = nil, albumArtURL: String? = nil, durationMs: Int64? = nil) {
            self.id = id
            self.name = name
            self.artist = artist
            self.albumName = albumName
            self.albumArtURL = albumArtURL
            self.durationMs = durationMs
        }

        /// The OpenJam track it stands for (PirateRadio's catalogue is Spotify).
        public var openJam: OpenJamTrack {
            OpenJamTrack(
                id: id, name: name, artist: artist, album: albumName, durationMs: durationMs,
                artworkURL: albumArtURL, source: .spotify)
        }

        /// The PirateRadio form of an OpenJam track.
        public init(_ track: OpenJamTrack) {
            self.init(id: track.id, name: track.name, artist: track.artist, albumName: track.album, albumArtURL: track.artworkURL, durationMs: track.durationMs)
        }
    }

    /// A member in a snapshot.
    public struct Member: Codable, Hashable, Sendable {
        public var userId: String
        public var displayName: String
        /// Creates a member.
        public init(userId: String, displayName: String) {
            self.userId = userId
            self.displayName = displayName
        }
    }

    /// `GET /sessions/{id}` and the `data` of `stateSync`, read with tracks as `Track`s.
    public typealias Snapshot = SnapshotOf<Track>

    /// `GET /sessions/{id}` and the `data` of `stateSync`, with tracks of type `Entry`: one list
    /// of fields for the snapshot clients read (`Snapshot`) and the one the server writes with
    /// tracks as their clients sent them (`ShownSnapshot`).
    public struct SnapshotOf<Entry: Hashable & Sendable>: Hashable, Sendable {
        public var id: String
        public var joinCode: String
        public var creatorId: String
        public var djUserId: String
        public var members: [Member]
        public var epoch: Int64
        public var sequence: Int64
        public var currentTrack: Entry?
        public var isPlaying: Bool
        public var positionMs: Int64
        public var positionTimestamp: Int64
        public var queue: [Entry]

        /// Creates a snapshot.
        public init(
            id: String, joinCode: String, creatorId: String, djUserId: String, members: [Member], epoch: Int64, sequence: Int64,
            currentTrack: Entry?, isPlaying: Bool, positionMs: Int64, positionTimestamp: Int64, queue: [Entry]
        ) {
            self.id = id
            self.joinCode = joinCode
            self.creatorId = creatorId
            self.djUserId = djUserId
            self.members = members
            self.epoch = epoch
            self.sequence = sequence
            self.currentTrack = currentTrack
            self.isPlaying = isPlaying
            self.positionMs = positionMs
            self.positionTimestamp = positionTimestamp
            self.queue = queue
        }
    }

    /// `POST /auth` body.
    public struct AuthRequest: Codable, Hashable, Sendable {
        public var spotifyUserId: String
        public var displayName: String?
        /// Creates the body.
        public init(spotifyUserId: String, displayName: String? = nil) {
            self.spotifyUserId = spotifyUserId
            self.displayName = displayName
        }
    }

    /// `POST /auth` answer.
    public struct AuthResponse: Codable, Hashable, Sendable {
        public var token: String
        /// Creates the body.
        public init(token: String) { self.token = token }
    }

    /// `POST /sessions` answer.
    public struct CreateResponse: Codable, Hashable, Sendable {
        public var id: String
        public var joinCode: String
        public var creatorId: String
        public var djUserId: String
        /// Creates the body.
        public init(id: String, joinCode: String, creatorId: String, djUserId: String) {
            self.id = id
            self.joinCode = joinCode
            self.creatorId = creatorId
            self.djUserId = djUserId
        }
    }

    /// `POST /sessions/join` body.
    public struct JoinRequest: Codable, Hashable, Sendable {
        public var code: String
        /// Creates the body.
        public init(code: String) { self.code = code }
    }

    /// `POST /sessions/join` answer.
    public struct JoinResponse: Codable, Hashable, Sendable {
        public var id: String
        public var joinCode: String
        public var djUserId: String
        public var djDisplayName: String
        public var memberCount: Int
        /// Creates the body.
        public init(id: String, joinCode: String, djUserId: String, djDisplayName: String, memberCount: Int) {
            self.id = id
            self.joinCode = joinCode
            self.djUserId = djUserId
            self.djDisplayName = djDisplayName
            self.memberCount = memberCount
        }
    }

    /// `GET /health` answer.
    public struct Health: Codable, Hashable, Sendable {
        public var status: String
        public var sessions: Int
        /// Creates the body.
        public init(status: String, sessions: Int) {
            self.status = status
            self.sessions = sessions
        }
    }

    /// Every HTTP error: `{"error": "<message>"}`.
    public struct ErrorBody: Codable, Hashable, Sendable {
        public var error: String
        /// Creates the body.
        public init(error: String) { self.error = error }
    }

    /// `addToQueue` data.
    public struct AddToQueue: Codable, Hashable, Sendable {
        public var track: Track
        public var nonce: String
        /// Creates the payload.
        public init(track: Track, nonce: String) {
            self.track = track
            self.nonce = nonce
        }
    }

    /// `removeFromQueue` data.
    public struct RemoveFromQueue: Codable, Hashable, Sendable {
        public var trackId: String
        /// Creates the payload.
        public init(trackId: String) { self.trackId = trackId }
    }

    /// `playPrepare` data (other fields are relayed untouched).
    public struct PlayPrepare: Codable, Hashable, Sendable {
        public var trackId: String
        public var track: Track
        /// Creates the payload.
        public init(trackId: String, track: Track) {
            self.trackId = trackId
            self.track = track
        }
    }

    /// `playCommit`, `pause`, `resume` and `seek` data (other fields are relayed untouched).
    public struct TimelineData: Codable, Hashable, Sendable {
        public var positionMs: Double
        public var ntpTimestamp: Double?
        public var executionTime: Double?
        /// Creates the payload.
        public init(positionMs: Double, ntpTimestamp: Double? = nil, executionTime: Double? = nil) {
            self.positionMs = positionMs
            self.ntpTimestamp = ntpTimestamp
            self.executionTime = executionTime
        }
    }

    /// `ping` data.
    public struct Ping: Codable, Hashable, Sendable {
        public var clientSendTime: Double
        /// Creates the payload.
        public init(clientSendTime: Double) { self.clientSendTime = clientSendTime }
    }

    /// `pong` data.
    public struct Pong: Codable, Hashable, Sendable {
        public var clientSendTime: Double
        public var serverTime: Int64
        /// Creates the payload.
        public init(clientSendTime: Double, serverTime: Int64) {
            self.clientSendTime = clientSendTime
            self.serverTime = serverTime
        }
    }

    /// `memberJoined` and `memberLeft` data.
    public struct MemberEvent: Codable, Hashable, Sendable {
        public var userId: String
        public var displayName: String?
        /// Creates the payload.
        public init(userId: String, displayName: String? = nil) {
            self.userId = userId
            self.displayName = displayName
        }
    }

    /// `queueUpdate` data.
    public struct QueueUpdate: Codable, Hashable, Sendable {
        public var queue: [Track]
        /// Creates the payload.
        public init(queue: [Track]) { self.queue = queue }
    }

    /// `error` data sent to the client whose message was refused.
    public struct ErrorMessage: Codable, Hashable, Sendable {
        public var message: String
        /// Creates the payload.
        public init(message: String) { self.message = message }
    }

    /// Close codes of the PirateRadio socket.
    public enum CloseCode {
        /// The same user connected again; the newer socket wins.
        public static let replaced: UInt16 = 4000
        /// Missing or bad token.
        public static let unauthorized: UInt16 = 4001
        /// Unknown session.
        public static let unknownSession: UInt16 = 4004
        /// Nothing received for the idle timeout.
        public static let idle: UInt16 = 4008
        /// The session has its 10 members.
        public static let full: UInt16 = 4009
    }
}

extension PirateRadio.SnapshotOf: Codable where Entry: Codable {
    private enum CodingKeys: String, CodingKey {
        case id, joinCode, creatorId, djUserId, members, epoch, sequence, currentTrack, isPlaying, positionMs, positionTimestamp, queue
    }

    /// Writes the snapshot; `currentTrack` is written as null rather than left out, as clients
    /// read it as a key. (Reading is synthesised.)
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(joinCode, forKey: .joinCode)
        try c.encode(creatorId, forKey: .creatorId)
        try c.encode(djUserId, forKey: .djUserId)
        try c.encode(members, forKey: .members)
        try c.encode(epoch, forKey: .epoch)
        try c.encode(sequence, forKey: .sequence)
        try c.encode(currentTrack, forKey: .currentTrack)
        try c.encode(isPlaying, forKey: .isPlaying)
        try c.encode(positionMs, forKey: .positionMs)
        try c.encode(positionTimestamp, forKey: .positionTimestamp)
        try c.encode(queue, forKey: .queue)
    }
}
