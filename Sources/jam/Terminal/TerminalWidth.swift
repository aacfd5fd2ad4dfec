#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How many columns text takes on a terminal, by the C library's `wcwidth`: CJK and emoji
/// take two, combining marks none. Padding by characters instead let a line with a name in
/// Japanese run past the edge, wrap, and scroll the screen on every redraw.
enum TerminalWidth {
    /// `wcwidth` answers for non-ASCII only under a UTF-8 character type; set once, before
    /// the first measure, to the first of the spellings systems use that this one has (the
    /// terminal client sets nothing else by locale).
    private static let characterTypeSet: Bool = ["C.UTF-8", "C.utf8", "en_US.UTF-8", "UTF-8"].contains { name in
        name.withCString { setlocale(LC_CTYPE, $0) != nil }
    }

    /// The C library's `wcwidth`, which Swift's Glibc module does not export (it sits behind
    /// `_XOPEN_SOURCE` in `wchar.h`): looked up once, with C's calling convention.
    private static let wcwidth: (@convention(c) (Int32) -> Int32)? = {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "wcwidth") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32) -> Int32).self)
    }()

    /// Columns `character` takes: those of its first scalar (what follows it in one
    /// character, a combining mark or a joiner, adds none), two with an emoji selector or for
    /// a scalar drawn as emoji by default (a flag's letters among them, which `wcwidth`
    /// counts as one each while terminals draw the flag two wide).
    static func of(_ character: Character) -> Int {
        guard let first = character.unicodeScalars.first else { return 0 }
        if first.isASCII { return 1 }
        _ = characterTypeSet
        if first.properties.isEmojiPresentation || character.unicodeScalars.contains("\u{FE0F}") { return 2 }
        guard let wcwidth else { return 1 }
        let columns = Int(wcwidth(Int32(bitPattern: first.value)))
        // Unknown to the C library (or no UTF-8 locale): one column is the least wrong guess.
        return columns < 0 ? 1 : columns
    }

    /// Columns `text` takes.
    static func of(_ text: String) -> Int {
        text.reduce(0) { $0 + of($1) }
    }

    /// The longest start of `text` that fits in `columns`.
    static func prefix(_ text: String, columns: Int) -> String {
        var used = 0
        var end = text.startIndex
        for index in text.indices {
            let width = of(text[index])
            if used + width > columns { break }
            used += width
            end = text.index(after: index)
        }
        return String(text[..<end])
    }
}
