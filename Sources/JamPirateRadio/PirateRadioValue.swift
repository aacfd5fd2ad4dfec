import Foundation
import JamProtocol

extension PirateRadio {
    /// Any JSON value, kept whole: PirateRadio's server (JavaScript) keeps what a client sends
    /// as sent, so the profile reads fields the way it does and relays or echoes the rest.
    enum Value: Hashable, Sendable, Decodable, JSONWritable {
        case null
        case bool(Bool)
        case integer(Int64)
        case number(Double)
        case string(String)
        case array([Value])
        case object([String: Value])

        init(from decoder: any Decoder) throws {
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
            } else if let object = attempt([String: Value].self) {
                self = .object(object)
            } else {
                self = .array(try container.decode([Value].self))
            }
        }

        /// JavaScript's truthiness, which decides what PirateRadio's server treats as present.
        var isTruthy: Bool {
            switch self {
            case .null: false
            case .bool(let flag): flag
            case .integer(let whole): whole != 0
            case .number(let number): number != 0 && !number.isNaN
            case .string(let text): !text.isEmpty
            case .array, .object: true
            }
        }

        /// The value when it is a string.
        var string: String? {
            if case .string(let text) = self { return text }
            return nil
        }

        /// The value when it is a number.
        var number: Double? {
            switch self {
            case .integer(let whole): Double(whole)
            case .number(let number): number
            case .null, .bool, .string, .array, .object: nil
            }
        }

        /// The value as an id: a string as it is, anything else as its JSON text.
        var idText: String {
            if case .string(let text) = self { return text }
            return PirateRadio.json(self)
        }

        func write(to json: inout JSONWriter) {
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

        /// Reads JSON text; nil when it is not JSON.
        static func parse(_ bytes: Data) -> Value? {
            do {
                return try JSONDecoder().decode(Value.self, from: bytes)
            } catch {
                return nil
            }
        }
    }

    /// JSON text written as it is into a frame: a track as its client sent it.
    struct RawJSON: Hashable, Sendable, JSONWritable {
        var text: String

        func write(to json: inout JSONWriter) { json.raw(text) }
    }
}
