/// What reaches the terminal: printable text and the screen's own colours (SGR: `ESC [`
/// digits and semicolons `m`). Every other control character is dropped, so a name or a title
/// from a server cannot move the cursor, set the window's title or write the clipboard
/// (OSC 52); a tab becomes a space.
enum TerminalText {
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
            } else if scalar.value >= 0x20 && !(0x7F...0x9F).contains(scalar.value) {
                kept.append(scalar)
            }
            index += 1
        }
        return String(kept)
    }

    /// Where the colour sequence starting at `start` (an ESC) ends, or nil when it is not one.
    private static func colourEnd(_ scalars: [Unicode.Scalar], from start: Int) -> Int? {
        var index = start + 1
        guard index < scalars.count, scalars[index] == "[" else { return nil }
        index += 1
        while index < scalars.count, ("0"..."9").contains(scalars[index]) || scalars[index] == ";" { index += 1 }
        return index < scalars.count && scalars[index] == "m" ? index : nil
    }
}
