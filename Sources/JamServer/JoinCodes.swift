/// Short join codes without look-alike characters (no 0/O, 1/I/L).
public enum JoinCodes {
    /// The characters a code is made of.
    public static let alphabet = Array("ABCDEFGHJKMNPQRSTUVWXYZ23456789")
    /// Characters in a code.
    public static let length = 6

    /// A random code.
    public static func make<R: RandomNumberGenerator>(using generator: inout R) -> String {
        String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
    }

    /// The canonical form of a typed code: upper case, spaces and dashes removed.
    public static func normalise(_ input: String) -> String {
        input.uppercased().filter { $0 != " " && $0 != "-" }
    }
}
