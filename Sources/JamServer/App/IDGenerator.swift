import Foundation
import JamProtocol

/// Mints identifiers; tests inject a deterministic one.
public protocol IDGenerator: Sendable {
    /// A new, unique identifier.
    func next() -> JamID
}

/// Random UUIDs (version 4), lowercase.
public struct RandomIDGenerator: IDGenerator {
    /// Creates the generator.
    public init() {}
    public func next() -> JamID { JamID(UUID()) }
}
