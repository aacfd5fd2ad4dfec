import Foundation
import Testing
import JamProtocol

/// Votes, removals and adds are read without `JSONDecoder` when they read without ambiguity; these
/// prove the frame (or the error) is always the one `JSONDecoder` gives.
struct ClientFrameQuickReadTests {
    private static func quick(_ text: String) -> ClientFrame? {
        Data(text.utf8).withUnsafeBytes { ClientFrame.quickRead($0) }
    }

    /// The frame as `JSONDecoder` alone reads it, validated: the rule the quick read must match.
    private static func viaJSONDecoder(_ text: String) -> Result<ClientFrame, JamError> {
        do throws(JamError) {
            let frame = try WireCoding.decode(ClientFrame.self, from: Data(text.utf8))
            try frame.command.validate()
            return .success(frame)
        } catch {
            return .failure(error)
        }
    }

    private static func decoded(_ text: String) -> Result<ClientFrame, JamError> {
        do throws(JamError) {
            return .success(try ClientFrame.decode(Data(text.utf8)))
        } catch {
            return .failure(error)
        }
    }

    private func expectSame(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let expected = Self.viaJSONDecoder(text)
        #expect(Self.decoded(text) == expected, "\(text)", sourceLocation: sourceLocation)
        // Whatever the quick read takes, JSONDecoder reads the same way (validation aside).
        if let quick = Self.quick(text) {
            // A frame JSONDecoder refuses reads as nil here, and fails the comparison.
            let plain = try? WireCoding.decode(ClientFrame.self, from: Data(text.utf8))
            #expect(plain == quick, "\(text)", sourceLocation: sourceLocation)
        }
    }

