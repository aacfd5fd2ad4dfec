import Foundation

typealias JSONObject = [String: Any]

/// `object` as JSON bytes (fragments allowed).
func jsonData(_ object: Any) throws -> Data {
    try JSONSerialization.data(withJSONObject: object, options: [.fragmentsAllowed])
}

/// `object` as a JSON string.
func jsonString(_ object: Any) -> String {
    guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.fragmentsAllowed, .sortedKeys]) else {
        return "\(object)"
    }
    return String(decoding: data, as: UTF8.self)
}

func parseJSON(_ data: Data) -> Any? {
    try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
}

func parseJSONObject(_ data: Data) -> JSONObject? {
    parseJSON(data) as? JSONObject
}

/// A JSON number as a Double (nil for anything else).
func jsonNumber(_ value: Any?) -> Double? {
    if let value = value as? Int { return Double(value) }
    if let value = value as? Double { return value }
    if let value = value as? NSNumber { return value.doubleValue }
    return nil
}

/// A JSON number that is a whole number, as an Int.
func jsonInt(_ value: Any?) -> Int? {
    guard let number = jsonNumber(value), number.rounded() == number, abs(number) < 9.0e15 else { return nil }
    return Int(number)
}

/// Structural JSON equality: objects by keys, arrays in order, numbers by value.
func jsonEqual(_ lhs: Any?, _ rhs: Any?) -> Bool {
    switch (lhs, rhs) {
    case (nil, nil):
        return true
    case (let l as JSONObject, let r as JSONObject):
        guard Set(l.keys) == Set(r.keys) else { return false }
        return l.keys.allSatisfy { jsonEqual(l[$0], r[$0]) }
    case (let l as [Any], let r as [Any]):
        return l.count == r.count && zip(l, r).allSatisfy { jsonEqual($0, $1) }
    case (let l as String, let r as String):
        return l == r
    case (is NSNull, is NSNull):
        return true
    default:
        if let l = jsonNumber(lhs), let r = jsonNumber(rhs) { return l == r }
        if let l = lhs as? Bool, let r = rhs as? Bool { return l == r }
        return false
    }
}

/// Whether `value` is JSON null.
func isJSONNull(_ value: Any?) -> Bool {
    value is NSNull
}

extension Dictionary where Key == String, Value == Any {
    func string(_ key: String) -> String? { self[key] as? String }
    func int(_ key: String) -> Int? { jsonInt(self[key]) }
    func number(_ key: String) -> Double? { jsonNumber(self[key]) }
    func bool(_ key: String) -> Bool? { self[key] as? Bool }
    func object(_ key: String) -> JSONObject? { self[key] as? JSONObject }
    func objects(_ key: String) -> [JSONObject]? { self[key] as? [JSONObject] }
    /// Whether the key is present with a JSON null.
    func isNull(_ key: String) -> Bool { isJSONNull(self[key]) }
}

/// Unix milliseconds now (the server runs on the same machine).
func nowMs() -> Int {
    Int((Date().timeIntervalSince1970 * 1000).rounded())
}

/// A PirateRadio track. `durationMs` nil leaves the field out.
func prTrack(_ n: Int, durationMs: Int? = 180_000) -> JSONObject {
    var track: JSONObject = [
        "id": "spotify:track:\(n)",
        "name": "Song \(n)",
        "artist": "Artist \(n)",
        "albumName": "Album \(n)",
        "albumArtURL": "https://i.scdn.co/image/art\(n)",
    ]
    if let durationMs { track["durationMs"] = durationMs }
    return track
}

/// The ids of a list of tracks.
func trackIds(_ tracks: [JSONObject]?) -> [String] {
    (tracks ?? []).map { $0.string("id") ?? "<no id>" }
}

/// Whether `actual` carries `expected`'s PirateRadio fields with the same values
/// (fields absent in `expected` may be absent or null in `actual`).
func sameTrack(_ actual: JSONObject?, _ expected: JSONObject) -> Bool {
    guard let actual else { return false }
    for key in ["id", "name", "artist", "albumName", "albumArtURL", "durationMs"] {
        if let value = expected[key] {
            if !jsonEqual(actual[key], value) { return false }
        } else if let value = actual[key], !isJSONNull(value) {
            return false
        }
    }
    return true
}
