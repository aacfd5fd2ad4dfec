import Foundation
import JamProtocol

/// A song in the local music library.
public struct LibraryTrack: Sendable, Hashable {
    /// Stable across rescans: derived from the file's path inside its library folder.
    public var id: String
    public var title: String
    public var artist: String
    public var album: String?
    public var durationMs: Int64
    /// Where the audio is.
    public var file: URL
    /// The MIME type the audio is served with.
    public var contentType: String
    /// Whether a cover can be had with `AudioFile.coverArt(file)`: embedded, or a picture
    /// file beside it. The picture is read only when asked for.
    public var hasCover: Bool

    /// Creates a track.
    public init(id: String, title: String, artist: String, album: String?, durationMs: Int64, file: URL, contentType: String,
                hasCover: Bool = false) {
        self.id = id
        self.title = title
        self.artist = artist
        self.album = album
        self.durationMs = durationMs
        self.file = file
        self.contentType = contentType
        self.hasCover = hasCover
    }

    /// The wire form clients queue.
    public var track: Track { track(artworkURL: nil) }

    /// The wire form, pointing at the cover the server serves (pass nil when `hasCover` is false).
    public func track(artworkURL: String?) -> Track {
        Track(id: id, name: title, artist: artist, album: album, durationMs: durationMs, artworkURL: artworkURL, source: .library)
    }

    /// A stable identifier for a file at `relativePath` inside its library (FNV-1a, 64 bits).
    public static func stableID(relativePath: String) -> String {
        "lib-" + String(fnv1a64(relativePath), radix: 16).leftPadded(to: 16)
    }

    /// FNV-1a over the UTF-8 bytes of `text`: the same on every platform and run, unlike `Hasher`.
    public static func fnv1a64(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return hash
    }
}

extension String {
    fileprivate func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
