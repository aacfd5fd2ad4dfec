import Foundation
import Testing
import JamProtocol

/// A deterministic UUID-shaped ID: `00000000-0000-0000-0000-00000000000N`.
func uuidID(_ n: Int, group: Int = 0) -> JamID {
    JamID(String(format: "00000000-0000-0000-%04d-%012d", group, n))
}

/// Fixed values covering every optional field, so a round trip exercises all of them.
enum Sample {
    static let alice = uuidID(1)
    static let bob = uuidID(2)
    static let itemA = uuidID(1, group: 1)
    static let itemB = uuidID(2, group: 1)
    static let session = uuidID(1, group: 2)
    static let t0: Millis = 1_700_000_000_000

    static let fullTrack = Track(
        id: "lib-42", name: "Ünïcödé Song / \"quoted\"", artist: "Artist", album: "Album", durationMs: 183_456,
        artworkURL: "https://example.com/art/42.jpg", isrc: "USRC17607839", source: .library)
    static let bareTrack = Track(id: "spotify:track:1", name: "Bare", artist: "", source: .spotify)

    static let host = Member(userId: alice, displayName: "Alice", role: .host, connected: true)
    static let member = Member(userId: bob, displayName: "Bob", role: .member, connected: false)

    static let item = QueueItem(id: itemA, track: fullTrack, addedBy: host, addedAt: t0, score: 3, reason: "3 votes")
    static let otherItem = QueueItem(id: itemB, track: bareTrack, addedBy: member, addedAt: t0 + 5, score: -1, reason: "-1 vote")

    static let settings = SessionSettings(
        locked: true, skipThreshold: 0.75, maxMembers: 12, maxQueuedPerMember: 4, allowDuplicates: true,
        ordering: .fair, fallback: true)

    static let history = HistoryEntry(item: otherItem, startedAt: t0 - 200_000, endedAt: t0 - 10, outcome: .skipped)

    static let nowPlaying = NowPlaying(item: item, epoch: 7, state: .playing, positionMs: 12_345, anchorMs: t0 + 1)
    static let upNext = NowPlaying(item: otherItem, epoch: 8, state: .preparing, positionMs: 0, anchorMs: t0 + 171_112)

    static let view = SessionView(
        session: SessionInfo(
            id: session, joinCode: "K7PQ2X", name: "Friday", hostId: alice, hostDisplayName: "Alice",
            settings: settings, createdAt: t0 - 1_000_000),
        members: [host, member],
        nowPlaying: nowPlaying,
        queue: [otherItem],
        myVotes: [itemB.rawValue: -1],
        skipRequests: SkipRequestsView(count: 1, needed: 2, mine: true),
        history: [history],
        upNext: upNext,
        deviceDelays: [DeviceDelay(userId: bob, deviceId: "d2", delayMs: 120.5)])

    static let emptyView = SessionView(
        session: SessionInfo(
            id: session, joinCode: "AAAAAA", name: "Empty", hostId: alice, hostDisplayName: "Alice",
            settings: SessionSettings(), createdAt: t0),
        members: [host], nowPlaying: nil, queue: [], myVotes: [:],
        skipRequests: SkipRequestsView(count: 0, needed: 1, mine: false), history: [])
}

/// Encodes then decodes `value` with the wire coders.
func roundTrip<T: Codable>(_ value: T) throws(JamError) -> T {
    try WireCoding.decode(T.self, from: try WireCoding.encode(value))
}

/// The JSON object a value encodes to, for shape checks.
func jsonObject<T: Encodable>(_ value: T) throws -> [String: Any] {
    let data = try WireCoding.encode(value)
    return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
}

/// The typed error decoding `json` as a client frame produces, or nil when it decodes.
func frameError(_ json: String) -> JamError? {
    do {
        _ = try ClientFrame.decode(Data(json.utf8))
        return nil
    } catch {
        return error
    }
}
