import Foundation
import Testing
import JamProtocol

struct ValidationTests {
    @Test func validTracksPass() throws {
        try Sample.fullTrack.validate()
        try Sample.bareTrack.validate()
        try Track(id: "x", name: "n", artist: "a", durationMs: 24 * 3_600_000).validate()
    }

    @Test func trackLimits() {
        func code(_ track: Track) -> String? {
            do { try track.validate(); return nil } catch { return error.message }
        }
        #expect(code(Track(id: "", name: "n", artist: "a")) == "track.id must not be empty")
        #expect(code(Track(id: "x", name: "", artist: "a")) == "track.name must not be empty")
        #expect(code(Track(id: "x", name: String(repeating: "n", count: 301), artist: "a")) == "track.name must be at most 300 characters, got 301")
        #expect(code(Track(id: "x", name: "bell\u{7}", artist: "a")) == "track.name must not contain control characters")
        #expect(code(Track(id: "x", name: "n", artist: "a", durationMs: 0)) == "track.durationMs must be between 1 ms and 24 hours, got 0")
        #expect(code(Track(id: "x", name: "n", artist: "a", durationMs: -5)) == "track.durationMs must be between 1 ms and 24 hours, got -5")
        #expect(code(Track(id: "x", name: "n", artist: "a", durationMs: 24 * 3_600_000 + 1)) != nil)
        #expect(code(Track(id: "x", name: "n", artist: "a", isrc: String(repeating: "I", count: 33))) != nil)
        #expect(code(Track(id: "x", name: "n", artist: "a", artworkURL: String(repeating: "u", count: 2049))) != nil)
    }

