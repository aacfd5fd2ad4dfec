import Foundation

/// Reads tags, length and cover art of WAV, FLAC, MP3, Ogg Vorbis, Ogg Opus, MP4/M4A and
/// ADTS AAC files. The format comes from the file's first bytes, never its name.
public enum AudioFile {
    /// Why a file could not be read; `description` is the reason to show people.
    public struct ReadError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The reason, e.g. "truncated FLAC STREAMINFO" or "no MPEG audio frames found".
        public var description: String

        /// An error with `reason`.
        public init(_ reason: String) { description = reason }
    }

    /// File name extensions the library scan looks at.
    public static let extensions: Set<String> = ["wav", "wave", "flac", "mp3", "ogg", "oga", "opus", "m4a", "m4b", "mp4", "aac"]

    /// Names of picture files used as a cover for the audio beside them, in order of preference.
    public static let sidecarCoverNames = ["cover", "folder", "front", "album"].flatMap { name in
        ["jpg", "jpeg", "png"].map { "\(name).\($0)" }
    }

    /// Tags, length and format of the audio file at `url`.
    public static func read(_ url: URL) throws(ReadError) -> AudioMetadata {
        let file = try FileReader(url)
        let metadata = try parse(file, cover: false).metadata
        // Even silence takes more than 16 bytes a second in these formats (FLAC's is the
        // smallest, ~150); fewer means a damaged length field, not a very long track.
        if metadata.durationMs > 0, Double(file.size) / (Double(metadata.durationMs) / 1000) < 16 {
            throw ReadError(String(format: "implausible length (%.0f hours in %d bytes)", Double(metadata.durationMs) / 3_600_000, file.size))
        }
        return metadata
    }

    /// Tags, length and format of an audio file already in memory, with its embedded cover.
    public static func read(bytes: [UInt8]) throws(ReadError) -> (metadata: AudioMetadata, cover: CoverArt?) {
        let parsed = try parse(FileReader(bytes: bytes), cover: true)
        return (parsed.metadata, parsed.cover)
    }

    /// The picture embedded in the file at `url`, else a cover picture beside it
    /// (`cover.jpg`, `folder.png`, … in any letter case); nil when there is neither.
    /// A cover over `CoverArt.maxBytes` counts as none (a picture beside the audio is not
    /// even read), so the server keeps "no cover" for it rather than reading it on every request.
    public static func coverArt(_ url: URL) throws(ReadError) -> CoverArt? {
        // An embedded cover too large to serve leaves the picture beside the audio to stand in.
        if let embedded = try embeddedCoverArt(url), embedded.data.count <= CoverArt.maxBytes { return embedded }
        guard let sidecar = try sidecarCover(beside: url) else { return nil }
        let size: Int
        do {
            size = try sidecar.resourceValues(forKeys: [.fileSizeKey]).fileSize ?? 0
        } catch {
            throw ReadError("the cover \(sidecar.lastPathComponent) cannot be read")
        }
        guard size <= CoverArt.maxBytes else { return nil }
        let data: Data
        do {
            data = try Data(contentsOf: sidecar)
        } catch {
            throw ReadError("the cover \(sidecar.lastPathComponent) cannot be read")
        }
        let declared = sidecar.pathExtension.lowercased() == "png" ? "image/png" : "image/jpeg"
        return CoverArt(bytes: [UInt8](data), declared: declared)
    }

    /// The picture embedded in the file at `url` (a front cover when there are several).
    public static func embeddedCoverArt(_ url: URL) throws(ReadError) -> CoverArt? {
        try parse(FileReader(url), cover: true).cover
    }

    /// The cover picture file in the folder of `url`, if there is one.
    public static func sidecarCover(beside url: URL) throws(ReadError) -> URL? {
        let folder = url.deletingLastPathComponent()
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        } catch {
            throw ReadError("the folder \(folder.path) cannot be listed")
        }
        // Only a file of the folder's own: a link named cover.jpg could lead to any file.
        let covers = Set(sidecarCoverNames)
        return sidecarCover(among: names.filter { covers.contains($0.lowercased()) && isRegularFile(folder.appendingPathComponent($0)) })
            .map { folder.appendingPathComponent($0) }
    }

    /// Whether `url` is a plain file itself, not a link to one or a folder.
    static func isRegularFile(_ url: URL) -> Bool {
        ownType(url) == .typeRegular
    }

    /// Whether `url` is a symbolic link.
    static func isLink(_ url: URL) -> Bool {
        ownType(url) == .typeSymbolicLink
    }

    /// What `url` itself is (links are not followed); nil when it cannot be looked at, which
    /// makes it neither a file nor a link.
    private static func ownType(_ url: URL) -> FileAttributeType? {
        do {
            return try FileManager.default.attributesOfItem(atPath: url.path)[.type] as? FileAttributeType
        } catch {
            return nil
        }
    }

    /// The preferred cover picture among file `names` of one folder.
    static func sidecarCover(among names: [String]) -> String? {
        let byLowercased = Dictionary(names.map { ($0.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
        return sidecarCoverNames.lazy.compactMap { byLowercased[$0] }.first
    }

    /// Identifies the format by its magic bytes and hands the file to its reader.
    static func parse(_ file: FileReader, cover: Bool) throws(ReadError) -> ParsedAudio {
        guard file.size > 0 else { throw ReadError("empty file") }
        let head = try file.read(at: 0, count: 12)
        if Bytes.match(head, 0, "RIFF"), Bytes.match(head, 8, "WAVE") { return try wav(file) }
        if Bytes.match(head, 0, "fLaC") { return try FLACFile.read(file, at: 0, cover: cover) }
        if Bytes.match(head, 0, "OggS") { return try OggFile.read(file, cover: cover) }
        if Bytes.match(head, 4, "ftyp") { return try MP4File.read(file, cover: cover) }
        if Bytes.match(head, 0, "ID3") {
            // An ID3v2 tag may front MP3, ADTS AAC and (rarely) FLAC: look behind it.
            let start = try ID3v2.totalSize(file, at: 0)
            let next = try file.read(at: start, count: 8)
            if Bytes.match(next, 0, "fLaC") { return try FLACFile.read(file, at: start, cover: cover) }
            if ADTSFile.isHeader(next) { return try ADTSFile.read(file, cover: cover) }
            return try MP3File.read(file, cover: cover)
        }
        if ADTSFile.isHeader(head) { return try ADTSFile.read(file, cover: cover) }
        if MPEGFrame(head, at: 0) != nil { return try MP3File.read(file, cover: cover) }
        if head.count >= 2, head[0] == 0xFF, head[1] & 0xE0 == 0xE0 {
            throw ReadError("MPEG audio other than layer III is not supported")
        }
        throw ReadError("not a known audio format (not WAV, FLAC, MP3, Ogg, MP4 or AAC)")
    }

    private static func wav(_ file: FileReader) throws(ReadError) -> ParsedAudio {
        // Headers and tags live in the first chunks; 64 kB covers them.
        let head = try file.read(at: 0, count: 65_536)
        let wav: WAVFile
        do {
            wav = try WAVFile.parse(Data(head), fileSize: file.size)
        } catch let error as WAVFile.ReadError {
            throw ReadError(error.description)
        } catch {
            throw ReadError("\(error)")
        }
        guard wav.dataBytes > 0 else { throw ReadError("WAV without audio data") }
        let tags = Tags(title: TagText.clean(wav.title), artist: TagText.clean(wav.artist), album: TagText.clean(wav.album))
        let frames = Int64(wav.dataBytes / max(1, wav.channels * wav.bitsPerSample / 8))
        return ParsedAudio(metadata: AudioMetadata(format: .wav, tags: tags, samples: frames, sampleRate: wav.sampleRate, hasCover: false))
    }
}
