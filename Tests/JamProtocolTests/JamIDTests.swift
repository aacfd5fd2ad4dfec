import Foundation
import Testing
import JamProtocol

struct JamIDTests {
    static let upper = "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11"
    static let lower = "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"

    @Test func upperCaseUUIDIsStoredLowercase() {
        #expect(JamID(Self.upper).rawValue == Self.lower)
        #expect(JamID(Self.upper) == JamID(Self.lower))
        #expect(JamID(Self.upper).hashValue == JamID(Self.lower).hashValue)
    }

    @Test func mixedCaseUUIDNormalises() {
        #expect(JamID("A0eeBC99-9c0b-4EF8-bb6d-6BB9bd380a11").rawValue == Self.lower)
    }

    @Test func upperCaseUUIDDecodesEqualToLowerCase() throws {
        let fromUpper = try WireCoding.decode([JamID].self, from: Data("[\"\(Self.upper)\"]".utf8))
        let fromLower = try WireCoding.decode([JamID].self, from: Data("[\"\(Self.lower)\"]".utf8))
        #expect(fromUpper == fromLower)
        #expect(fromUpper.first?.rawValue == Self.lower)
    }

    @Test func decodedIDEncodesLowercase() throws {
        let id = try WireCoding.decode(JamID.self, from: Data("\"\(Self.upper)\"".utf8))
        #expect(String(decoding: try WireCoding.encode(id), as: UTF8.self) == "\"\(Self.lower)\"")
    }

    @Test(arguments: ["creator1", "Creator1", "ABC", "spotify:user:XYZ", "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A1"])
    func nonUUIDIsUntouched(_ raw: String) throws {
        #expect(JamID(raw).rawValue == raw)
        #expect(!JamID(raw).isUUID)
        #expect(try WireCoding.decode(JamID.self, from: Data("\"\(raw)\"".utf8)).rawValue == raw)
    }

    @Test func nonUUIDIdsDifferingInCaseStayDistinct() {
        #expect(JamID("Creator1") != JamID("creator1"))
    }

    @Test func uuidInitialiserRendersLowercase() throws {
        let uuid = try #require(UUID(uuidString: Self.upper))
        #expect(JamID(uuid).rawValue == Self.lower)
        #expect(JamID(uuid).isUUID)
    }

    /// Returns the same word every time, to pin which bits the version and variant overwrite.
    struct ConstantRandom: RandomNumberGenerator {
        let word: UInt64
        mutating func next() -> UInt64 { word }
    }

    @Test func randomUUIDSetsVersionFourAndTheVariantOverTheGeneratorsBits() {
        var zeros = ConstantRandom(word: 0), ones = ConstantRandom(word: .max)
        #expect(JamID.randomUUID(using: &zeros).rawValue == "00000000-0000-4000-8000-000000000000")
        #expect(JamID.randomUUID(using: &ones).rawValue == "ffffffff-ffff-4fff-bfff-ffffffffffff")
    }

    @Test func randomUUIDWritesTheGeneratorsWordsInOrder() {
        // SeededRandom(seed: 1_234_567) starts 0x599ed017fb08fc85, 0x2c73f08458540fa5 (see SeededRandomTests).
        var random = SeededRandom(seed: 1_234_567)
        #expect(JamID.randomUUID(using: &random).rawValue == "599ed017-fb08-4c85-ac73-f08458540fa5")
    }

    @Test func randomUUIDsAreCanonicalAndReadTheSameWayInFoundation() throws {
        var random = SeededRandom(seed: 11)
        let shape = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
        var seen = Set<JamID>()
        for _ in 0..<2_000 {
            let id = JamID.randomUUID(using: &random)
            #expect(id.rawValue.wholeMatch(of: shape) != nil, "\(id)")
            #expect(JamID.uuid(id.rawValue) == id)
            let parsed = try #require(UUID(uuidString: id.rawValue))
            #expect(JamID(parsed) == id)
            seen.insert(id)
        }
        #expect(seen.count == 2_000)
    }

