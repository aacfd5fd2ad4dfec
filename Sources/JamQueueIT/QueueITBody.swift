import Foundation
import Hummingbird
import JamProtocol
import JamServer

/// A request body read field by field the way QueueIT's request models read it, collecting
/// every problem so one 422 lists them all, in its validator's words.
struct QueueITBody {
    private let fields: [String: JSONValue]
    private(set) var issues: [ValidationIssue] = []

    private init(fields: [String: JSONValue]) {
        self.fields = fields
    }

    /// The body as a JSON object; a missing body, text that is not JSON, or JSON that is not
    /// an object is a 422 at once.
    static func read(_ request: Request, context: JamRequestContext) async throws -> QueueITBody {
        let buffer = try await request.body.collect(upTo: context.maxBodyBytes)
        guard buffer.readableBytes > 0 else {
            throw QueueITError.validation([ValidationIssue(type: "missing", loc: [.key("body")], msg: "Field required", input: "null")])
        }
        let data = Data(buffer: buffer)
        guard let value = JSONValue.parse(data) else {
            throw QueueITError.validation([ValidationIssue(
                type: "json_invalid", loc: [.key("body"), .index(0)], msg: "JSON decode error", input: "{}",
                ctx: #"{"error": "the body is not JSON"}"#)])
        }
        guard case .object(let fields) = value else {
            throw QueueITError.validation([ValidationIssue(
                type: "model_attributes_type", loc: [.key("body")], msg: "Input should be a valid dictionary or object to extract fields from",
                input: String(decoding: data.prefix(1024), as: UTF8.self))])
        }
        return QueueITBody(fields: fields)
    }

    /// Throws the 422 when any field was wrong.
    func validated() throws -> QueueITBody {
        guard issues.isEmpty else { throw QueueITError.validation(issues) }
        return self
    }

    /// Throws the 422 when any field was wrong; otherwise the fields read, none of them nil: a
    /// field read returns nil only when it notes why.
    func validated<each Field>(_ fields: repeat (each Field)?) throws -> (repeat each Field) {
        _ = try validated()
        return (repeat try Self.unwrapped(each fields))
    }

    private static func unwrapped<Field>(_ field: Field?) throws -> Field {
        // Unreachable while every read notes an issue when it returns nil.
        guard let field else { throw QueueITError(.internalServerError, "Internal server error") }
        return field
    }

    private mutating func note(_ type: String, _ key: String, _ msg: String, _ input: JSONValue?, ctx: String? = nil) {
        issues.append(ValidationIssue(type: type, loc: [.key("body"), .key(key)], msg: msg, input: input.map { String(decoding: JSONWriter.encode($0), as: UTF8.self) } ?? "null", ctx: ctx))
    }

    /// A required string (`str`), `min`–`max` characters when given, counted as its validator
    /// counts them (Python's `len`: code points, so "é" written as e + accent is two).
    mutating func string(_ key: String, min: Int? = nil, max: Int? = nil) -> String? {
        guard let value = fields[key] else {
            note("missing", key, "Field required", nil)
            return nil
        }
        guard case .string(let text) = value else {
            note("string_type", key, "Input should be a valid string", value)
            return nil
        }
        let length = text.unicodeScalars.count
        if let min, length < min {
            note("string_too_short", key, "String should have at least \(min) character\(min == 1 ? "" : "s")", value, ctx: #"{"min_length": \#(min)}"#)
            return nil
        }
        if let max, length > max {
            note("string_too_long", key, "String should have at most \(max) character\(max == 1 ? "" : "s")", value, ctx: #"{"max_length": \#(max)}"#)
            return nil
        }
        return text
    }

    /// A required string as `string` reads it, refused too when it holds control characters,
    /// which OpenJam keeps out of everything it shows (`what` names it in the message).
    mutating func text(_ key: String, min: Int? = nil, max: Int, what: String) -> String? {
        guard let text = string(key, min: min, max: max) else { return nil }
        if Validate.hasControlCharacters(text) {
            refuse(key, type: "value_error", "Value error, \(what) cannot contain control characters", input: text)
            return nil
        }
        return text
    }

    /// A required http(s) URL of at most `max` characters, as its validator reads `HttpUrl`;
    /// "" alone is taken as none (its app sends it for a track without artwork, which its
    /// backend refuses).
    mutating func httpURL(_ key: String, max: Int) -> String?? {
        guard let value = fields[key] else {
            note("missing", key, "Field required", nil)
            return nil
        }
        guard case .string(let text) = value else {
            note("url_type", key, "URL input should be a string or URL", value)
            return nil
        }
        if text.isEmpty { return .some(nil) }
        guard text.unicodeScalars.count <= max else {
            note("url_too_long", key, "URL should have at most \(max) characters", value, ctx: #"{"max_length": \#(max)}"#)
            return nil
        }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased() else {
            note("url_parsing", key, "Input should be a valid URL, relative URL without a base", value)
            return nil
        }
        guard scheme == "http" || scheme == "https" else {
            note("url_scheme", key, "URL scheme should be 'http' or 'https'", value, ctx: #"{"expected_schemes": "'http' or 'https'"}"#)
            return nil
        }
        guard let host = url.host, !host.isEmpty else {
            note("url_parsing", key, "Input should be a valid URL, empty host", value)
            return nil
        }
        return .some(text)
    }

    /// A required whole number at least `min`; a whole number in a string or as `2.0` is read
    /// as one, as its validator does.
    mutating func integer(_ key: String, min: Int64) -> Int64? {
        guard let value = fields[key] else {
            note("missing", key, "Field required", nil)
            return nil
        }
        let number: Int64
        switch value {
        case .integer(let whole):
            number = whole
        case .number(let real) where real.rounded() == real && abs(real) < 9e15:
            number = Int64(real)
        case .number:
            note("int_from_float", key, "Input should be a valid integer, got a number with a fractional part", value)
            return nil
        case .string(let text):
            guard let whole = Int64(text.trimmingCharacters(in: .whitespaces)) else {
                note("int_parsing", key, "Input should be a valid integer, unable to parse string as an integer", value)
                return nil
            }
            number = whole
        case .null, .bool, .array, .object:
            note("int_type", key, "Input should be a valid integer", value)
            return nil
        }
        guard number >= min else {
            note("greater_than_equal", key, "Input should be greater than or equal to \(min)", value, ctx: #"{"ge": \#(min)}"#)
            return nil
        }
        return number
    }

    /// An optional boolean: absent or null is nil; `true`/`false`, 0/1 and the words its
    /// validator knows ("yes", "off", …) are read.
    mutating func optionalBool(_ key: String) -> Bool?? {
        guard let value = fields[key], value != .null else { return .some(nil) }
        switch value {
        case .bool(let flag):
            return .some(flag)
        case .integer(let whole) where whole == 0 || whole == 1:
            return .some(whole == 1)
        case .string(let text):
            switch text.lowercased() {
            case "1", "on", "t", "true", "y", "yes": return .some(true)
            case "0", "off", "f", "false", "n", "no": return .some(false)
            default:
                note("bool_parsing", key, "Input should be a valid boolean, unable to interpret input", value)
                return nil
            }
        default:
            note("bool_type", key, "Input should be a valid boolean", value)
            return nil
        }
    }

    /// A required integer that must be one of `allowed` (`Literal[1, -1]`).
    mutating func literal(_ key: String, _ allowed: [Int64]) -> Int64? {
        let expected = allowed.map(String.init).joined(separator: " or ")
        guard let value = fields[key] else {
            note("missing", key, "Field required", nil)
            return nil
        }
        if case .integer(let whole) = value, allowed.contains(whole) { return whole }
        note("literal_error", key, "Input should be \(expected)", value, ctx: #"{"expected": "\#(expected)"}"#)
        return nil
    }

    /// An optional string that must be one of `allowed` when present; absent is `fallback`.
    mutating func choice(_ key: String, _ allowed: [String], fallback: String) -> String? {
        guard let value = fields[key] else { return fallback }
        if case .string(let text) = value, allowed.contains(text) { return text }
        let expected = allowed.map { "'\($0)'" }.joined(separator: " or ")
        note("literal_error", key, "Input should be \(expected)", value, ctx: #"{"expected": "\#(expected)"}"#)
        return nil
    }

    /// Notes a problem found after reading (a join code with control characters, say).
    mutating func refuse(_ key: String, type: String, _ msg: String, input: String) {
        note(type, key, msg, .string(input))
    }
}
