import Foundation
import Testing
import JamProtocol

/// Every frame that cannot be used produces a typed error: never a silent drop.
struct FrameErrorTests {
    @Test func unknownTypeIsTyped() {
        #expect(frameError(#"{"type":"dance","data":{}}"#) == JamError(.unknownType, #"unknown type "dance""#))
        #expect(frameError(#"{"type":"Vote","data":{"itemId":"a","value":1}}"#)?.code == .unknownType)
        #expect(frameError(#"{"type":""}"#)?.code == .unknownType)
    }

    @Test func unknownTypeMessageIsBounded() throws {
        let long = String(repeating: "x", count: 5000)
        let error = try #require(frameError(#"{"type":"\#(long)"}"#))
        #expect(error.code == .unknownType)
        #expect(error.message.count < 100)
    }

    @Test func notJSONIsMalformed() {
        #expect(frameError("hello") == JamError(.malformed, "not valid JSON"))
        #expect(frameError("") == JamError(.malformed, "not valid JSON"))
        #expect(frameError(#"{"type":"skip""#) == JamError(.malformed, "not valid JSON"))
    }

    /// JSONDecoder stops the process on the first of these (a 513th array opening on the last
    /// byte); every one of them is refused with the same error instead.
    @Test func textNestedDeeperThanJSONDecoderReadsIsMalformedNotACrash() {
        let tooDeep = JamError(.malformed, "not valid JSON: arrays and objects nest deeper than 512 levels")
        #expect(frameError(String(repeating: "[", count: 513)) == tooDeep)
        #expect(frameError(#"{"type":"vote","data":"# + String(repeating: "[", count: 512)) == tooDeep)
        #expect(frameError(String(repeating: "[", count: 600) + String(repeating: "]", count: 600)) == tooDeep)
        // JSONDecoder skips the four bytes after `\u` unread, a backslash and all: these strings
        // end at their second quote, and the arrays after them are real.
        #expect(frameError(#"["\uAAA\","# + String(repeating: "[", count: 512)) == tooDeep)
        #expect(frameError(#"{"a":"\uA\\\","b":"# + String(repeating: "[", count: 512)) == tooDeep)
        // Brackets inside strings do not nest; 512 levels still read (and are the wrong type here).
        #expect(frameError(#"{"type":"skip","id":"\#(String(repeating: "[", count: 100))"}"#) == nil)
        #expect(frameError(String(repeating: "[", count: 512) + String(repeating: "]", count: 512))
            == JamError(.malformed, "field body has the wrong type (expected object)"))
    }

    /// Whatever the nesting check lets through, JSONDecoder answers rather than stopping the
    /// process: seeded prefixes of strings, escapes and brackets, then arrays to each depth
    /// around its limit (a wrong guess of where a string ends would crash this test).
    @Test func noTextTheNestingCheckLetsThroughStopsJSONDecoder() {
        var random = SeededRandom(seed: 513)
        let pieces = ["[", "{\"a\":", "\"", "\\", "\\u", "A", "\\\\", ",", "]", "}", "1", "\"x\"", "\\\"", ":"]
        for _ in 0..<300 {
            let prefix = (0..<Int.random(in: 1...8, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
            for arrays in 500...513 {
                // A crash here ends the whole test run; an error or a frame is fine.
                _ = frameError(prefix + String(repeating: "[", count: arrays))
            }
        }
    }

    /// JSON between systems is UTF-8 (RFC 8259); JSONDecoder's UTF-16 and UTF-32 are refused.
    @Test func textThatIsNotUTF8IsMalformed() {
        let utf16 = Data([0xFF, 0xFE]) + #"{"type":"skip"}"#.data(using: .utf16LittleEndian)!
        let notUTF8 = JamError(.malformed, "not valid JSON: the text must be UTF-8")
        #expect(throws: notUTF8) { try ClientFrame.decode(utf16) }
        #expect(throws: notUTF8) { try ClientFrame.decode(#"{"type":"skip"}"#.data(using: .utf16BigEndian)!) }
        #expect(frameError("\u{FEFF}" + #"{"type":"skip"}"#) == nil)
    }

    @Test func nonObjectFramesAreMalformed() {
        #expect(frameError("null") == JamError(.malformed, "field body must not be null (expected object)"))
        #expect(frameError("[]") == JamError(.malformed, "field body has the wrong type (expected object)"))
        #expect(frameError("42") == JamError(.malformed, "field body has the wrong type (expected object)"))
        #expect(frameError(#""skip""#) == JamError(.malformed, "field body has the wrong type (expected object)"))
    }

    @Test func aValueAnEnumDoesNotTakeNamesTheFieldAndTheValuesItTakes() throws {
        func refusal<T: Decodable>(_ type: T.Type, _ json: String) -> JamError? {
            do throws(JamError) {
                _ = try WireCoding.decode(T.self, from: Data(json.utf8))
                return nil
            } catch {
                return error
            }
        }
        #expect(refusal(UpdateSessionRequest.self, #"{"settings":{"ordering":"random"}}"#)
            == JamError(.invalidField, #"field settings.ordering: must be one of votes, fair; got "random""#))
        #expect(refusal(UpdateSessionRequest.self, #"{"playback":"stop"}"#)
            == JamError(.invalidField, #"field playback: must be one of play, pause, resume; got "stop""#))
        #expect(refusal(AddToQueue.self, #"{"track":{"id":"t","name":"n","artist":"a","source":"tape"},"nonce":"x"}"#)?.message
            == #"field track.source: must be one of \#(TrackSource.allCases.map(\.rawValue).joined(separator: ", ")); got "tape""#)
        #expect(refusal(UpdateSessionRequest.self, #"{"settings":{"ordering":"fair"}}"#) == nil)
    }

    @Test func missingTypeIsMalformed() {
        #expect(frameError("{}") == JamError(.malformed, "missing field type"))
        #expect(frameError(#"{"data":{"positionMs":1}}"#) == JamError(.malformed, "missing field type"))
    }

    @Test func missingDataNamesTheField() {
        for type in [
            "ping", "addToQueue", "removeFromQueue", "vote", "seek", "ready", "syncReport", "updateSettings", "promote", "kick",
            "setDeviceDelay", "calibrate", "calibrationReport", "resync",
        ] {
            #expect(frameError(#"{"type":"\#(type)"}"#) == JamError(.malformed, "missing field data"), "type \(type)")
        }
    }

    @Test func nullDataNamesTheField() {
        #expect(frameError(#"{"type":"vote","data":null}"#) == JamError(.malformed, "field data must not be null (expected object)"))
    }

    @Test func missingNestedFieldIsNamed() {
        #expect(frameError(#"{"type":"vote","data":{"value":1}}"#) == JamError(.malformed, "missing field data.itemId"))
        #expect(frameError(#"{"type":"vote","data":{"itemId":"a"}}"#) == JamError(.malformed, "missing field data.value"))
        #expect(frameError(#"{"type":"addToQueue","data":{"nonce":"n"}}"#) == JamError(.malformed, "missing field data.track"))
        #expect(frameError(#"{"type":"addToQueue","data":{"track":{"id":"t","name":"n","artist":"a"},"nonce":"x"}}"#)
            == JamError(.malformed, "missing field data.track.source"))
    }

    @Test func wrongTypesAreNamed() {
        #expect(frameError(#"{"type":5}"#) == JamError(.malformed, "field type has the wrong type (expected string)"))
        #expect(frameError(#"{"type":"vote","data":{"itemId":"a","value":"1"}}"#)
            == JamError(.malformed, "field data.value has the wrong type (expected integer)"))
        #expect(frameError(#"{"type":"vote","data":{"itemId":7,"value":1}}"#)
            == JamError(.malformed, "field data.itemId has the wrong type (expected string)"))
        #expect(frameError(#"{"type":"seek","data":[1]}"#) == JamError(.malformed, "field data has the wrong type (expected object)"))
        #expect(frameError(#"{"type":"updateSettings","data":{"locked":"yes"}}"#)
            == JamError(.malformed, "field data.locked has the wrong type (expected boolean)"))
        #expect(frameError(#"{"type":"ping","data":{"clientSendTime":"now"}}"#)
            == JamError(.malformed, "field data.clientSendTime has the wrong type (expected number)"))
        #expect(frameError(#"{"type":"skip","id":12}"#) == JamError(.malformed, "field id has the wrong type (expected string)"))
    }

    @Test func nullFieldsAreNamed() {
        #expect(frameError(#"{"type":"vote","data":{"itemId":"a","value":null}}"#)
            == JamError(.malformed, "field data.value must not be null (expected integer)"))
        #expect(frameError(#"{"type":"kick","data":{"userId":null}}"#)
            == JamError(.malformed, "field data.userId must not be null (expected string)"))
        #expect(frameError(#"{"type":null}"#) == JamError(.malformed, "field type must not be null (expected string)"))
    }

    @Test func fractionalOrHugeIntegersAreMalformedNotInvalidJSON() throws {
        for json in [#"{"type":"vote","data":{"itemId":"a","value":1.5}}"#,
                     #"{"type":"seek","data":{"positionMs":1e30}}"#,
                     #"{"type":"vote","data":{"itemId":"a","value":99999999999999999999}}"#] {
            let error = try #require(frameError(json))
            #expect(error.code == .malformed)
            #expect(error.message != "not valid JSON", "\(json)")
            #expect(error.message.contains("number"))
        }
    }

    @Test func badEnumValuesAreInvalidFields() throws {
        let ordering = try #require(frameError(#"{"type":"updateSettings","data":{"ordering":"random"}}"#))
        #expect(ordering.code == .invalidField)
        #expect(ordering.message.hasPrefix("field data.ordering:"))
        let source = try #require(frameError(#"{"type":"addToQueue","data":{"track":{"id":"t","name":"n","artist":"a","source":"tape"},"nonce":"x"}}"#))
        #expect(source.code == .invalidField)
        #expect(source.message.hasPrefix("field data.track.source:"))
        let role = try #require(frameError(#"{"type":"promote","data":{"userId":"u","role":"king"}}"#))
        #expect(role.code == .invalidField)
        #expect(role.message.hasPrefix("field data.role:"))
    }

    @Test func voteOutsideRangeIsInvalid() {
        #expect(frameError(#"{"type":"vote","data":{"itemId":"a","value":2}}"#) == JamError(.invalidField, "vote value must be -1, 0 or 1, got 2"))
        #expect(frameError(#"{"type":"vote","data":{"itemId":"a","value":-2}}"#) == JamError(.invalidField, "vote value must be -1, 0 or 1, got -2"))
    }

    @Test func negativeSeekIsInvalid() {
        #expect(frameError(#"{"type":"seek","data":{"positionMs":-1}}"#) == JamError(.invalidField, "positionMs must not be negative, got -1"))
        #expect(frameError(#"{"type":"seek","data":{"positionMs":86400001}}"#) == JamError(.invalidField, "positionMs must be at most 24 hours"))
    }

    @Test func emptyOrLongNonceIsInvalid() {
        let track = #"{"id":"t","name":"n","artist":"a","source":"library"}"#
        #expect(frameError(#"{"type":"addToQueue","data":{"track":\#(track),"nonce":""}}"#) == JamError(.invalidField, "nonce must not be empty"))
        let long = String(repeating: "n", count: Validate.maxNonce + 1)
        #expect(frameError(#"{"type":"addToQueue","data":{"track":\#(track),"nonce":"\#(long)"}}"#)
            == JamError(.invalidField, "nonce must be at most \(Validate.maxNonce) bytes"))
    }

    @Test func invalidTrackIsInvalid() {
        #expect(frameError(#"{"type":"addToQueue","data":{"track":{"id":"t","name":"  ","artist":"a","source":"library"},"nonce":"n"}}"#)
            == JamError(.invalidField, "track.name must not be empty"))
        #expect(frameError(#"{"type":"addToQueue","data":{"track":{"id":"t","name":"n","artist":"a","source":"library","durationMs":0},"nonce":"n"}}"#)?.code
            == .invalidField)
    }

    @Test func badDeviceSyncFiguresAreNamed() {
        #expect(frameError(#"{"type":"setDeviceDelay","data":{"deviceId":"d1","delayMs":2500}}"#)
            == JamError(.invalidField, "delayMs must be a number from -2000 to 2000"))
        #expect(frameError(#"{"type":"setDeviceDelay","data":{"deviceId":"no spaces","delayMs":5}}"#)
            == JamError(.invalidField, "deviceId may hold only letters, digits, '-' and '_'"))
        #expect(frameError(#"{"type":"setDeviceDelay","data":{"deviceId":"","delayMs":5}}"#)
            == JamError(.invalidField, "deviceId must be 1 to 64 characters"))
        #expect(frameError(#"{"type":"syncReport","data":{"epoch":1,"offsetMs":0,"errorMs":1,"driftMs":0,"outputLatencyMs":-3}}"#)
            == JamError(.invalidField, "outputLatencyMs must be from 0 to 2000"))
        #expect(frameError(#"{"type":"syncReport","data":{"epoch":1,"offsetMs":0,"errorMs":1,"driftMs":0,"deviceId":"a/b"}}"#)?.code
            == .invalidField)
        // Hosts' screens print these: a figure that would not fit a whole number is refused.
        for field in ["offsetMs", "errorMs", "driftMs", "clockDriftPpm"] {
            var figures = ["offsetMs": "0", "errorMs": "1", "driftMs": "0"]
            figures[field] = "1e19"
            let data = figures.map { #""\#($0.key)":\#($0.value)"# }.joined(separator: ",")
            #expect(frameError(#"{"type":"syncReport","data":{"epoch":1,\#(data)}}"#)
                == JamError(.invalidField, "syncReport values must be within ±1000000000000000"), "\(field)")
        }
        #expect(frameError(#"{"type":"syncReport","data":{"epoch":1,"offsetMs":-5.6e13,"errorMs":1,"driftMs":0}}"#) == nil, "a clock set to 1970")
        let twice = #"{"userId":"u","deviceId":"d","offsetMs":1}"#
        #expect(frameError(#"{"type":"calibrationReport","data":{"calibrationId":"c","arrivals":[\#(twice),\#(twice)]}}"#)
            == JamError(.invalidField, "device d of u appears twice"))
        #expect(frameError(#"{"type":"calibrationReport","data":{"calibrationId":"c","arrivals":[{"userId":"u","deviceId":"d","offsetMs":900}]}}"#)
            == JamError(.invalidField, "offsetMs must be a number within ±400 ms"))
        #expect(frameError(#"{"type":"calibrate","data":{"deviceId":"x y"}}"#)?.code == .invalidField)
        #expect(frameError(#"{"type":"calibrationReport","data":{"calibrationId":"c","arrivals":[],"problem":"deaf"}}"#)
            == JamError(.invalidField, #"field data.problem: must be one of microphoneUnavailable, microphoneRefused, planTooLate; got "deaf""#))
    }

    @Test func emptySettingsUpdateIsInvalid() {
        #expect(frameError(#"{"type":"updateSettings","data":{}}"#) == JamError(.invalidField, "updateSettings must change at least one setting"))
    }

    @Test func outOfRangeSettingsAreInvalid() {
        for (field, value) in [("skipThreshold", "0"), ("skipThreshold", "1.5"), ("skipThreshold", "-0.1"), ("maxMembers", "0"),
                               ("maxMembers", "1001"), ("maxQueuedPerMember", "0"), ("maxQueuedPerMember", "501")] {
            let error = frameError(#"{"type":"updateSettings","data":{"\#(field)":\#(value)}}"#)
            #expect(error?.code == .invalidField, "\(field)=\(value)")
            #expect(error?.message.hasPrefix("settings.\(field)") == true, "\(field)=\(value)")
        }
    }

    @Test func otherRangeChecks() {
        #expect(frameError(#"{"type":"hello","data":{"lastSeq":-1}}"#) == JamError(.invalidField, "lastSeq must not be negative, got -1"))
        #expect(frameError(#"{"type":"ready","data":{"epoch":-1}}"#) == JamError(.invalidField, "epoch must not be negative, got -1"))
        // The song a control is meant for: no song has a negative epoch.
        for type in ["skip", "requestSkip", "withdrawSkipRequest", "pause", "resume"] {
            #expect(frameError(#"{"type":"\#(type)","data":{"epoch":-2}}"#) == JamError(.invalidField, "epoch must not be negative, got -2"), "\(type)")
            #expect(frameError(#"{"type":"\#(type)","data":{"epoch":0}}"#) == nil, "\(type)")
        }
        #expect(frameError(#"{"type":"seek","data":{"positionMs":0,"epoch":-2}}"#) == JamError(.invalidField, "epoch must not be negative, got -2"))
        #expect(frameError(#"{"type":"syncReport","data":{"epoch":1,"offsetMs":0,"errorMs":-1,"driftMs":0}}"#)
            == JamError(.invalidField, "errorMs must not be negative"))
    }

    @Test func badCommandIdIsInvalid() {
        let rule = #"field id: id must be 1 to 128 bytes without control characters, not starting with "key:" nor holding " key:" (the server's for REST idempotency keys)"#
        #expect(frameError(#"{"type":"skip","id":""}"#) == JamError(.invalidField, rule))
        let long = String(repeating: "i", count: ClientFrame.maxIdLength + 1)
        #expect(frameError(#"{"type":"skip","id":"\#(long)"}"#) == JamError(.invalidField, rule))
        // Also where the quick reader takes the frame (a vote) rather than JSONDecoder.
        #expect(frameError(#"{"type":"vote","id":"key:vote:K1","data":{"itemId":"a","value":1}}"#) == JamError(.invalidField, rule))
        #expect(frameError(#"{"type":"skip","id":"key:skip:K1 0123456789abcdef"}"#) == JamError(.invalidField, rule))
        #expect(frameError(#"{"type":"skip","id":"mykey:1"}"#) == nil)
        // Read from the right of its answer key, this id's last word would pass for a key's.
        #expect(frameError(#"{"type":"vote","id":"retry key:1","data":{"itemId":"a","value":1}}"#) == JamError(.invalidField, rule))
        #expect(frameError(#"{"type":"skip","id":"retry key:1"}"#) == JamError(.invalidField, rule))
        #expect(frameError(#"{"type":"skip","id":"retry 1"}"#) == nil)
        // A control character (U+0000 above all, which PostgreSQL's text refuses), by either reader.
        #expect(frameError(#"{"type":"vote","id":"x\u0000","data":{"itemId":"a","value":1}}"#) == JamError(.invalidField, rule))
        #expect(frameError(#"{"type":"skip","id":"x\u0000"}"#) == JamError(.invalidField, rule))
        #expect(frameError(#"{"type":"skip","id":"line\nbreak"}"#) == JamError(.invalidField, rule))
        #expect(frameError(#"{"type":"skip","id":"del\u007f"}"#) == JamError(.invalidField, rule))
        #expect(frameError(#"{"type":"skip","id":"é-ok"}"#) == nil)
    }

    @Test func emptyIdInsidePayloadIsInvalid() {
        #expect(frameError(#"{"type":"removeFromQueue","data":{"itemId":""}}"#) == JamError(.invalidField, "field data.itemId: an ID must not be empty"))
    }

    @Test func failedFrameKeepsItsIdForTheErrorReply() {
        let data = Data(#"{"type":"vote","id":"c42","data":{"itemId":"a","value":9}}"#.utf8)
        #expect(frameError(String(decoding: data, as: UTF8.self))?.code == .invalidField)
        #expect(ClientFrame.salvageId(data) == "c42")
        #expect(ClientFrame.salvageId(Data(#"{"type":"dance","id":"c43"}"#.utf8)) == "c43")
        #expect(ClientFrame.salvageId(Data("not json".utf8)) == nil)
        #expect(ClientFrame.salvageId(Data(#"{"id":7}"#.utf8)) == nil)
        let long = String(repeating: "i", count: ClientFrame.maxIdLength + 1)
        #expect(ClientFrame.salvageId(Data(#"{"id":"\#(long)"}"#.utf8)) == nil)
        // An id refused for its shape still names the error its sender waits for.
        #expect(ClientFrame.salvageId(Data(#"{"type":"skip","id":"a\nb"}"#.utf8)) == "a\nb")
        #expect(ClientFrame.salvageId(Data(#"{"type":"skip","id":"key:1"}"#.utf8)) == "key:1")
        #expect(ClientFrame.salvageId(Data(#"{"type":"skip","id":""}"#.utf8)) == nil)
    }
}