    @Test func uuidParserAcceptsOnlyUUIDs() {
        #expect(JamID.uuid(Self.upper)?.rawValue == Self.lower)
        #expect(JamID.uuid("creator1") == nil)
        #expect(JamID.uuid("") == nil)
    }

    @Test func onlyTheCanonicalUUIDFormCountsAsAUUID() {
        var random = SeededRandom(seed: 7)
        let alphabet = Array("0123456789abcdefABCDEFgG-xz {}")
        var samples = [Self.upper, Self.lower, "", "creator1", Self.lower + "0", String(Self.lower.dropLast()), "{\(Self.lower)}",
                       Self.lower.replacingOccurrences(of: "-", with: ""), Self.lower.replacingOccurrences(of: "-", with: "_")]
        for _ in 0..<2_000 {
            // Mutate one or two characters of a real UUID, so most samples are near misses.
            var characters = Array(random.next() % 2 == 0 ? Self.lower : Self.upper)
            for _ in 0..<Int(random.next() % 3) {
                characters[Int(random.next() % UInt64(characters.count))] = alphabet[Int(random.next() % UInt64(alphabet.count))]
            }
            samples.append(String(characters))
        }
        let canonical = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/
        for sample in samples {
            // Exactly the canonical form; Foundation on Linux also takes some malformed ones
            // (a space or a hyphen among the digits), which OpenJam refuses.
            #expect((JamID.uuid(sample) != nil) == (sample.wholeMatch(of: canonical) != nil), "\(sample)")
            if let id = JamID.uuid(sample) {
                #expect(UUID(uuidString: sample).map(JamID.init) == id, "\(sample)")
            }
        }
    }

    @Test func stringLiteralNormalisesToo() {
        let id: JamID = "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11"
        #expect(id.rawValue == Self.lower)
        #expect(id.description == Self.lower)
    }

    @Test func idsOrderByText() {
        #expect(JamID("a") < JamID("b"))
        #expect(uuidID(1) < uuidID(2))
    }

    @Test func dictionaryKeysMergeAcrossCase() {
        var votes: [JamID: Int] = [:]
        votes[JamID(Self.upper)] = 1
        votes[JamID(Self.lower)] = -1
        #expect(votes.count == 1)
        #expect(votes[JamID(Self.lower)] == -1)
    }

    @Test func emptyIDIsRejectedOnDecode() {
        #expect(throws: JamError(.invalidField, "body: an ID must not be empty")) {
            try WireCoding.decode(JamID.self, from: Data("\"\"".utf8))
        }
        do {
            _ = try WireCoding.decode(ItemRef.self, from: Data(#"{"itemId":""}"#.utf8))
            Issue.record("an empty ID decoded")
        } catch {
            #expect(error.code == .invalidField)
            #expect(error.message.contains("itemId"))
            #expect(error.message.contains("must not be empty"))
        }
    }

    @Test func overlongIDIsRejectedOnDecode() throws {
        let longest = String(repeating: "x", count: JamID.maxLength)
        #expect(try WireCoding.decode(ItemRef.self, from: Data(#"{"itemId":"\#(longest)"}"#.utf8)).itemId.rawValue == longest)
        do {
            _ = try WireCoding.decode(ItemRef.self, from: Data(#"{"itemId":"\#(longest)y"}"#.utf8))
            Issue.record("an over-long ID decoded")
        } catch {
            #expect(error.code == .invalidField)
            #expect(error.message.contains("itemId"))
            #expect(error.message.contains("at most \(JamID.maxLength)"))
        }
    }

    @Test func idsInsideFramesNormalise() throws {
        let frame = try ClientFrame.decode(Data(#"{"type":"vote","data":{"itemId":"\#(Self.upper)","value":1}}"#.utf8))
        #expect(frame.command == .vote(Vote(itemId: JamID(Self.lower), value: 1)))
        let kick = try ClientFrame.decode(Data(#"{"type":"kick","data":{"userId":"\#(Self.upper)"}}"#.utf8))
        #expect(kick.command == .kick(UserRef(userId: JamID(Self.lower))))
    }
}
