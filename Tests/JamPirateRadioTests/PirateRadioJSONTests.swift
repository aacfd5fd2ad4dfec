import Foundation
@testable import JamPirateRadioWire
import JamProtocol
import Testing

/// PirateRadio frames are written with `JSONWriter`; these prove every payload type comes out
/// byte for byte as its `Codable` form does through `WireCoding.encoder`.
struct PirateRadioJSONTests {
    static let full = PirateRadio.Track(id: "spotify:track:1", name: "Ünïcödé \"quoted\" / slash", artist: "A\nB", albumName: "Al", albumArtURL: "https://a/b.jpg", durationMs: 183_000)
    static let bare = PirateRadio.Track(id: "t", name: "Bare", artist: "")

    static func expectSame<T: Encodable & JSONWritable>(_ value: T, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let expected = String(decoding: try WireCoding.encoder.encode(value), as: UTF8.self)
        #expect(PirateRadio.json(value) == expected, sourceLocation: sourceLocation)
    }

    /// A payload the server writes with tracks as raw JSON comes out as the `Codable` type a
    /// client reads it with.
    static func expectSame(_ shown: some JSONWritable, as read: some Encodable, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let expected = String(decoding: try WireCoding.encoder.encode(read), as: UTF8.self)
        #expect(PirateRadio.json(shown) == expected, sourceLocation: sourceLocation)
    }

    static func raw(_ track: PirateRadio.Track) -> PirateRadio.RawJSON { PirateRadio.RawJSON(text: PirateRadio.json(track)) }

    @Test("Server payloads are written byte for byte as their Codable types encode them")
    func serverPayloadsAreWrittenAsTheirCodableFormsWriteThem() throws {
        try Self.expectSame(Self.full)
        try Self.expectSame(Self.bare)
        try Self.expectSame(PirateRadio.ShownQueue(queue: [Self.full, Self.bare].map(Self.raw)), as: PirateRadio.QueueUpdate(queue: [Self.full, Self.bare]))
        try Self.expectSame(PirateRadio.ShownQueue(queue: []), as: PirateRadio.QueueUpdate(queue: []))
        try Self.expectSame(PirateRadio.MemberEvent(userId: "u1", displayName: "Ü"))
        try Self.expectSame(PirateRadio.MemberEvent(userId: "u1"))
        try Self.expectSame(PirateRadio.Pong(clientSendTime: 1_700_000_000_000.125, serverTime: 1_700_000_000_001))
        try Self.expectSame(PirateRadio.ErrorMessage(message: "only the DJ may remove tracks"))
        let members = [PirateRadio.Member(userId: "dj", displayName: "DJ"), PirateRadio.Member(userId: "m", displayName: "M/\\")]
        for current in [Self.full, nil] {
            try Self.expectSame(
                PirateRadio.ShownSnapshot(
                    id: "00000000-0000-0000-0000-000000000001", joinCode: "1234", creatorId: "dj", djUserId: "dj", members: members,
                    epoch: 3, sequence: 7, currentTrack: current.map(Self.raw), isPlaying: current != nil, positionMs: 1_234,
                    positionTimestamp: 1_700_000_000_000, queue: [Self.raw(Self.bare)]),
                as: PirateRadio.Snapshot(
                    id: "00000000-0000-0000-0000-000000000001", joinCode: "1234", creatorId: "dj", djUserId: "dj", members: members,
                    epoch: 3, sequence: 7, currentTrack: current, isPlaying: current != nil, positionMs: 1_234,
                    positionTimestamp: 1_700_000_000_000, queue: [Self.bare]))
        }
    }

    @Test("A snapshot reads without a playing track and ignores fields it does not know")
    func aSnapshotReadsWithoutAPlayingTrackAndIgnoresFieldsItDoesNotKnow() throws {
        let fields = #""creatorId":"dj","djUserId":"dj","epoch":3,"id":"s","isPlaying":false,"joinCode":"1234","members":[],"positionMs":0,"positionTimestamp":5,"queue":[{"artist":"","id":"t","name":"Bare"}],"sequence":7"#
        let withNull = try JSONDecoder().decode(PirateRadio.Snapshot.self, from: Data("{\(fields),\"currentTrack\":null}".utf8))
        let withoutKey = try JSONDecoder().decode(PirateRadio.Snapshot.self, from: Data("{\(fields),\"later\":{\"x\":1}}".utf8))
        #expect(withNull.currentTrack == nil && withNull.queue == [Self.bare] && withNull.sequence == 7)
        #expect(withoutKey == withNull)
        #expect(throws: DecodingError.self, "every other field is required") {
            try JSONDecoder().decode(PirateRadio.Snapshot.self, from: Data(#"{"id":"s","currentTrack":null}"#.utf8))
        }
        let written = try JSONDecoder().decode(PirateRadio.Snapshot.self, from: try WireCoding.encoder.encode(withNull))
        #expect(written == withNull)
        #expect(String(decoding: try WireCoding.encoder.encode(withNull), as: UTF8.self).contains(#""currentTrack":null"#))
    }

    @Test("Client payloads are written byte for byte as their Codable types encode them")
    func clientPayloadsAreWrittenAsTheirCodableFormsWriteThem() throws {
        try Self.expectSame(PirateRadio.Ping(clientSendTime: 12.5))
        try Self.expectSame(PirateRadio.PlayPrepare(trackId: Self.full.id, track: Self.full))
        try Self.expectSame(PirateRadio.TimelineData(positionMs: 0, ntpTimestamp: 1_700_000_000_000, executionTime: 1_700_000_000_250))
        try Self.expectSame(PirateRadio.TimelineData(positionMs: 1.5))
        try Self.expectSame(PirateRadio.AddToQueue(track: Self.bare, nonce: "n-1"))
        try Self.expectSame(PirateRadio.RemoveFromQueue(trackId: "t"))
    }
}
