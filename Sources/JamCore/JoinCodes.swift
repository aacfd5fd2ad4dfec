import JamProtocol

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

    /// Longest code `read` takes, in characters once normalised (`Limits.maxCodeLength` in the web client).
    public static let maxLength = 32

    /// The canonical form of a typed code: upper case, without hyphens or whitespace. Whitespace is
    /// Unicode's White_Space (tab, newlines, NEL, no-break and ideographic spaces: what a code
    /// pasted from a chat app carries); U+FEFF, U+200B and other invisible format characters are not
    /// whitespace and stay. Scalar by scalar, so the web client's `normaliseJoinCode` (js/protocol.js,
    /// a regular expression over code points) gives the same string; a `Character` filter would also
    /// drop a combining mark that follows a space. Tests/Fixtures/ClientParity/join-codes.json holds the
    /// cases both must agree on.
    public static func normalise(_ input: String) -> String {
        String(input.uppercased().unicodeScalars.filter { !$0.properties.isWhitespace && $0 != "-" })
    }

    /// A typed code, normalised; refused when nothing is left or more than `maxLength` characters are.
    public static func read(_ input: String) throws(JamError) -> String {
        let code = normalise(input)
        guard !code.isEmpty else { throw JamError(.invalidField, "code must not be empty") }
        guard code.count <= maxLength else { throw JamError(.invalidField, "code is too long") }
        return code
    }
}
