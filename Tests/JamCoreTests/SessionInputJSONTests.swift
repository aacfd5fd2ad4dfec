import Foundation
import JamCore
import JamProtocol
import Testing

/// The log writes inputs with `JSONWriter`; these prove it writes what the `Codable`
/// definition (sorted keys) writes, so `JSONDecoder` reads every stored input back.
struct SessionInputJSONTests {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// One of every command, with every optional field both ways.
    static let everyCommand: [Command] = [
        .join(displayName: "Zoë \"Z\" / z"), .leave, .connect, .disconnect,
        .add(track: track(1), nonce: "n-1", itemId: itemID(1)),
        .add(track: Track(id: "x", name: "Bare", artist: "", source: .spotify), nonce: "n\n2", itemId: itemID(2)),
        .add(track: Track(id: "lib", name: "Full", artist: "A", album: "Al", durationMs: 5, artworkURL: "https://a/b", isrc: "I", source: .library), nonce: "n", itemId: itemID(3)),
        .remove(itemId: itemID(4)), .vote(itemId: itemID(5), value: -1), .skip, .requestSkip, .withdrawSkipRequest, .finish, .play,
        .pause, .resume,
        .seek(positionMs: 12_345), .ready(epoch: 7),
        .syncReport(SyncReport(epoch: 3, offsetMs: -1.25, errorMs: 0.5, driftMs: 1e-7)),
        .syncReport(SyncReport(
            epoch: 4, offsetMs: 2, errorMs: 0.5, driftMs: -1.5, deviceId: "phone-1", outputLatencyMs: 150, delayMs: -20.5, clockDriftPpm: 12.25,
            playing: true, canListen: false)),
        .updateSettings(SettingsPatch()),
        .updateSettings(SettingsPatch(locked: true, skipThreshold: 0.75, maxMembers: 9, maxQueuedPerMember: 4, allowDuplicates: false, ordering: .fair, fallback: true, addCooldownSeconds: 90)),
        .setRole(userId: alice, role: .cohost), .kick(userId: bob), .setJoinCode("K7PQ2X"), .end,
        .djPrepare(track: track(6), itemId: itemID(6)),
        .djTimeline(.commit(positionMs: 0, at: 10)), .djTimeline(.pause(positionMs: 1, at: 11)),
        .djTimeline(.resume(positionMs: 2, at: 12)), .djTimeline(.seek(positionMs: 3, at: 13)),
        .all([.skip, .setJoinCode("ABC"), .updateSettings(SettingsPatch(locked: false))]), .all([]),
        .whileCurrent(epoch: 4, command: .skip), .whileCurrent(epoch: 5, command: .seek(positionMs: 60_000)),
    ]

    static func expectSameBytes(_ inputs: [TimedInput], sourceLocation: SourceLocation = #_sourceLocation) throws {
        var writer = JSONWriter()
        writer.array(inputs)
        let written = String(decoding: writer.bytes, as: UTF8.self)
        let expected = String(decoding: try encoder.encode(inputs), as: UTF8.self)
        #expect(written == expected, sourceLocation: sourceLocation)
        #expect(try JSONDecoder().decode([TimedInput].self, from: Data(writer.bytes)) == inputs, sourceLocation: sourceLocation)
    }

    @Test func everyCommandIsWrittenAsItsCodableFormWritesIt() throws {
        for command in Self.everyCommand {
            try Self.expectSameBytes([TimedInput(at: Jam.t0, .command(command, by: host))])
        }
    }

    @Test func everyOtherInputIsWrittenAsItsCodableFormWritesIt() throws {
        try Self.expectSameBytes([
            TimedInput(at: 1, .advance), TimedInput(at: 2, .supplyFallback([track(1), track(2)])), TimedInput(at: 3, .supplyFallback([])),
            TimedInput(at: 4, .restart(Timing(minLeadMs: 1, maxLeadMs: 2, prepareAheadMs: 3, commitMarginMs: 4))),
            TimedInput(at: 5, .idleEnd),
            TimedInput(at: 5, .keepFallback(["only"])), TimedInput(at: 6, .keepFallback([])),
        ])
    }

    @Test func aSetOfTrackIdsComesBackWhateverItsOrder() throws {
        let input = TimedInput(at: 1, .keepFallback(["c", "a", "b"]))
        var writer = JSONWriter()
        writer.array([input])
        #expect(try JSONDecoder().decode([TimedInput].self, from: Data(writer.bytes)) == [input])
    }

    @Test(arguments: 1...4)
    func seededRunsOfTheSimulationAreWrittenAsTheirCodableFormsWriteThem(_ seed: Int) throws {
        let run = try SessionInputReplayTests.record(seed: UInt64(seed) &* 2_654_435_761, steps: 300)
        let ordered = run.inputs.filter { if case .keepFallback(let ids) = $0.input { ids.count < 2 } else { true } }
        try Self.expectSameBytes(ordered)
    }
}
