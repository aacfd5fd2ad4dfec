import Foundation
import JamServer
import Logging
import Testing

/// Text people send reaches the log escaped: one record stays one line.
@Suite struct OneLineLogHandlerTests {
    /// Keeps what it is asked to log.
    struct Capture: LogHandler {
        final class Records: @unchecked Sendable {
            private let lock = NSLock()
            private var events: [(message: String, metadata: Logger.Metadata)] = []
            func append(_ message: String, _ metadata: Logger.Metadata) { lock.withLock { events.append((message, metadata)) } }
            var all: [(message: String, metadata: Logger.Metadata)] { lock.withLock { events } }
        }

        let records: Records
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]
        var metadataProvider: Logger.MetadataProvider?

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let provided = metadataProvider?.get() ?? [:]
            records.append(event.message.description, metadata.merging(provided) { $1 }.merging(event.metadata ?? [:]) { $1 })
        }
    }

    @Test func controlCharactersInMessagesAndMetadataAreEscaped() {
        let records = Capture.Records()
        var logger = Logger(label: "test") { _ in OneLineLogHandler(Capture(records: records)) }
        logger[metadataKey: "session.name"] = "Ann's\nparty"
        logger.info("refused \"x\ny\"", metadata: [
            "error": "unknown type \"x\nINJECTED level=critical\"",
            "list": .array(["a\rb", "plain"]),
            "nested": .dictionary(["k": "tab\there"]),
            "bell": "\u{7}", "separator": "a\u{2028}b", "count": .stringConvertible(42),
        ])
        let record = records.all[0]
        #expect(record.message == #"refused "x\ny""#)
        #expect(record.metadata["error"] == .string(#"unknown type "x\nINJECTED level=critical""#))
        #expect(record.metadata["list"] == .array([.string(#"a\rb"#), .string("plain")]))
        #expect(record.metadata["nested"] == .dictionary(["k": .string(#"tab\there"#)]))
        #expect(record.metadata["bell"] == .string(#"\u{7}"#))
        #expect(record.metadata["separator"] == .string(#"a\u{2028}b"#))
        #expect(record.metadata["count"]?.description == "42")
        #expect(record.metadata["session.name"] == .string(#"Ann's\nparty"#))
        // Nothing the capture holds has a line break left.
        let text = record.message + record.metadata.values.map(\.description).joined()
        #expect(!text.contains("\n") && !text.contains("\r"))
    }

    @Test func metadataFromAProviderAndKeysAreEscapedToo() {
        let records = Capture.Records()
        var handler = OneLineLogHandler(Capture(records: records))
        handler.metadataProvider = Logger.MetadataProvider { ["task.name": "late\nnight", "key\nbreak": "v"] }
        let logger = Logger(label: "test") { _ in handler }
        logger.info("hello")
        #expect(records.all[0].metadata["task.name"] == .string(#"late\nnight"#))
        #expect(records.all[0].metadata[#"key\nbreak"#] == .string("v"))
    }

    @Test func plainTextIsLoggedAsItIs() {
        let records = Capture.Records()
        let logger = Logger(label: "test") { _ in OneLineLogHandler(Capture(records: records)) }
        logger.info("command refused", metadata: ["member.id": "u-1", "name": "Zoë & the Ünicode"])
        #expect(records.all[0].message == "command refused")
        #expect(records.all[0].metadata["name"] == .string("Zoë & the Ünicode"))
    }
}
