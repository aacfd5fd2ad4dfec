import Foundation
import JamProtocol
import Testing

@testable import JamCore

/// A character can be many code points: names and track texts are held to a number of bytes
/// as well as of characters, in sessions made since the rule, and not in those stored before.
struct TextBytesTests {
    /// One letter under `marks` combining acute accents: one character, 1 + 2 × marks bytes.
    static func stacked(_ marks: Int) -> String { "a" + String(repeating: "\u{0301}", count: marks) }

    /// The refusal `command` gets, applied to a copy.
    static func refusal(_ jam: Jam, _ command: Command, by user: UserID) -> JamError? {
        var copy = jam.state
        do {
            _ = try copy.apply(command, by: user, at: jam.now)
            return nil
        } catch {
            return error
        }
    }

    @Test func aTrackNameOfOneCharacterButThousandsOfBytesIsRefusedAndNothingIsQueued() throws {
        var jam = try Jam()
        var heavy = track(1)
        heavy.name = Self.stacked(2_000)
        #expect(heavy.name.count == 1)
        let add = Command.add(track: heavy, nonce: "n-1", itemId: itemID(1))
        jam.reject(add, by: alice, .invalidField)
        #expect(Self.refusal(jam, add, by: alice)?.message == "track.name must be at most 2400 bytes of UTF-8 (accents typed apart and joined emoji count several), got 4001")
        #expect(jam.state.queue.isEmpty && jam.state.current == nil)
    }

    @Test func aDisplayNameOfOneCharacterButThousandsOfBytesIsRefused() throws {
        var jam = try Jam()
        jam.reject(.join(displayName: Self.stacked(300)), by: carol, .invalidField)
        #expect(Self.refusal(jam, .join(displayName: Self.stacked(300)), by: carol)?.message == "displayName must be at most 512 bytes of UTF-8 (accents typed apart and joined emoji count several), got 601")
        #expect(jam.state.member(carol) == nil)
    }

    @Test func textAtTheLimitInAnyScriptIsTaken() throws {
        var jam = try Jam()
        // 300 characters of four bytes each, and 300 flags of eight: the most a field takes.
        var wide = track(1)
        wide.name = String(repeating: "😀", count: 300)
        wide.artist = String(repeating: "🇫🇷", count: 300)
        try jam.apply(.add(track: wide, nonce: "n-1", itemId: itemID(1)), by: alice)
        try jam.apply(.join(displayName: String(repeating: "e\u{0301}", count: 64)), by: carol)
    }

    @Test func sessionsStoredBeforeTheRuleReplayTheirHeavyTextAsTheyTookIt() throws {
        // Rules as a session stored before the rule existed reads them.
        let stored = try JSONDecoder().decode(SessionRules.self, from: Data(#"{"startMode":"scheduled","maxQueueLength":1000}"#.utf8))
        #expect(stored.capsTextBytes == false)
        #expect(SessionRules.openJam.capsTextBytes)
        var jam = try Jam(rules: stored)
        var heavy = track(1)
        heavy.name = Self.stacked(2_000)
        try jam.apply(.add(track: heavy, nonce: "n-1", itemId: itemID(1)), by: alice)
        try jam.apply(.join(displayName: Self.stacked(300)), by: carol)
    }

    @Test func aLoggedAddReplaysWithoutTheByteCapAnOlderNodeDidNotHave() throws {
        // A node of an older release, owning a session made by a newer one, logged this add.
        var jam = try Jam()
        var heavy = track(1)
        heavy.name = Self.stacked(2_000)
        let logged = TimedInput(at: jam.now, .command(.add(track: heavy, nonce: "n-1", itemId: itemID(1)), by: alice))
        #expect(throws: JamError.self) { _ = try jam.state.apply(logged) }
        _ = try jam.state.applyLogged(logged)
        #expect(jam.state.current?.item.track.name == heavy.name)
        #expect(jam.state.rules.capsTextBytes, "new commands keep the cap")
    }

    @Test func libraryTagsAreCutToTheBytesAsWellAsTheCharacters() {
        let cut = Validate.displayable(String(repeating: Self.stacked(20), count: 300), max: Track.maxTextLength)
        #expect(cut.utf8.count <= Track.maxTextLength * Validate.maxBytesPerCharacter)
        #expect(cut.count > 0)
        #expect(Validate.displayable(String(repeating: "é", count: 400), max: 300).count == 300)
    }
}
