import JamProtocol

/// Mints identifiers; tests inject a deterministic one.
public protocol IDGenerator: Sendable {
    /// A new, unique identifier.
    func next() -> JamID
}

/// Random UUIDs (version 4), lowercase, from the system's generator.
public struct RandomIDGenerator: IDGenerator {
    /// Creates the generator.
    public init() {}
    public func next() -> JamID {
        var system = SystemRandomNumberGenerator()
        return JamID.randomUUID(using: &system)
    }
}