    @Test func aTrackAsSentIsKeptOnlyUnderACompatibilityRuleAndWithinItsSize() throws {
        let kept = Track(id: "x", name: "n", artist: "", asSent: #"{"id":"x","name":"n","explicit":true}"#)
        #expect(throws: JamError.self) { try kept.validate() }
        try kept.validate(requireIdAndName: false)
        let huge = Track(id: "x", name: "n", artist: "", asSent: String(repeating: "x", count: Track.maxAsSentBytes + 1))
        #expect(throws: JamError.self) { try huge.validate(requireIdAndName: false) }
    }

    @Test func displayNamesAreTrimmedAndBounded() throws {
        #expect(try Validate.displayName("  Alice \n") == "Alice")
        #expect(throws: JamError(.invalidField, "displayName must not be empty")) { try Validate.displayName("   ") }
        #expect(try Validate.displayName(String(repeating: "a", count: Validate.maxDisplayName)).count == Validate.maxDisplayName)
        #expect(throws: JamError.self) { try Validate.displayName(String(repeating: "a", count: Validate.maxDisplayName + 1)) }
    }

    struct DisplayNameFixture: Decodable {
        struct Case: Decodable {
            var name: String, before: String?, text: String, times: Int, after: String?
            var characters: Int, utf16Units: Int, bytes: Int, accepted: Bool
            /// The fault besides the length: "direction".
            var problem: String?
        }
        var maxDisplayName: Int, maxBytesPerCharacter: Int, cases: [Case]
    }

    /// Tests/Fixtures/ClientParity/display-names.json, which the web client's checkDisplayName
    /// (js/text-limits.js) passes too (Tests/Browser/test_parity_fixtures.py).
    @Test func displayNamesCountCharactersLikeTheWebClientsSharedCases() throws {
        // #filePath, not bundle resources: the same file the browser test reads.
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/ClientParity/display-names.json")
        let fixture = try JSONDecoder().decode(DisplayNameFixture.self, from: Data(contentsOf: url))
        #expect(fixture.maxDisplayName == Validate.maxDisplayName)
        #expect(fixture.maxBytesPerCharacter == Validate.maxBytesPerCharacter)
        #expect(!fixture.cases.isEmpty)
        for c in fixture.cases {
            let name = (c.before ?? "") + String(repeating: c.text, count: c.times) + (c.after ?? "")
            let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(trimmed.count == c.characters, "\(c.name)")
            #expect(trimmed.utf16.count == c.utf16Units, "\(c.name)")
            #expect(trimmed.utf8.count == c.bytes, "\(c.name)")
            do {
                let kept = try Validate.displayName(name)
                #expect(c.accepted, "\(c.name) was accepted")
                #expect(kept == trimmed, "\(c.name)")
            } catch {
                #expect(!c.accepted, "\(c.name) was refused: \(error.message)")
                let expected = c.problem == "direction"
                    ? "displayName must not contain characters that turn the direction of text (U+202A to U+202E, U+2066 to U+2069): they can make one name read as another"
                    : c.problem == "invisible"
                    ? "displayName must have a character that shows: fillers and zero-width characters alone show no name"
                    : c.characters == 0
                    ? "displayName must not be empty"
                    : c.characters > Validate.maxDisplayName
                    ? "displayName must be at most \(Validate.maxDisplayName) characters, got \(c.characters)"
                    : "displayName must be at most \(Validate.maxDisplayName * Validate.maxBytesPerCharacter) bytes of UTF-8 (accents typed apart and joined emoji count several), got \(c.bytes)"
                #expect(error.message == expected, "\(c.name)")
            }
        }
    }

    @Test func votesAreMinusOneZeroOrOne() throws {
        for value in -1...1 { try Validate.vote(value) }
        for value in [-2, 2, 100, Int.min] { #expect(throws: JamError.self) { try Validate.vote(value) } }
    }

    @Test func settingsPatchAppliesOnlyPresentFields() {
        let base = SessionSettings()
        let patched = SettingsPatch(locked: true, ordering: .fair).applied(to: base)
        var expected = base
        expected.locked = true
        expected.ordering = .fair
        #expect(patched == expected)
        #expect(SettingsPatch().applied(to: Sample.settings) == Sample.settings)
        let everything = SettingsPatch(
            locked: false, skipThreshold: 0.2, maxMembers: 3, maxQueuedPerMember: 2, allowDuplicates: false,
            ordering: .votes, fallback: false).applied(to: Sample.settings)
        #expect(everything == SessionSettings(locked: false, skipThreshold: 0.2, maxMembers: 3, maxQueuedPerMember: 2))
    }

    @Test func settingsPatchEmptiness() {
        #expect(SettingsPatch().isEmpty)
        #expect(!SettingsPatch(fallback: false).isEmpty)
    }

    @Test func settingsPatchRanges() throws {
        try SettingsPatch(skipThreshold: 1, maxMembers: SessionSettings.memberLimit, maxQueuedPerMember: SessionSettings.queueLimit).validate()
        try SettingsPatch(skipThreshold: 0.01, maxMembers: 1, maxQueuedPerMember: 1).validate()
        #expect(throws: JamError.self) { try SettingsPatch(skipThreshold: .nan).validate() }
        #expect(throws: JamError.self) { try SettingsPatch(skipThreshold: .infinity).validate() }
        #expect(throws: JamError.self) { try SettingsPatch(skipThreshold: 0).validate() }
    }

    @Test func defaultSettingsMatchTheDesign() {
        let settings = SessionSettings()
        #expect(settings.locked == false)
        #expect(settings.skipThreshold == 0.5)
        #expect(settings.allowDuplicates == false)
        #expect(settings.ordering == .votes)
        #expect(settings.fallback == false)
    }

    @Test func wireVocabularyOfEnums() {
        #expect(TrackSource.allCases.map(\.rawValue) == ["library", "spotify", "appleMusic", "external"])
        #expect(Role.allCases.map(\.rawValue) == ["host", "cohost", "member"])
        #expect(QueueOrdering.allCases.map(\.rawValue) == ["votes", "fair"])
        #expect(PlaybackState.allCases.map(\.rawValue) == ["preparing", "playing", "paused"])
        #expect(HistoryOutcome.allCases.map(\.rawValue) == ["played", "skipped", "removed"])
    }

    @Test func onlyHostsAndCohostsHaveHostControls() {
        #expect(Role.host.hasHostControls)
        #expect(Role.cohost.hasHostControls)
        #expect(!Role.member.hasHostControls)
    }

    @Test func trackSourceDefaultsToExternal() {
        #expect(Track(id: "x", name: "n", artist: "a").source == .external)
    }
}

struct NowPlayingPositionTests {
    let item = QueueItem(id: Sample.itemA, track: Track(id: "t", name: "n", artist: "a", durationMs: 10_000), addedBy: Sample.host, addedAt: 0, score: 0, reason: "")

    @Test func playingPositionAdvancesWithServerTime() {
        let now = NowPlaying(item: item, epoch: 1, state: .playing, positionMs: 2_000, anchorMs: 1_000)
        #expect(now.position(at: 1_000) == 2_000)
        #expect(now.position(at: 1_500) == 2_500)
        #expect(now.position(at: 500) == 2_000)
        #expect(now.position(at: 100_000) == 10_000)
    }

    @Test func positionNeverReadsBeforeTheStartOfTheTrack() {
        // The server's CurrentItem and the client's PlaybackTimeline clamp at 0; the view must agree with them.
        let now = NowPlaying(item: item, epoch: 1, state: .paused, positionMs: -40, anchorMs: 1_000)
        #expect(now.position(at: 2_000) == 0)
    }

    @Test func theOneRuleWorksInWholeAndFractionalMilliseconds() {
        #expect(PlaybackPosition.at(Int64(1_500), state: .playing, positionMs: 2_000, anchorMs: 1_000, durationMs: nil) == 2_500)
        #expect(PlaybackPosition.at(1_000.25, state: .playing, positionMs: 0.5, anchorMs: 1_000, durationMs: 0.6) == 0.6)
    }

    @Test func pausedAndPreparingPositionsHold() {
        for state in [PlaybackState.paused, .preparing] {
            let now = NowPlaying(item: item, epoch: 1, state: state, positionMs: 3_000, anchorMs: 1_000)
            #expect(now.position(at: 9_000) == 3_000)
        }
    }

    @Test func positionWithoutDurationIsUnbounded() {
        var open = item
        open.track.durationMs = nil
        let now = NowPlaying(item: open, epoch: 1, state: .playing, positionMs: 0, anchorMs: 0)
        #expect(now.position(at: 50_000_000) == 50_000_000)
    }
}
