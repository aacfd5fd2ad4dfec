import Foundation
import JamProtocol
import Testing

@testable import JamCore

/// A name may not hold a character that turns the direction of text ("\u{202E}ecila" shows as
/// "alice"), so no member passes for another; names such a join carried before the rule
/// replay as they were taken.
struct DirectionControlTests {
    static let refusal =
        "displayName must not contain characters that turn the direction of text (U+202A to U+202E, U+2066 to U+2069): they can make one name read as another"

    @Test func aNameThatTurnsTheDirectionOfTextIsRefusedAndNobodyJoins() throws {
        var jam = try Jam()
        let before = jam.state
        for name in ["\u{202E}ecila", "\u{2067}Bob\u{2069}", "Carol\u{202A}", "\u{2066}Dan"] {
            jam.reject(.join(displayName: name), by: carol, .invalidField)
            #expect(TextBytesTests.refusal(jam, .join(displayName: name), by: carol)?.message == Self.refusal)
        }
        #expect(jam.state == before)
        #expect(jam.state.member(carol) == nil)
    }

    @Test func aMemberCannotRenameThemselvesWithSuchACharacter() throws {
        var jam = try Jam()
        try jam.apply(.join(displayName: "Carol"), by: carol)
        jam.reject(.join(displayName: "\u{202E}ecila"), by: carol, .invalidField)
        #expect(jam.state.member(carol)?.displayName == "Carol")
    }

    @Test func rightToLeftLettersAndMarksAreTaken() throws {
        var jam = try Jam()
        try jam.apply(.join(displayName: "שירה\u{200F}"), by: carol)
        #expect(jam.state.member(carol)?.displayName == "שירה\u{200F}")
    }

    @Test func sessionsStoredBeforeTheRuleRefuseSuchNamesInNewJoins() throws {
        // Rules as a session stored before the rule existed reads them.
        let stored = try JSONDecoder().decode(SessionRules.self, from: Data(#"{"startMode":"scheduled","maxQueueLength":1000}"#.utf8))
        #expect(stored.refusesMisleadingNames)
        var jam = try Jam(rules: stored)
        jam.reject(.join(displayName: "\u{202E}ecila"), by: carol, .invalidField)
        // Never stored: the rule holds for every session, whatever a snapshot says.
        let encoded = String(decoding: try JSONEncoder().encode(SessionRules.openJam), as: UTF8.self)
        #expect(!encoded.contains("refusesMisleadingNames"), "\(encoded)")
    }

    @Test func aLoggedJoinWithSuchANameReplaysAsItWasTaken() throws {
        // A release before the rule took and logged this join.
        var jam = try Jam()
        let logged = TimedInput(at: jam.now, .command(.join(displayName: "\u{202E}ecila"), by: carol))
        #expect(throws: JamError.self) { _ = try jam.state.apply(logged) }
        _ = try jam.state.applyLogged(logged)
        #expect(jam.state.member(carol)?.displayName == "\u{202E}ecila")
        #expect(jam.state.rules.refusesMisleadingNames, "new joins keep the rule")
        jam.reject(.join(displayName: "\u{202E}nairo"), by: carol, .invalidField)
    }
}
