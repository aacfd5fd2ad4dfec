import Foundation
import JamProtocol
import Testing

@testable import JamCore

/// A name must show: one made only of fillers (U+3164), zero-width or other format characters,
/// or the blank braille pattern would list a member as nobody, and let them pass for any
/// other blank name. Names such a join carried before the rule replay as they were taken.
struct InvisibleNameTests {
    static let refusal = "displayName must have a character that shows: fillers and zero-width characters alone show no name"

    @Test func aNameThatShowsNothingIsRefusedAndNobodyJoins() throws {
        var jam = try Jam()
        let before = jam.state
        for name in ["\u{3164}", "\u{FEFF}", "\u{2800}\u{2800}", "\u{115F}\u{1160}", "\u{FFA0}", "\u{2060}\u{3164}", "\u{200D}"] {
            jam.reject(.join(displayName: name), by: carol, .invalidField)
            #expect(TextBytesTests.refusal(jam, .join(displayName: name), by: carol)?.message == Self.refusal, "\(name.unicodeScalars.map(\.value))")
        }
        #expect(jam.state == before)
        #expect(jam.state.member(carol) == nil)
    }

    @Test func aMemberCannotRenameThemselvesToNothing() throws {
        var jam = try Jam()
        try jam.apply(.join(displayName: "Carol"), by: carol)
        jam.reject(.join(displayName: "\u{3164}"), by: carol, .invalidField)
        #expect(jam.state.member(carol)?.displayName == "Carol")
    }

    @Test func aNameWithALetterOrAMarkAmongFillersIsTaken() throws {
        var jam = try Jam()
        try jam.apply(.join(displayName: "\u{3164}Carol\u{3164}"), by: carol)
        #expect(jam.state.member(carol)?.displayName == "\u{3164}Carol\u{3164}")
        try jam.apply(.join(displayName: "·"), by: carol)
        #expect(jam.state.member(carol)?.displayName == "·")
    }

    @Test func aLoggedJoinWithSuchANameReplaysAsItWasTaken() throws {
        // A release before the rule took and logged this join.
        var jam = try Jam()
        let logged = TimedInput(at: jam.now, .command(.join(displayName: "\u{3164}"), by: carol))
        #expect(throws: JamError.self) { _ = try jam.state.apply(logged) }
        _ = try jam.state.applyLogged(logged)
        #expect(jam.state.member(carol)?.displayName == "\u{3164}")
        jam.reject(.join(displayName: "\u{FEFF}"), by: carol, .invalidField)
    }
}
