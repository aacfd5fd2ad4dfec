/// The frames members send most, votes and removals, read without `JSONDecoder`.
///
/// Decoding a vote through `Decodable` costs the server more than anything else it does with
/// the frame: containers, boxes and metadata lookups, 13.5 % of the event loop's samples under
/// the durable load. Here the text is parsed once (`JSONValueParser`, which reads what
/// JSONDecoder reads) and the two fields are taken from it. Only a frame whose every field
/// reads the one obvious way is taken; anything else (another command, a repeated key, a
/// `null`, a number that is no whole number, an id or item id out of bounds) gives nil, and
/// `JSONDecoder` reads it as before, errors included. So both paths give the same frame
/// (`ClientFrameQuickReadTests` compares them on every shape and on seeded random frames),
/// and `Codable` stays the one definition of the wire format.
extension ClientFrame {
    /// The frame `bytes` hold when it is a vote or removal that reads without ambiguity; nil
    /// when `JSONDecoder` must decide. Validation is the caller's, as for any frame.
    package static func quickRead(_ bytes: UnsafeRawBufferPointer) -> ClientFrame? {
        var repeatedKey = false
        guard case .object(let fields)? = JSONValueParser.parse(bytes, repeatedKey: &repeatedKey), !repeatedKey,
              case .string(let type)? = fields["type"], case .object(let data)? = fields["data"]
        else { return nil }
        var id: String?
        if let value = fields["id"] {
            guard case .string(let text) = value, !text.isEmpty, text.utf8.count <= maxIdLength else { return nil }
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
        case .hello, .ping, .addToQueue, .skip, .requestSkip, .play, .pause, .resume, .seek, .ready, .syncReport,
            .updateSettings, .promote, .kick, .leave, .setDeviceDelay, .calibrate, .calibrationReport, .resync, nil:
            return nil
        }
    }

    /// An item id as `JamID`'s `Decodable` conformance takes it; nil where it would refuse it.
    private static func itemID(_ value: JSONValue?) -> ItemID? {
        guard case .string(let raw)? = value, !raw.isEmpty, raw.utf8.count <= JamID.maxLength else { return nil }
        return JamID(raw)
    }
}
