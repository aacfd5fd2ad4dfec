import Foundation
import Testing
import JamProtocol

/// `JSONValue.parse` reads what PirateRadio and QueueIT clients send with its own parser; these
/// prove it reads UTF-8 text as `JSONDecoder` decoding `JSONValue` does, a repeated key apart.
struct JSONValueParserTests {
    private func expectSame(_ text: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        let data = Data(text)
        var repeatedKey = false
        let parsed = data.withUnsafeBytes { JSONValueParser.parse($0, repeatedKey: &repeatedKey) }
        #expect(parsed == JSONValue.parse(data), sourceLocation: sourceLocation)
        // A repeated key is where they differ by design (aRepeatedKeyKeepsItsLastValueAsJSONParseDoes).
        guard !repeatedKey else { return }
        #expect(parsed == JSONValue.decoded(data), "\(String(decoding: text, as: UTF8.self)) \(text)", sourceLocation: sourceLocation)
    }

    @Test func numbersReadAsJSONDecoderReadsThem() {
        let numbers = [
            "0", "-0", "1", "-1", "1.0", "-0.0", "1.5", "-1.5", "0.5", "1e3", "1E+3", "10e-1", "100e-2", "1.5e1", "0.1e1", "0e75",
            "9223372036854775807", "-9223372036854775808", "9223372036854775808", "12345678901234567890",
            "9223372036854775807.0", "-9223372036854775808.0", "9007199254740993.0", "9007199254740993.10", "900719925474099.3e1",
            "90071992547409930e-1", "1.00000000000000000001", "1e18", "1e19", "1e400", "-1e-400", "1e-99999999999999999999",
            "1e99999999999999999999", "01", "-", "1.", ".5", "+1", "1e", "1e+", "--1", "0x10", "NaN", "Infinity",
            "0.99999999999999999", "4503599627370497.5", "9007199254740990.9", "-9223372036854775807.0", "-9007199254740993.9",
            // Found by fuzzing: beyond 2^53, JSONDecoder reads some fractions as whole and not others.
            "1708888888888888888.0888888888888888880000001000", "1708888888888888888.08", "1708888888888888888.00000000000000000000000000001",
            "9007199254740993.1000000000000000000000000000001", "-1708888888888888888.08", "1.708888888888888888e18",
        ]
        for number in numbers { expectSame(Array(number.utf8)) }
    }

    @Test func stringsReadAsJSONDecoderReadsThem() {
        let strings = [
            #""""#, #""plain""#, #""\u00e9""#, #""\ud83d\ude00""#, #""\ud83d""#, #""\ude00""#, #""\ud83dx""#, #""\ud83d\u0041""#,
            #""\x""#, #""\/\\\"\b\f\n\r\t""#, #""\u00""#, #""\uZZZZ""#, #""unterminated"#, "\"é🎵\"", "\"tab\there\"", "\"\u{7F}\"",
        ]
        for string in strings { expectSame(Array(string.utf8)) }
        // Bytes that are not UTF-8 (also after ASCII, and the first byte past it), a control
        // character, an encoded surrogate, an escaped NUL.
        for bytes: [UInt8] in [
            [0x22, 0xFF, 0x22], [0x22, 0xC3, 0x22], [0x22, 0x61, 0x62, 0xFF, 0x22], [0x22, 0x80, 0x22], [0x22, 0x01, 0x22],
            [0x22, 0xED, 0xA0, 0x80, 0x22], Array(#""\u0000""#.utf8),
        ] {
            expectSame(bytes)
        }
    }

    @Test func structureReadsAsJSONDecoderReadsIt() {
        let texts = [
            "[]", "{}", " [ 1 , 2 ] ", "[1,]", "[ 1 , ]", "[,]", "[,1]", "[1,,2]", "{\"a\":1,}", "{\"a\":1 , }", "{,}", "{\"a\":1,,}",
            "{\"a\":}", "{1:2}", "{\"a\" 1}", "{\"a\":{\"b\":[true,false,null]}}", "true", "tru", "nul", "null ",
            "", " ", "[1]x", "[1] [2]", "\u{FEFF}{}", "\u{FEFF}", "{\"a\":1}\u{FEFF}",
        ]
        for text in texts { expectSame(Array(text.utf8)) }
    }

    @Test func aRepeatedKeyKeepsItsLastValueAsJSONParseDoes() {
        #expect(JSONValue.parse(Data(#"{"a":1,"a":2}"#.utf8)) == .object(["a": .integer(2)]))
        #expect(JSONValue.parse(Data(#"{"type":"ping","type":"skip"}"#.utf8)) == .object(["type": .string("skip")]))
        // JSONDecoder keeps the first and never looks at the value it drops, so it reads these; JSON.parse does not.
        for text in [#"{"a":1,"a":01}"#, #"{"a":1,"a":1.2.3}"#, #"{"a":1,"a":"\x"}"#] {
            #expect(JSONValue.parse(Data(text.utf8)) == nil, "\(text)")
            #expect(JSONValue.decoded(Data(text.utf8)) != nil, "\(text)")
        }
    }

    @Test func nestingIsLimitedWhereJSONDecoderLimitsIt() {
        func nested(_ depth: Int) -> (array: Data, object: Data) {
            (Data((String(repeating: "[", count: depth) + String(repeating: "]", count: depth)).utf8),
             Data((String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth)).utf8))
        }
        // JSONDecoder's own limit is 512 levels; reading that deep through it takes seconds,
        // so the comparison runs at a shallower depth.
        expectSame(Array(nested(40).array))
        expectSame(Array(nested(40).object))
        #expect(JSONValue.parse(nested(JSONValueParser.maxDepth).array) != nil)
        #expect(JSONValue.parse(nested(JSONValueParser.maxDepth).object) != nil)
        #expect(JSONValue.parse(nested(JSONValueParser.maxDepth + 1).array) == nil)
        #expect(JSONValue.parse(nested(JSONValueParser.maxDepth + 1).object) == nil)
    }

