import JamQR

/// The invite as terminal lines: a QR code of the join link.
enum InviteCode {
    static func lines(for link: String) -> [String] {
        do {
            // Black on white whatever the terminal's theme: scanners want dark modules on light.
            return try QRCode(link, correction: .medium).terminalLines().map { TerminalText.Colour.blackOnWhite.paint($0) }
        } catch {
            // Only an absurdly long server address would not fit; the link is shown as text anyway.
            return ["(the link is too long for a QR code)"]
        }
    }
}
