import Foundation

/// Any JSON value, kept whole: for protocols whose servers read fields leniently, or
/// relay and echo what a client sent.
package enum JSONValue: Hashable, Sendable, Decodable, JSONWritable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
            return
        }
        // Each kind is tried in turn; a mismatch only means "not this kind".
        func attempt<T: Decodable>(_: T.Type) -> T? {
            do {
                return try container.decode(T.self)
            } catch {
                return nil
            }
        }
        if let text = attempt(String.self) {
            self = .string(text)
        } else if let whole = attempt(Int64.self) {
            self = .integer(whole)
        } else if let number = attempt(Double.self) {
            self = .number(number)
        } else if let flag = attempt(Bool.self) {
            self = .bool(flag)
        } else if let object = attempt([String: JSONValue].self) {
            self = .object(object)
        } else {
            self = .array(try container.decode([JSONValue].self))
        }
    }

    /// The value when it is a string.
    package var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The value when it is a number.
    package var number: Double? {
        switch self {
        case .integer(let whole): Double(whole)
        case .number(let number): number
        case .null, .bool, .string, .array, .object: nil
        }
    }

    package func write(to json: inout JSONWriter) {
        switch self {
        case .null: json.raw("null")
        case .bool(let flag): json.bool(flag)
        case .integer(let whole): json.integer(whole)
        case .number(let number): json.double(number)
        case .string(let text): json.string(text)
        case .array(let values): json.array(values)
        case .object(let members):
            json.object { body in
                for key in members.keys.sorted() {
                    body.dynamicKey(key)
                    members[key]?.write(to: &body)
                }
            }
        }
    }

    /// Reads JSON text in UTF-8; nil when it is not that.
    ///
    /// Text in UTF-16 or UTF-32, which `JSONDecoder` would also read, is not JSON here: a
    /// WebSocket text message is UTF-8, and JSON between systems is (RFC 8259).
    package static func parse(_ bytes: Data) -> JSONValue? {
        bytes.withUnsafeBytes { JSONValueParser.parse($0) }
    }

    /// Reads JSON text with `JSONDecoder`: the reference `parse` matches on UTF-8 text (tests
    /// and the fuzz target compare them). Its time grows with the cube of the nesting depth
    /// (1.4 s for 512 levels), so nothing that serves clients calls it.
    package static func decoded(_ bytes: Data) -> JSONValue? {
        do {
            return try JSONDecoder().decode(JSONValue.self, from: bytes)
        } catch {
            return nil
        }
    }
}
