import Crypto
import Foundation
import JamProtocol

/// A song typed as "Title - Artist" into the terminal's add prompt.
enum TypedTrack {
    /// The track `text` names, or nil when it has no title. The same title and artist (any
    /// case, any spacing around them) make the same id, so a session that does not allow a
    /// song twice refuses the second, as it does for the library's songs.
    static func track(from text: String) -> Track? {
        // " - " parts title from artist; a hyphen inside either ("Anti-Hero") stays.
        let split = text.range(of: " - ")
        let title = String(split.map { text[..<$0.lowerBound] } ?? text[...]).trimmingCharacters(in: .whitespaces)
        guard !title.isEmpty else { return nil }
        let artist = split.map { text[$0.upperBound...].trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 } ?? "Unknown artist"
        // Composed first: an "é" pasted as e + accent is the same song as one typed.
        let key = "\(title.lowercased())\n\(artist.lowercased())".precomposedStringWithCanonicalMapping
        let digest = SHA256.hash(data: Data(key.utf8))
        let id = "tui-" + digest.prefix(16).map { String(format: "%02x", $0) }.joined()
        return Track(id: id, name: title, artist: artist, durationMs: 180_000, source: .external)
    }
}
