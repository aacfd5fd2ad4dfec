import Foundation
@testable import JamPirateRadioWire
import Testing

/// The profile reads client JSON as PirateRadio's server (JavaScript) does.
struct PirateRadioValueTests {
    static func value(_ text: String) throws -> PirateRadio.Value {
        try #require(PirateRadio.Value.parse(Data(text.utf8)), "\(text) should parse")
    }

    @Test("Truthiness is JavaScript's: null, false, 0 and \"\" are absent; everything else is present")
    func truthinessIsJavaScripts() throws {
        for falsy in ["null", "false", "0", "0.0", "\"\""] {
            #expect(try Self.value(falsy).isTruthy == false, "\(falsy)")
        }
        for truthy in ["true", "1", "-1", "0.5", "\"0\"", "[]", "{}", "1e300"] {
            #expect(try Self.value(truthy).isTruthy == true, "\(truthy)")
        }
    }

    @Test("Values are written back with their kinds kept: true stays true, 1 stays 1, keys sorted")
    func valuesAreWrittenBackAsSent() throws {
        let text = #"{"b":true,"a":1,"c":[null,"x",1.5,{"z":false}],"d":12345678901234}"#
        #expect(PirateRadio.json(try Self.value(text)) == #"{"a":1,"b":true,"c":[null,"x",1.5,{"z":false}],"d":12345678901234}"#)
    }

    @Test("Text that is not JSON reads as nothing, so the profile ignores it")
    func notJSONIsNothing() {
        #expect(PirateRadio.Value.parse(Data("not json".utf8)) == nil)
    }

    @Test("A track auto-advances only with a duration above 0 and up to 30 minutes, as its server's timer allows")
    func autoAdvanceDurationIsWithinThirtyMinutes() throws {
        let cases: [(String, Int64?)] = [
            ("180000", 180_000), ("\"180000\"", 180_000), ("0.4", 1), ("1800000", 1_800_000),
            ("1800001", nil), ("3600000", nil), ("0", nil), ("-5", nil), ("null", nil), ("true", nil),
        ]
        for (duration, expected) in cases {
            guard case .object(let track) = try Self.value(#"{"id":"spotify:track:1","durationMs":\#(duration)}"#) else {
                Issue.record("not an object"); continue
            }
            #expect(PirateRadio.ClientMessage.openJamTrack(track, id: nil).durationMs == expected, "durationMs \(duration)")
        }
    }

    @Test("A track's text is made fit for the session's own copy, and its id kept as sent")
    func trackTextIsMadeFit() throws {
        let long = String(repeating: "x", count: 400)
        guard case .object(let track) = try Self.value(
            #"{"id":"spotify:track:1","name":" Line\none ","artist":"\#(long)","albumName":"A\tB","albumArtURL":"https://i.example/a\nb.jpg"}"#)
        else { Issue.record("not an object"); return }
        let fit = PirateRadio.ClientMessage.openJamTrack(track, id: nil)
        #expect(fit.id == "spotify:track:1")
        #expect(fit.name == "Line one")
        #expect(fit.artist == String(repeating: "x", count: 300))
        #expect(fit.album == "A B")
        #expect(fit.artworkURL == nil)
        #expect(throws: Never.self) { try fit.validate(requireIdAndName: false) }
    }
}
