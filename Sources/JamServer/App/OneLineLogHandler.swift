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
        set { inner.metadata = Self.escaped(newValue) }
    }

    package var metadataProvider: Logger.MetadataProvider? {
        get { inner.metadataProvider }
        set { inner.metadataProvider = newValue.map { provider in Logger.MetadataProvider { Self.escaped(provider.get()) } } }
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { inner[metadataKey: key] }
        set { inner[metadataKey: key] = newValue.map(Self.escaped) }
    }

    package func log(event: LogEvent) {
        var event = event
        event.message = Logger.Message(stringLiteral: Self.escaped(event.message.description))
        if let metadata = event.metadata { event.metadata = Self.escaped(metadata) }
        if let error = event.error {
            // The inner handler would print the error as it describes itself.
            event.metadata = (event.metadata ?? [:]).merging(["error": .string(Self.escaped("\(error)"))]) { $1 }
            event.error = nil
        }
        inner.log(event: event)
    }

    /// `metadata` with its keys and values escaped; as it is when nothing needs escaping,
    /// which is nearly always (no copy then).
    static func escaped(_ metadata: Logger.Metadata) -> Logger.Metadata {
        guard metadata.contains(where: { needsEscaping($0.key) || needsEscaping($0.value) }) else { return metadata }
        return Dictionary(metadata.map { (escaped($0.key), escaped($0.value)) }, uniquingKeysWith: { _, last in last })
    }

    private static func needsEscaping(_ value: Logger.Metadata.Value) -> Bool {
        switch value {
        case .string(let text): needsEscaping(text)
        case .stringConvertible(let convertible): needsEscaping(convertible.description)
        case .array(let values): values.contains(where: needsEscaping)
        case .dictionary(let values): values.contains { needsEscaping($0.key) || needsEscaping($0.value) }
        }
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
            .dictionary(escaped(values))
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
