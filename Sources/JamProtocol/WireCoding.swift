import Foundation

/// Thrown while decoding an envelope whose `type` is not known.
struct UnknownTypeError: Error {
    let type: String
}

/// The JSON coders every OpenJam component uses, and the mapping of decoding
/// failures to typed errors that name the offending field.
public enum WireCoding {
    /// Encoder with stable key order (sorted), so equal values encode to equal bytes.
    public static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// Plain decoder; IDs normalise themselves.
    public static var decoder: JSONDecoder { JSONDecoder() }

    /// Decodes `T`, turning any failure into a `JamError` with a specific message.
    public static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws(JamError) -> T {
        if let refusal = data.withUnsafeBytes({ JSONDecoderGuard.refusal($0) }) {
            throw JamError(.malformed, "not valid JSON: \(refusal)")
        }
        do {
            return try decoder.decode(T.self, from: data)
        } catch let error as UnknownTypeError {
            throw JamError(.unknownType, "unknown type \"\(error.type.prefix(64))\"")
        } catch let error as DecodingError {
            // A path-less corruption of valid JSON is not "not valid JSON": Foundation reports a
            // number that does not fit its field (1.5 or 1e30 for an integer) that way, and a
            // top-level value that fails its own checks has no path either.
            if case .dataCorrupted(let context) = error, context.codingPath.isEmpty,
               (try? JSONSerialization.jsonObject(with: data, options: .fragmentsAllowed)) != nil {
                if context.debugDescription.contains("not valid JSON") {
                    throw JamError(.malformed, "a number does not fit its field (expected a whole number in range)")
                }
                throw JamError(.invalidField, "body: \(context.debugDescription)")
            }
            throw describe(error)
        } catch {
            throw JamError(.malformed, "could not decode: \(error)")
        }
    }

    /// Encodes `value` as JSON data.
    public static func encode<T: Encodable>(_ value: T) throws(JamError) -> Data {
        do {
            return try encoder.encode(value)
        } catch {
            throw JamError(.internal, "could not encode a response: \(error)")
        }
    }

    /// A readable, specific message for a decoding failure.
    package static func describe(_ error: DecodingError) -> JamError {
        func path(_ codingPath: [any CodingKey], _ last: (any CodingKey)? = nil) -> String {
            let keys = codingPath + (last.map { [$0] } ?? [])
            let text = keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
                .joined(separator: ".").replacingOccurrences(of: ".[", with: "[")
            return text.isEmpty ? "body" : text
        }
        switch error {
        case .keyNotFound(let key, let context):
            return JamError(.malformed, "missing field \(path(context.codingPath, key))")
        case .typeMismatch(let type, let context):
            return JamError(.malformed, "field \(path(context.codingPath)) has the wrong type (expected \(typeName(type)))")
        case .valueNotFound(let type, let context):
            return JamError(.malformed, "field \(path(context.codingPath)) must not be null (expected \(typeName(type)))")
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                return JamError(.malformed, "not valid JSON")
            }
            return JamError(.invalidField, "field \(path(context.codingPath)): \(context.debugDescription)")
        @unknown default:
            return JamError(.malformed, "could not decode: \(error)")
        }
    }

    private static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "string"
        case is Int.Type, is Int64.Type: "integer"
        case is Double.Type: "number"
        case is Bool.Type: "boolean"
        default:
            if "\(type)".hasPrefix("Array") { "array" } else if "\(type)".hasPrefix("Dictionary") { "object" } else { "\(type)" }
        }
    }
}
