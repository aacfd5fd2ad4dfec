/// Join codes: short, random, easy to read aloud and type.
public struct JoinCodes: Sendable {
    /// The characters a code is made of.
    public let alphabet: [Character]
    /// Characters in a code.
    public let length: Int

    /// OpenJam's codes: 6 characters without look-alikes (no 0/O, 1/I/L).
    public static let openJam = JoinCodes(alphabet: Array("ABCDEFGHJKMNPQRSTUVWXYZ23456789"), length: 6)
    /// PirateRadio's codes: 4 digits.
    public static let pirateRadio = JoinCodes(alphabet: Array("0123456789"), length: 4)

    /// A random code.
    public func make<R: RandomNumberGenerator>(using generator: inout R) -> String {
        String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
    }

    /// The canonical form of a typed code: upper case, spaces and dashes removed.
    public static func normalise(_ input: String) -> String {
        input.uppercased().filter { $0 != " " && $0 != "-" }
    }
}