    @Test func votesRemovalsAndAddsAreReadWithoutJSONDecoder() {
        #expect(Self.quick(#"{"type":"vote","data":{"itemId":"i1","value":1},"id":"c1"}"#)
            == ClientFrame(.vote(Vote(itemId: "i1", value: 1)), id: "c1"))
        #expect(Self.quick(#"{"id":"c2","data":{"value":-1,"itemId":"i2"},"type":"vote"}"#)
            == ClientFrame(.vote(Vote(itemId: "i2", value: -1)), id: "c2"))
        #expect(Self.quick(#"{"type":"removeFromQueue","data":{"itemId":"i3"}}"#) == ClientFrame(.removeFromQueue(ItemRef(itemId: "i3"))))
        // IDs normalise as they do through Decodable.
        #expect(Self.quick(#"{"type":"vote","data":{"itemId":"6BA7B810-9DAD-11D1-80B4-00C04FD430C8","value":0}}"#)
            == ClientFrame(.vote(Vote(itemId: "6ba7b810-9dad-11d1-80b4-00c04fd430c8", value: 0))))
        #expect(Self.quick(#"{"type":"addToQueue","data":{"track":{"id":"t1","name":"Song","artist":"A","source":"library"},"nonce":"n1"},"id":"c3"}"#)
            == ClientFrame(.addToQueue(AddToQueue(track: Track(id: "t1", name: "Song", artist: "A", source: .library), nonce: "n1")), id: "c3"))
        let full = #"{"id":"t2","name":"Sóng","artist":"B","album":"LP","durationMs":215000,"artworkURL":"https://x/y.jpg","isrc":"USX","source":"spotify"}"#
        #expect(Self.quick(#"{"data":{"nonce":"n2","track":\#(full)},"type":"addToQueue"}"#)
            == ClientFrame(.addToQueue(AddToQueue(
                track: Track(
                    id: "t2", name: "Sóng", artist: "B", album: "LP", durationMs: 215_000, artworkURL: "https://x/y.jpg", isrc: "USX",
                    source: .spotify),
                nonce: "n2"))))
    }

    @Test func anythingUnusualIsLeftToJSONDecoder() {
        for text in [
            #"{"type":"vote","data":{"itemId":"i","value":1},"type":"vote"}"#,  // a repeated key
            #"{"type":"vote","data":{"itemId":"i","value":1.5}}"#,
            #"{"type":"vote","data":{"itemId":"i","value":"1"}}"#,
            #"{"type":"vote","data":{"itemId":"i","value":null}}"#,
            #"{"type":"vote","data":{"itemId":"","value":1}}"#,
            #"{"type":"vote","data":{"itemId":"i","value":1},"id":null}"#,
            #"{"type":"vote","data":{"itemId":"i","value":1},"id":""}"#,
            #"{"type":"vote","data":{"itemId":"\#(String(repeating: "x", count: 129))","value":1}}"#,
            #"{"type":"vote","data":{"itemId":"i","value":1},"id":"\#(String(repeating: "x", count: 129))"}"#,
            #"{"type":"skip"}"#, #"{"type":"ping","data":{"clientSendTime":1}}"#, #"{"type":"vote"}"#, "[]", "nope",
            #"{"type":"addToQueue","data":{"track":{"id":"t","name":"n","artist":"a","source":"library","album":null},"nonce":"n"}}"#,
            #"{"type":"addToQueue","data":{"track":{"id":"t","name":"n","artist":"a","source":"library","durationMs":1.5},"nonce":"n"}}"#,
            #"{"type":"addToQueue","data":{"track":{"id":"t","name":"n","artist":"a","source":"library","durationMs":"5"},"nonce":"n"}}"#,
            #"{"type":"addToQueue","data":{"track":{"id":"t","name":"n","artist":"a","source":"library","durationMs":null},"nonce":"n"}}"#,
            #"{"type":"addToQueue","data":{"track":{"id":"t","name":"n","artist":"a","source":"vinyl"},"nonce":"n"}}"#,
            #"{"type":"addToQueue","data":{"track":{"id":"t","name":"n","artist":"a"},"nonce":"n"}}"#,
            #"{"type":"addToQueue","data":{"track":{"id":"t","name":"n","artist":"a","source":"library"},"nonce":5}}"#,
            #"{"type":"addToQueue","data":{"track":{"id":"t","name":"n","artist":"a","source":"library"}}}"#,
            #"{"type":"addToQueue","data":{"track":"t","nonce":"n"}}"#,
            #"{"type":"addToQueue","data":{"track":{"id":"t","id":"u","name":"n","artist":"a","source":"library"},"nonce":"n"}}"#,
            #"{"type":"addToQueue","data":{"track":{"id":"t","name":"n","n\u0061me":"m","artist":"a","source":"library"},"nonce":"n"}}"#,
            #"{"type":"addToQueue","data":{"track":null,"nonce":"n"}}"#,
            #"{"type":"addToQueue","data":{"track":{"id":null,"name":"n","artist":"a","source":"library"},"nonce":"n"}}"#,
        ] {
            #expect(Self.quick(text) == nil, "\(text)")
            expectSame(text)
        }
    }

    @Test func everyShapeReadsAsJSONDecoderReadsIt() {
        let long = String(repeating: "y", count: 128)
        for text in [
            #"{"type":"vote","data":{"itemId":"i","value":1}}"#,
            #"{"type":"vote","data":{"itemId":"i","value":2}}"#,  // refused by validation, alike
            #"{"type":"vote","data":{"itemId":"i","value":1.0}}"#,
            #"{"type":"vote","data":{"itemId":"i","value":1e0}}"#,
            #"{"type":"vote","data":{"itemId":"i","value":-0}}"#,
            #"{"type":"vote","data":{"itemId":"i","value":9223372036854775807}}"#,
            #"{"type":"vote","data":{"itemId":"i","value":9223372036854775808}}"#,
            #"{"type":"vote","data":{"itemId":"\u00e9\n","value":-1},"id":"\ud83c\udfb5"}"#,
            #"{"type":"vote","data":{"itemId":"\#(long)","value":1},"id":"\#(long)"}"#,
            #"{"type":"vote","data":{"itemId":"i","value":1,"extra":[1,{"a":null}]},"more":true}"#,
            #" {"type" : "vote" , "data" : { "itemId" : "i" , "value" : -1 } } "#,
            "\u{FEFF}{\"type\":\"vote\",\"data\":{\"itemId\":\"i\",\"value\":1}}",
            #"{"type":"vote","data":{"itemId":7,"value":1}}"#,
            #"{"type":"vote","data":[]}"#,
            #"{"type":"vote","data":{"itemId":"i","value":1},"id":5}"#,
            #"{"type":"removeFromQueue","data":{"itemId":"i","itemId":"j"}}"#,
            #"{"type":"removeFromQueue","data":{"itemId":null}}"#,
            #"{"type":"removeFromQueue","data":{}}"#,
            #"{"type":"Vote","data":{"itemId":"i","value":1}}"#,
            #"{"type":"vote","data":{"itemId":"i","value":1}"#,
            #"{"type":"addToQueue","data":{"track":{"id":"t","name":"n","artist":"a","source":"library","durationMs":1e3},"nonce":"n"}}"#,
            #"{"type":"addToQueue","data":{"track":{"id":"t","name":"n","artist":"a","source":"library","durationMs":1000.0},"nonce":"n"}}"#,
            #"{"type":"addToQueue","data":{"track":{"id":"t","name":"n","artist":"a","source":"library","durationMs":-5},"nonce":"n"}}"#,
            #"{"type":"addToQueue","data":{"track":{"id":"t","name":"n","artist":"a","source":"library","durationMs":9223372036854775808},"nonce":"n"}}"#,
            #"{"type":"addToQueue","data":{"track":{"id":"","name":"n","artist":"a","source":"library"},"nonce":"n"}}"#,
            #"{"type":"addToQueue","data":{"track":{"id":"t","name":"n","artist":"a","source":"library"},"nonce":""}}"#,
            #"{"type":"addToQueue","data":{"track":{"id":"t","name":"n","artist":"a","source":"library","asSent":"{}"},"nonce":"n"}}"#,
            #"{"type":"addToQueue","data":{"track":{"id":"t","name":"\u0007","artist":"a","source":"library"},"nonce":"n"}}"#,
            #"{"type":"addToQueue","data":{"track":{"id":"t","name":"n","artist":"a","source":"library","extra":{"k":[1]}},"nonce":"n","x":1}}"#,
            #"{"type":"addToQueue","data":{"track":{"id":"t","name":"\#(String(repeating: "é", count: 301))","artist":"a","source":"library"},"nonce":"n"}}"#,
        ] {
            expectSame(text)
        }
    }

    @Test func seededRandomAddsReadAsJSONDecoderReadsThem() {
        var random = SeededRandom(seed: 11)
        let strings = [#""x""#, #""""#, "null", "7", #""\u00e9\t""#, #""\#(String(repeating: "s", count: 301))""#, "true"]
        let durations = ["215000", "null", "-1", "0", "1.0", "1e3", "1.5", #""1000""#, "86400001", "9223372036854775808"]
        let sources = [#""library""#, #""spotify""#, #""appleMusic""#, #""external""#, #""Library""#, "null", "3"]
        func pick<T>(_ choices: [T]) -> T { Bool.random(using: &random) ? choices[0] : choices.randomElement(using: &random)! }
        var quickOnes = 0
        for _ in 0..<3_000 {
            var track: [String] = []
            for key in ["id", "name", "artist"] where Int.random(in: 0..<10, using: &random) > 0 { track.append(#""\#(key)":\#(pick(strings))"#) }
            for key in ["album", "artworkURL", "isrc", "asSent"] where Bool.random(using: &random) { track.append(#""\#(key)":\#(pick(strings))"#) }
            if Bool.random(using: &random) { track.append(#""durationMs":\#(pick(durations))"#) }
            if Int.random(in: 0..<10, using: &random) > 0 { track.append(#""source":\#(pick(sources))"#) }
            if Int.random(in: 0..<8, using: &random) == 0 { track.append(#""name":"again""#) }
            track.shuffle(using: &random)
            var data = [#""track":{\#(track.joined(separator: ","))}"#]
            if Int.random(in: 0..<10, using: &random) > 0 { data.append(#""nonce":\#(pick(strings))"#) }
            data.shuffle(using: &random)
            let text = #"{"type":"addToQueue","data":{\#(data.joined(separator: ","))},"id":"c"}"#
            if Self.quick(text) != nil { quickOnes += 1 }
            expectSame(text)
        }
        #expect(quickOnes > 200)
    }

    @Test func seededRandomFramesReadAsJSONDecoderReadsThem() {
        var random = SeededRandom(seed: 9)
        let types = [#""vote""#, #""removeFromQueue""#, #""skip""#, #""ready""#, "7", "null", #""vote ""#]
        let ids = [#""c""#, nil, #""""#, "null", "12", #""\#(String(repeating: "z", count: 128))""#, #""\#(String(repeating: "z", count: 129))""#]
        let itemIds = [
            #""a""#, #""""#, "null", "3", #""A7F3B1C2-0D4E-4F5A-8B6C-7D8E9F0A1B2C""#, #""\u0041\t""#, #""\#(String(repeating: "q", count: 129))""#,
        ]
        let values = ["1", "-1", "0", "2", "1.0", "1e0", "1.5", #""1""#, "null", "-0", "9223372036854775808", "0.99999999999999999", "true"]
        // Half the time the first, plain choice: so a good share of frames is one the quick read takes.
        func pick<T>(_ choices: [T]) -> T { Bool.random(using: &random) ? choices[0] : choices.randomElement(using: &random)! }
        var quickOnes = 0
        for _ in 0..<3_000 {
            var data: [String] = []
            if Int.random(in: 0..<8, using: &random) > 0 { data.append(#""itemId":\#(pick(itemIds))"#) }
            if Int.random(in: 0..<8, using: &random) > 0 { data.append(#""value":\#(pick(values))"#) }
            if Int.random(in: 0..<6, using: &random) == 0 { data.append(#""value":1"#) }
            if Int.random(in: 0..<6, using: &random) == 0 { data.append(#""other":{"x":[1,2]}"#) }
            data.shuffle(using: &random)
            var fields = [#""type":\#(pick(types))"#, #""data":{\#(data.joined(separator: ","))}"#]
            if let id = pick(ids) { fields.append(#""id":\#(id)"#) }
            fields.shuffle(using: &random)
            let text = "{\(fields.joined(separator: ","))}"
            if Self.quick(text) != nil { quickOnes += 1 }
            expectSame(text)
        }
        // The quick read does take a good share of them, so the comparison above means something.
        #expect(quickOnes > 400)
    }
}
