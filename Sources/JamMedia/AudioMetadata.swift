import Foundation

/// The audio formats OpenJam reads, told apart by their content, not the file name.
public enum AudioFormat: String, Sendable, Hashable, CaseIterable {
    case wav, flac, mp3, vorbis, opus, mp4, aac

    /// The MIME type the file is served with; chosen so browsers' `<audio>` accepts it
    /// (Ogg Opus as plain `audio/ogg`, which every browser that plays Opus takes).
    public var contentType: String {
        switch self {
        case .wav: "audio/wav"
        case .flac: "audio/flac"
        case .mp3: "audio/mpeg"
        case .vorbis, .opus: "audio/ogg"
        case .mp4: "audio/mp4"
        case .aac: "audio/aac"
        }
    }

    /// A name for people: "Ogg Vorbis", "MP4/AAC".
    public var displayName: String {
        switch self {
        case .wav: "WAV"
        case .flac: "FLAC"
        case .mp3: "MP3"
        case .vorbis: "Ogg Vorbis"
        case .opus: "Ogg Opus"
        case .mp4: "MP4/AAC"
        case .aac: "AAC (ADTS)"
        }
    }
}

/// What the library needs to know about an audio file: tags, length, format and whether
/// it carries a cover (the picture itself is read on demand with `AudioFile.coverArt`).
public struct AudioMetadata: Sendable, Hashable {
    /// What the bytes are, whatever the file is called.
    public var format: AudioFormat
    /// The tags; nil when the file has none (the library then falls back to the file name).
    public var title: String?
    /// The artist, else the album artist.
    public var artist: String?
    /// The album.
    public var album: String?
    /// Length in milliseconds, without encoder priming and padding where the file says how much.
    public var durationMs: Int64
    /// Samples per second of the decoded audio (48 000 for Opus).
    public var sampleRate: Int
    /// Whether a picture is embedded in the file.
    public var hasCover: Bool

    /// Creates metadata.
    public init(format: AudioFormat, title: String? = nil, artist: String? = nil, album: String? = nil,
                durationMs: Int64, sampleRate: Int, hasCover: Bool = false) {
        self.format = format
        self.title = title
        self.artist = artist
        self.album = album
        self.durationMs = durationMs
        self.sampleRate = sampleRate
        self.hasCover = hasCover
    }

    /// The MIME type to serve the file with.
    public var contentType: String { format.contentType }

    init(format: AudioFormat, tags: Tags, samples: Int64, sampleRate: Int, hasCover: Bool) {
        self.init(format: format, title: tags.title, artist: tags.artist ?? tags.albumArtist, album: tags.album,
                  durationMs: Self.milliseconds(samples, per: Int64(sampleRate)), sampleRate: sampleRate, hasCover: hasCover)
    }

    /// `units` of `1/scale` seconds in milliseconds, rounded. Computed in floating point and
    /// clamped, because corrupt counts (an Ogg granule near 2^63) would overflow integers.
    static func milliseconds(_ units: Int64, per scale: Int64) -> Int64 {
        guard scale > 0, units > 0 else { return 0 }
        let value = Double(units) * 1000 / Double(scale)
        return value.isFinite ? Int64(min(value, 1e15).rounded()) : 0
    }
}

/// A cover picture: its bytes and their MIME type.
public struct CoverArt: Sendable, Hashable {
    /// The image file's bytes.
    public var data: Data
    /// `image/jpeg`, `image/png`, …: what to serve the bytes as.
    public var mimeType: String

    /// The largest cover served: no screen needs more, and each request for a larger one
    /// would read and copy it again (the server's cache keeps none that large).
    public static let maxBytes = 16 << 20

    /// Creates a cover.
    public init(data: Data, mimeType: String) {
        self.data = data
        self.mimeType = mimeType
    }

    /// A cover whose type comes from the bytes when they are a known image (tags often
    /// declare `image/jpg`, `PNG` or nothing), else from what the tag declared.
    init(bytes: [UInt8], declared: String?) {
        self.init(data: Data(bytes), mimeType: Self.sniff(bytes) ?? Self.normalised(declared) ?? "application/octet-stream")
    }

    static func sniff(_ bytes: [UInt8]) -> String? {
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) { return "image/png" }
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if Bytes.match(bytes, 0, "GIF8") { return "image/gif" }
        if Bytes.match(bytes, 0, "RIFF"), Bytes.match(bytes, 8, "WEBP") { return "image/webp" }
        if Bytes.match(bytes, 0, "BM") { return "image/bmp" }
        return nil
    }

    static func normalised(_ declared: String?) -> String? {
        guard let type = TagText.clean(declared)?.lowercased() else { return nil }
        switch type {
        case "jpg", "jpeg", "image/jpg", "image/jpeg": return "image/jpeg"
        case "png", "image/png": return "image/png"
        case "gif", "image/gif": return "image/gif"
        case "webp", "image/webp": return "image/webp"
        case "bmp", "image/bmp": return "image/bmp"
        // Any other declared type is not trusted: an `image/svg+xml` cover would run its
        // scripts on the server's own origin, where the page keeps its sign-in.
        default: return nil
        }
    }
}

/// Tags as the readers find them, before the library's fallbacks.
struct Tags: Sendable, Equatable {
    var title: String?
    var artist: String?
    var album: String?
    /// Used as the artist when a file names only the album artist.
    var albumArtist: String?

    /// Fills the fields still empty from `other` (an ID3v1 tag behind an ID3v2 one).
    mutating func fillGaps(from other: Tags) {
        title = title ?? other.title
        artist = artist ?? other.artist
        album = album ?? other.album
        albumArtist = albumArtist ?? other.albumArtist
    }
}

/// One reader's result: the metadata, and the cover when it was asked for.
struct ParsedAudio {
    var metadata: AudioMetadata
    var cover: CoverArt?
}

/// Collects embedded pictures: the first front cover (picture type 3) wins, else the first
/// picture. Only counts them unless the bytes are wanted.
struct CoverPicker {
    let wanted: Bool
    private(set) var found = false
    private(set) var best: CoverArt?
    private var bestIsFront = false

    init(wanted: Bool) { self.wanted = wanted }

    /// Offers a picture; `make` (which reads it and says its picture type) runs only
    /// when the bytes are wanted and no front cover has been chosen yet.
    mutating func offer(_ make: () throws(AudioFile.ReadError) -> (type: Int?, cover: CoverArt?)) throws(AudioFile.ReadError) {
        found = true
        guard wanted, !bestIsFront else { return }
        let (type, cover) = try make()
        guard let cover, best == nil || type == 3 else { return }
        best = cover
        bestIsFront = type == 3
    }

    /// Notes a picture without its bytes (when scanning).
    mutating func note() { found = true }
}
