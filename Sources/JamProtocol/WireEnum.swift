/// A string enum a client sends: a value it does not take is refused naming the values it
/// does ("field settings.ordering: must be one of votes, fair; got \"random\""), where the
/// standard decoding names neither.
public protocol WireEnum: RawRepresentable, CaseIterable, Decodable where RawValue == String {}

extension WireEnum {
    /// Decodes the raw value, refusing one the enum does not have.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let raw = try container.decode(String.self)
        guard let value = Self(rawValue: raw) else {
            let known = Self.allCases.map(\.rawValue).joined(separator: ", ")
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "must be one of \(known); got \"\(raw.prefix(64))\"")
        }
        self = value
    }
}