    @Test func textThatIsNotUTF8IsNotJSON() {
        // UTF-16 and UTF-32, with and without a byte order mark.
        for bytes: [UInt8] in [[0x39, 0x00], [0x00, 0x31], [0xFE, 0xFF, 0x00, 0x31], [0xFF, 0xFE, 0x31, 0x00], [0x31, 0x00, 0x00, 0x00], [0x00]] {
            #expect(JSONValue.parse(Data(bytes)) == nil, "\(bytes)")
        }
    }

    /// A PirateRadio frame, cut, spliced and mutated thousands of ways from one seed.
    @Test func mutatedFramesReadAsJSONDecoderReadsThem() {
        let frame = Array(#"{"type":"addToQueue","data":{"nonce":"n-1","track":{"id":"spotify:track:4uLU6hMC","name":"Caf\u00e9 🎵","durationMs":213573,"explicit":false,"popularity":0.75,"tags":["a",1e2,null]}}}"#.utf8)
        let pieces = ["{", "}", "[", "]", ",", ":", "\"", "\\", "\\u", "d83d", "de00", "0", "1", "-", ".", "e", "+", "true", "null", " ", "é"]
            .map { Array($0.utf8) } + [[0xFF], [0xC3], [0x1F]]
        var random = SeededRandom(seed: 9)
        for _ in 0..<1_000 {
            var bytes = frame
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let at = Int.random(in: 0..<bytes.count, using: &random), piece = pieces.randomElement(using: &random)!
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes.replaceSubrange(at..<min(bytes.count, at + piece.count), with: piece)
                case 1: bytes.removeSubrange(at..<min(bytes.count, at + Int.random(in: 1...4, using: &random)))
                default: bytes.insert(contentsOf: piece, at: at)
                }
            }
            expectSame(bytes)
        }
    }

    @Test func theFrameOfAnAddReadsWhole() {
        let value = JSONValue.parse(Data(#"{"type":"addToQueue","data":{"nonce":"n-1","track":{"id":"t1","durationMs":213573,"explicit":false,"score":0.5,"tags":[null]}}}"#.utf8))
        let track: JSONValue = .object(["id": .string("t1"), "durationMs": .integer(213_573), "explicit": .bool(false), "score": .number(0.5), "tags": .array([.null])])
        #expect(value == .object(["type": .string("addToQueue"), "data": .object(["nonce": .string("n-1"), "track": track])]))
    }
}
