import NIOCore
import Testing

@testable import JamServer

/// The UTF-8 check every text message passes before it is decoded.
struct WebSocketTextTests {
    static let cases: [String: (bytes: [UInt8], valid: Bool)] = [
        "nothing": ([], true),
        "ASCII shorter than a word": (Array("{\"a\":1}".utf8), true),
        "ASCII over several words": (Array(String(repeating: "{\"type\":\"ping\"}", count: 5).utf8), true),
        "a character in the last bytes": (Array("{\"type\":\"add\",\"name\":\"Café\"}".utf8), true),
        "characters of every length after ASCII words": (Array("0123456789abcdef é € 𝄞 ok".utf8), true),
        "an overlong slash": (Array("01234567".utf8) + [0xC0, 0xAF], false),
        "a surrogate": (Array("01234567".utf8) + [0xED, 0xA0, 0x80], false),
        "past U+10FFFF": ([0xF4, 0x90, 0x80, 0x80], false),
        "a character cut short": (Array("abc".utf8) + [0xE2, 0x82], false),
        "a lone continuation byte": (Array("0123456789".utf8) + [0x80], false),
        "a byte that never starts one": ([0x7B, 0xFF, 0x7D], false),
    ]

    @Test(arguments: cases.keys.sorted())
    func textIsUTF8ExactlyWhenTheStandardLibraryReadsItSo(name: String) throws {
        let (bytes, valid) = try #require(Self.cases[name])
        #expect(WebSocketText.isUTF8(ByteBuffer(bytes: bytes)) == valid)
        #expect((String(validating: bytes, as: UTF8.self) != nil) == valid, "the case itself")
    }

    @Test func onlyTheReadableBytesAreChecked() {
        var buffer = ByteBuffer(bytes: [0xFF, 0xFE] + Array("{\"ok\":true}".utf8))
        #expect(!WebSocketText.isUTF8(buffer))
        buffer.moveReaderIndex(forwardBy: 2)
        #expect(WebSocketText.isUTF8(buffer))
    }
}
