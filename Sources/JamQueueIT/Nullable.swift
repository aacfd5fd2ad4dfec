/// An optional field its backend writes as `null` when empty: synthesised `Encodable` leaves
/// an empty `Optional` out, and QueueIT's app reads some of these keys as always there.
@propertyWrapper
struct Nullable<Value: Encodable & Sendable & Equatable>: Encodable, Sendable, Equatable {
    var wrappedValue: Value?

    init(wrappedValue: Value?) {
        self.wrappedValue = wrappedValue
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(wrappedValue)
    }
}
