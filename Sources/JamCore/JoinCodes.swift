import JamProtocol

/// Join codes: short, random, easy to read aloud and type.
public struct JoinCodes: Sendable {
    /// The characters a code is made of.
    public let alphabet: [Character]
    /// The characters a code may start with.
    public let leading: [Character]
    /// Characters in a code.
    public let length: Int

    /// Codes of `length` characters from `alphabet`, the first from `leading` (all of
    /// `alphabet` when nil); none may be empty.
    public init(alphabet: [Character], length: Int, leading: [Character]? = nil) {
        precondition(!alphabet.isEmpty && length > 0 && leading?.isEmpty != true, "a join code needs characters to be made of")
        self.alphabet = alphabet
        self.leading = leading ?? alphabet
        self.length = length
    }

    /// OpenJam's codes: 6 characters without look-alikes (no 0/O, 1/I/L).
    public static let openJam = JoinCodes(alphabet: Array("ABCDEFGHJKMNPQRSTUVWXYZ23456789"), length: 6)
    /// PirateRadio's codes: 1000 to 9999, as its server makes them (its app may take any
    /// four digits typed; none it is given starts with 0).
    public static let pirateRadio = JoinCodes(alphabet: Array("0123456789"), length: 4, leading: Array("123456789"))

    /// A random code.
    public func make<R: RandomNumberGenerator>(using generator: inout R) -> String {
        String((0..<length).map { ($0 == 0 ? leading : alphabet).randomElement(using: &generator)! })
    }

    /// How many codes there are; nil beyond `Int`.
    public var count: Int? {
        var total = leading.count
        for _ in 1..<length {
            let (product, overflow) = total.multipliedReportingOverflow(by: alphabet.count)
            if overflow { return nil }
            total = product
        }
        return total
    }

    /// A random code `isTaken` says is free, or nil when every code is taken. Random tries
    /// first; when they all miss and there are at most a million codes (PirateRadio's
    /// 9,000), every code is looked at from a random one on, so a nearly full set still
    /// finds its last free codes and a full one ends instead of trying for ever.
    public func free<R: RandomNumberGenerator>(using generator: inout R, isTaken: (String) -> Bool) -> String? {
        for _ in 0..<1_000 {
            let code = make(using: &generator)
            if !isTaken(code) { return code }
        }
        guard let total = count, total <= 1_000_000 else { return nil }
        let start = Int.random(in: 0..<total, using: &generator)
        for step in 0..<total {
            let code = self.code(at: (start + step) % total)
            if !isTaken(code) { return code }
        }
        return nil
    }

    /// The code numbered `number` (0 ..< `count`), its last character the lowest digit.
    func code(at number: Int) -> String {
        var rest = number
        var characters = [Character](repeating: alphabet[0], count: length)
        for position in stride(from: length - 1, through: 0, by: -1) {
            let characterSet = position == 0 ? leading : alphabet
            characters[position] = characterSet[rest % characterSet.count]
            rest /= characterSet.count
        }
        return String(characters)
    }

    /// Whether `code`, normalised, has the length and characters of these codes: a code that
    /// has not is a slip of typing (an O for a 0), not a guess at a session's code.
    public func couldMake(_ code: String) -> Bool {
        code.count == length && code.first.map(leading.contains) == true && code.allSatisfy(alphabet.contains)
    }

    /// What a code is made of, in words for a refusal.
    public var shape: String {
        let first = leading == alphabet ? "" : ", the first from \(String(leading))"
        return "a join code is \(length) characters from \(String(alphabet))\(first)"
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

    /// A code a creator chose (QueueIT's app lets its host pick one), normalised; refused when
    /// no letter or digit is left to match it by as people type it ("----").
    public static func chosen(_ input: String) throws(JamError) -> String {
        let code = normalise(input)
        guard !code.isEmpty else { throw JamError(.invalidField, "the join code must have a letter or a digit") }
        return code
    }

    /// A typed code, normalised; refused when nothing is left or more than `maxLength` characters are.
    public static func read(_ input: String) throws(JamError) -> String {
        let code = normalise(input)
        guard !code.isEmpty else { throw JamError(.invalidField, "code must not be empty") }
        guard code.count <= maxLength else { throw JamError(.invalidField, "code is too long") }
        return code
    }
}
