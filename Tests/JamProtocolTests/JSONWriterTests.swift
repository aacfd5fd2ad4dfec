import Foundation
import Testing
import JamProtocol

/// The server writes its frames with `JSONWriter`; these prove the bytes are exactly what
/// `WireCoding.encoder` (the Codable definition, sorted keys) produces.
struct JSONWriterTests {
    private func encoderBytes(_ envelope: ServerEnvelope) throws -> [UInt8] {
        Array(try WireCoding.encoder.encode(envelope))
    }

    /// Both encodings, for a failure message.
    private func both(_ envelope: ServerEnvelope) throws -> String {
        let written = envelope.jsonBytes(), expected = try encoderBytes(envelope)
        let first = (0..<min(written.count, expected.count)).first { written[$0] != expected[$0] } ?? min(written.count, expected.count)
        let from = max(0, first - 60)
        return "first difference at byte \(first)\nwriter:  …\(String(decoding: written[from..<min(written.count, first + 60)], as: UTF8.self))\nencoder: …\(String(decoding: expected[from..<min(expected.count, first + 60)], as: UTF8.self))"
    }

    @Test(arguments: ServerEventType.allCases)
    func everyEventIsWrittenByteForByteAsTheEncoderWritesIt(_ type: ServerEventType) throws {
        for (index, event) in sampleEvents(type).enumerated() {
            let envelope = ServerEnvelope(event: event, epoch: 5, seq: 100 + Int64(index), timestamp: Sample.t0 + 3)
            let written = envelope.jsonBytes()
            let expected = try encoderBytes(envelope)
            #expect(written == expected, "\(String(decoding: written, as: UTF8.self))\n!=\n\(String(decoding: expected, as: UTF8.self))")
        }
    }

    @Test func stringsAreEscapedAsTheEncoderEscapesThem() throws {
        // Every control character, quotes, backslashes, slashes, non-ASCII and the JavaScript line separators.
        var samples = (0..<0x20).map { String(UnicodeScalar(UInt8($0))) }
        samples += ["\"", "\\", "/", "a/b\\c\"d", "Ünïcödé", "🎵 emoji", "\u{2028}\u{2029}", "\u{7F}", "", "plain"]
        for text in samples {
            let envelope = ServerEnvelope(event: .error(ErrorEvent(id: text.isEmpty ? nil : text, code: .malformed, message: text)), epoch: 0, seq: 0, timestamp: 0)
            #expect(envelope.jsonBytes() == (try encoderBytes(envelope)), "escaping \(Array(text.unicodeScalars.map(\.value)))")
        }
    }

    @Test func numbersAreWrittenAsTheEncoderWritesThem() throws {
        let doubles: [Double] = [0, -0.0, 1, -1, 0.5, 0.75, 1e-7, 12.5e-7, 1_700_000_000_000.25, 123_456_789_012_345, 999_999_999_999_999,
                                 1e15, 1e16, 1e17, 9_007_199_254_740_993, -2.5e20, .pi, 1.0 / 3.0]
        for value in doubles {
            let envelope = ServerEnvelope(event: .pong(Pong(clientSendTime: value, serverReceiveTime: -value, serverSendTime: value * 3)), epoch: 0, seq: 0, timestamp: 0)
            let message = try both(envelope)
            #expect(envelope.jsonBytes() == (try encoderBytes(envelope)), "number \(value)\n\(message)")
        }
        for value in [Int64.min, Int64.max, 0, -1, 9, 10, 1_795_450_407_345] {
            let envelope = ServerEnvelope(event: .votesUpdate(VotesUpdate(itemId: Sample.itemA, score: Int(value), reason: "\(value) votes")), epoch: value, seq: value, timestamp: value)
            #expect(envelope.jsonBytes() == (try encoderBytes(envelope)), "integer \(value)")
        }
    }

    @Test func seededRandomViewsAreWrittenAsTheEncoderWritesThem() throws {
        var random = SeededRandom(seed: 20261123)
        for _ in 0..<200 {
            let view = randomView(&random)
            let envelope = ServerEnvelope(event: .stateSync(view), epoch: Int64(random.next() % 50), seq: Int64(random.next() % 10_000), timestamp: Sample.t0)
            let message = try both(envelope)
            #expect(envelope.jsonBytes() == (try encoderBytes(envelope)), "\(message)")
        }
    }

    private func randomText(_ random: inout SeededRandom) -> String {
        let pieces = ["a", "Z", " ", "/", "\"", "\\", "\n", "\u{1}", "é", "ß", "🎶", "\u{2028}", "Song", "42"]
        return (0..<Int(random.next() % 6)).map { _ in pieces[Int(random.next() % UInt64(pieces.count))] }.joined()
    }

    private func randomTrack(_ random: inout SeededRandom) -> Track {
        let maybe = { (random: inout SeededRandom) -> Bool in random.next() % 2 == 0 }
        return Track(
            id: "t\(random.next() % 1000)", name: randomText(&random), artist: randomText(&random),
            album: maybe(&random) ? randomText(&random) : nil, durationMs: maybe(&random) ? Int64(random.next() % 600_000) : nil,
            artworkURL: maybe(&random) ? "https://x/\(randomText(&random))" : nil, isrc: maybe(&random) ? "ISRC\(random.next() % 99)" : nil,
            source: TrackSource.allCases[Int(random.next() % UInt64(TrackSource.allCases.count))])
    }

    private func randomItem(_ random: inout SeededRandom) -> QueueItem {
        let member = Member(
            userId: uuidID(Int(random.next() % 9)), displayName: randomText(&random), role: Role.allCases[Int(random.next() % 3)],
            connected: random.next() % 2 == 0)
        return QueueItem(
            id: uuidID(Int(random.next() % 99), group: 1), track: randomTrack(&random), addedBy: member, addedAt: Sample.t0 + Int64(random.next() % 9_999),
            score: Int(random.next() % 11) - 5, reason: randomText(&random))
    }

    private func randomView(_ random: inout SeededRandom) -> SessionView {
        let items = (0..<Int(random.next() % 5)).map { _ in randomItem(&random) }
        var votes: [String: Int] = [:]
        for item in items where random.next() % 2 == 0 { votes[item.id.rawValue] = random.next() % 2 == 0 ? 1 : -1 }
        let playing = random.next() % 2 == 0 ? NowPlaying(item: randomItem(&random), epoch: 3, state: .playing, positionMs: 5, anchorMs: Sample.t0) : nil
        return SessionView(
            session: SessionInfo(
                id: Sample.session, joinCode: "ABC123", name: randomText(&random), hostId: Sample.alice, hostDisplayName: randomText(&random),
                settings: SessionSettings(skipThreshold: Double(random.next() % 100) / 100), createdAt: Sample.t0),
            members: items.map(\.addedBy), nowPlaying: playing, queue: items, myVotes: votes,
            skipRequests: SkipRequestsView(count: 1, needed: 2, mine: random.next() % 2 == 0),
            history: items.prefix(2).map { HistoryEntry(item: $0, startedAt: Sample.t0, endedAt: Sample.t0 + 1, outcome: .played) },
            upNext: random.next() % 3 == 0 ? playing : nil)
    }
}
