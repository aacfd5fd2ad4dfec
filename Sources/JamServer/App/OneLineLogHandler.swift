import Logging

/// Keeps every log record on one line: control characters in the message and in metadata
/// values (a newline in a name someone typed, in a refused message's type) are written as
/// escapes, so nobody who can send the server text can start a log line of their own.
/// swift-log's `StreamLogHandler` writes values as they are.
package struct OneLineLogHandler<Inner: LogHandler>: LogHandler {
    private var inner: Inner

    /// Wraps `inner`, which does the writing.
    package init(_ inner: Inner) {
        self.inner = inner
    }

    package var logLevel: Logger.Level {
        get { inner.logLevel }
        set { inner.logLevel = newValue }
    }

    package var metadata: Logger.Metadata {
        get { inner.metadata }
        set { inner.metadata = newValue.mapValues(Self.escaped) }
    }

    package var metadataProvider: Logger.MetadataProvider? {
        get { inner.metadataProvider }
        set { inner.metadataProvider = newValue }
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { inner[metadataKey: key] }
        set { inner[metadataKey: key] = newValue.map(Self.escaped) }
    }

    package func log(event: LogEvent) {
        var event = event
        event.message = Logger.Message(stringLiteral: Self.escaped(event.message.description))
        event.metadata = event.metadata?.mapValues(Self.escaped)
        inner.log(event: event)
    }

    /// `value` with its strings escaped; a value without control characters is kept as it is.
    static func escaped(_ value: Logger.Metadata.Value) -> Logger.Metadata.Value {
        switch value {
        case .string(let text):
            .string(escaped(text))
        case .stringConvertible(let convertible):
            needsEscaping(convertible.description) ? .string(escaped(convertible.description)) : value
        case .array(let values):
            .array(values.map(escaped))
        case .dictionary(let values):
            .dictionary(values.mapValues(escaped))
        }
    }

    /// `text` with `\n`, `\r`, `\t` and other control characters written as escapes.
    static func escaped(_ text: String) -> String {
        guard needsEscaping(text) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where isControl(scalar): result += "\\u{\(String(scalar.value, radix: 16))}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func needsEscaping(_ text: String) -> Bool {
        text.unicodeScalars.contains(where: isControl)
    }

    /// C0 and C1 controls and DEL, and the line and paragraph separators some viewers break at.
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
    }
}
