#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// The controlling terminal: raw input, the alternate screen, and its size. `restore()`
/// puts everything back as it was, also after a signal.
final class Terminal: @unchecked Sendable {
    // Mutated only from the thread that owns the terminal session (setup and teardown).
    private var original = termios()
    private var active = false

    /// Rows and columns now.
    var size: (rows: Int, columns: Int) {
        var window = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &window) == 0, window.ws_col > 0, window.ws_row > 0 {
            return (Int(window.ws_row), Int(window.ws_col))
        }
        return (24, 80)
    }

    /// True when standard input and output are a terminal.
    static var isInteractive: Bool { isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1 }

    /// Raw mode, alternate screen, hidden cursor.
    func enter() {
        guard !active else { return }
        tcgetattr(STDIN_FILENO, &original)
        var raw = original
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG | IEXTEN)
        raw.c_iflag &= ~tcflag_t(IXON | ICRNL | BRKINT | INPCK | ISTRIP)
        raw.c_cflag |= tcflag_t(CS8)
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw)
        // Bracketed paste: the terminal marks pasted text, so a paste's lines are text for a
        // prompt and never keys that act.
        write("\u{1B}[?1049h\u{1B}[?25l\u{1B}[?2004h\u{1B}[2J")
        active = true
    }

    /// Everything back as it was.
    func restore() {
        guard active else { return }
        write("\u{1B}[0m\u{1B}[?2004l\u{1B}[?25h\u{1B}[?1049l")
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &original)
        active = false
    }

    /// Draws `lines` from the top-left, clearing what is left of each line and below.
    func draw(_ lines: [String]) {
        var output = "\u{1B}[H"
        for (index, line) in lines.enumerated() {
            output += TerminalText.safe(line) + "\u{1B}[K"
            if index < lines.count - 1 { output += "\r\n" }
        }
        output += "\u{1B}[J"
        write(output)
    }

    func write(_ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { buffer in
                Foundation.write(STDOUT_FILENO, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if written <= 0 { break }
            offset += written
        }
    }
}
