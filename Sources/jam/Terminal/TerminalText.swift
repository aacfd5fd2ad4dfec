import Foundation

/// What reaches the terminal: printable text and the screen's own colours (`Colour`). Every
/// other control character is dropped, so a name or a title from a server cannot move the
/// cursor, set the window's title, write the clipboard (OSC 52), or hide text (`ESC [ 8 m`,
/// black on black); a tab becomes a space.
enum TerminalText {
    /// The colours the screen writes, and the only escape sequences that reach the terminal.
    enum Colour: String, CaseIterable {
        case reset = "\u{1B}[0m"
        case green = "\u{1B}[32m"
        case amber = "\u{1B}[33m"
        case red = "\u{1B}[31m"
        /// Black on bright white, for the QR code's contrast whatever the terminal's theme.
        case blackOnWhite = "\u{1B}[30;107m"

        /// `text` in this colour, then the terminal's own.
        func paint(_ text: String) -> String { rawValue + text + Colour.reset.rawValue }
    }

    private static let colours = Set(Colour.allCases.map { Array($0.rawValue.unicodeScalars) })

    static func safe(_ text: String) -> String {
        let scalars = Array(text.unicodeScalars)
        var kept = String.UnicodeScalarView()
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "\u{1B}" {
                if let end = colourEnd(scalars, from: index) {
                    kept.append(contentsOf: scalars[index...end])
                    index = end + 1
                } else {
                    index += 1
                }
                continue
            }
            if scalar == "\t" {
                kept.append(" ")
            } else if isPrintable(scalar) {
                kept.append(scalar)
            }
            index += 1
        }
        return String(kept)
    }

    /// Whether `scalar` may reach the screen: neither a C0 nor a C1 control character.
    static func isPrintable(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value >= 0x20 && !(0x7F...0x9F).contains(scalar.value)
    }

    /// `text` without its last word and the spaces after it, as a shell's Ctrl+W leaves it.
    static func droppingLastWord(_ text: String) -> String {
        var kept = Substring(text)
        while kept.last?.isWhitespace == true { kept.removeLast() }
        while let last = kept.last, !last.isWhitespace { kept.removeLast() }
        return String(kept)
    }

    /// Pasted text as one prompt line: its lines joined by one space (a title copied with the
    /// line break after it, or a title and artist on lines of their own), the spaces around
    /// each break dropped but those at its two ends kept (" - Band" pasted after "Song" is
    /// "Song - Band"), tabs as spaces, and every other control character dropped.
    static func pastedLine(_ text: String) -> String {
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).map { line in
            String(String.UnicodeScalarView(line.unicodeScalars.compactMap { $0 == "\t" ? " " : isPrintable($0) ? $0 : nil }))
        }
        var parts: [Substring] = []
        for (index, line) in lines.enumerated() {
            var part = Substring(line)
            if index > 0 { part = part.drop(while: \.isWhitespace) }
            if index < lines.count - 1 { while part.last?.isWhitespace == true { part = part.dropLast() } }
            if !part.isEmpty { parts.append(part) }
        }
        return parts.joined(separator: " ")
    }

    /// Where the screen's colour sequence starting at `start` (an ESC) ends, or nil when it is
    /// not one of them.
    private static func colourEnd(_ scalars: [Unicode.Scalar], from start: Int) -> Int? {
        var index = start + 1
        guard index < scalars.count, scalars[index] == "[" else { return nil }
        index += 1
        while index < scalars.count, ("0"..."9").contains(scalars[index]) || scalars[index] == ";" { index += 1 }
        guard index < scalars.count, scalars[index] == "m", colours.contains(Array(scalars[start...index])) else { return nil }
        return index
    }
}
