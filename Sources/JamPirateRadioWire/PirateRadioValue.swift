import Foundation
import JamProtocol

extension PirateRadio {
    /// Any JSON value, kept whole: PirateRadio's server (JavaScript) keeps what a client sends
    /// as sent, so the profile reads fields the way it does and relays or echoes the rest.
    package typealias Value = JSONValue

    /// JSON text written as it is into a frame: a track as its client sent it.
    package struct RawJSON: Hashable, Sendable, JSONWritable {
        package var text: String

        /// Wraps JSON text that is written as it is.
        package init(text: String) { self.text = text }

        package func write(to json: inout JSONWriter) { json.raw(text) }
    }
}

extension JSONValue {
    /// JavaScript's truthiness, which decides what PirateRadio's server treats as present.
    package var isTruthy: Bool {
        switch self {
        case .null: false
        case .bool(let flag): flag
        case .integer(let whole): whole != 0
        case .number(let number): number != 0 && !number.isNaN
        case .string(let text): !text.isEmpty
        case .array, .object: true
        }
    }

    /// The value as an id: a string as it is, anything else as its JSON text.
    package var idText: String {
        if case .string(let text) = self { return text }
        return PirateRadio.json(self)
    }
}
