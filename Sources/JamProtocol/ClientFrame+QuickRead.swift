/// The frames members send most, votes, removals and adds, read without `JSONDecoder`.
///
/// Decoding a vote through `Decodable` costs the server more than anything else it does with
/// the frame: containers, boxes and metadata lookups, 13.5 % of the event loop's samples under
/// the durable load. Here the text is parsed once (`JSONValueParser`, which reads what
/// JSONDecoder reads) and the fields are taken from it. Only a frame whose every field
/// reads the one obvious way is taken; anything else (another command, a repeated key, a
/// `null`, a number that is no whole number, an id or item id out of bounds, a track source
/// that is not one of `TrackSource`'s) gives nil, and
/// `JSONDecoder` reads it as before, errors included. So both paths give the same frame
/// (`ClientFrameQuickReadTests` compares them on every shape and on seeded random frames),
/// and `Codable` stays the one definition of the wire format.
extension ClientFrame {
    /// The frame `bytes` hold when it is a vote, removal or add that reads without ambiguity; nil
    /// when `JSONDecoder` must decide. Validation is the caller's, as for any frame.
    package static func quickRead(_ bytes: UnsafeRawBufferPointer) -> ClientFrame? {
        var repeatedKey = false
        guard case .object(let fields)? = JSONValueParser.parse(bytes, repeatedKey: &repeatedKey), !repeatedKey,
              case .string(let type)? = fields["type"], case .object(let data)? = fields["data"]
        else { return nil }
        var id: String?
        if let value = fields["id"] {
            guard case .string(let text) = value, accepts(id: text) else { return nil }
            id = text
        }
        // Unknown keys are skipped, as the synthesized `Decodable` conformances skip them.
        switch ClientCommandType(rawValue: type) {
        case .vote:
            guard let itemId = itemID(data["itemId"]), case .integer(let value)? = data["value"] else { return nil }
            return ClientFrame(.vote(Vote(itemId: itemId, value: Int(value))), id: id)
        case .removeFromQueue:
            guard let itemId = itemID(data["itemId"]) else { return nil }
            return ClientFrame(.removeFromQueue(ItemRef(itemId: itemId)), id: id)
        case .addToQueue:
            guard case .object(let fields)? = data["track"], let track = track(fields), case .string(let nonce)? = data["nonce"]
            else { return nil }
            return ClientFrame(.addToQueue(AddToQueue(track: track, nonce: nonce)), id: id)
        case .hello, .ping, .skip, .requestSkip, .withdrawSkipRequest, .play, .pause, .resume, .seek, .ready, .syncReport,
            .updateSettings, .promote, .kick, .leave, .setDeviceDelay, .calibrate, .calibrationReport, .resync, nil:
            return nil
        }
    }

    /// An item id as `JamID`'s `Decodable` conformance takes it; nil where it would refuse it.
    private static func itemID(_ value: JSONValue?) -> ItemID? {
        guard case .string(let raw)? = value, JamID.accepts(raw) else { return nil }
        return JamID(raw)
    }

    /// A track as its synthesized `Decodable` conformance takes it; nil where that would refuse
    /// it, and where an optional field is `null` or of another type (left to `JSONDecoder`).
    private static func track(_ fields: [String: JSONValue]) -> Track? {
        guard case .string(let id)? = fields["id"], case .string(let name)? = fields["name"],
              case .string(let artist)? = fields["artist"], case .string(let rawSource)? = fields["source"],
              let source = TrackSource(rawValue: rawSource),
              let album = optionalString(fields["album"]), let artworkURL = optionalString(fields["artworkURL"]),
              let isrc = optionalString(fields["isrc"]), let asSent = optionalString(fields["asSent"])
        else { return nil }
        let durationMs: Int64?
        switch fields["durationMs"] {
        case nil: durationMs = nil
        case .integer(let whole)?: durationMs = whole
        case .null?, .bool?, .number?, .string?, .array?, .object?: return nil
        }
        return Track(
            id: id, name: name, artist: artist, album: album, durationMs: durationMs, artworkURL: artworkURL, isrc: isrc,
            source: source, asSent: asSent)
    }

    /// An optional string field: `.some(nil)` when absent, the text when it is a string, nil
    /// (undecided) for anything else.
    private static func optionalString(_ value: JSONValue?) -> String?? {
        switch value {
        case nil: .some(nil)
        case .string(let text)?: .some(text)
        case .null?, .bool?, .integer?, .number?, .array?, .object?: nil
        }
    }
}
