import Foundation

/// A folder of tiny tagged WAV files for `jam serve --music`, generated once and cached.
enum BenchLibrary {
    /// The cache folder: `$XDG_CACHE_HOME/openjam-bench` (else `~/.cache/openjam-bench`).
    static var cacheRoot: URL {
        let environment = ProcessInfo.processInfo.environment
        if let xdg = environment["XDG_CACHE_HOME"], !xdg.isEmpty {
            return URL(fileURLWithPath: xdg).appendingPathComponent("openjam-bench")
        }
        let home = environment["HOME"].map { URL(fileURLWithPath: $0) } ?? FileManager.default.temporaryDirectory
        return home.appendingPathComponent(".cache/openjam-bench")
    }

    /// A library of `count` one-second WAVs (4 kHz, 8-bit mono, about 4 KB each) with title,
    /// artist and album tags, in folders of 500; reused when a complete one is cached.
    static func ensure(count: Int, in root: URL) throws -> URL {
        let folder = root.appendingPathComponent("library-\(count)")
        let marker = folder.appendingPathComponent(".complete")
        if FileManager.default.fileExists(atPath: marker.path) { return folder }
        Console.line("prepare: generating \(count) WAV files into \(folder.path) (once)…")
        if FileManager.default.fileExists(atPath: folder.path) { try FileManager.default.removeItem(at: folder) }
        for index in 0..<count {
            let directory = folder.appendingPathComponent(String(format: "disc-%03d", index / 500))
            if index % 500 == 0 { try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true) }
            let file = directory.appendingPathComponent(String(format: "track-%05d.wav", index))
            let wav = wave(title: String(format: "Bench Track %05d", index), artist: "Bench Artist \(index % 97)", album: "Bench Album \(index % 500)")
            try Data(wav).write(to: file)
        }
        try Data("\(count)\n".utf8).write(to: marker)
        return folder
    }

    /// A 1 s, 4 kHz, 8-bit mono PCM WAV of a quiet tone with INFO tags.
    static func wave(title: String, artist: String, album: String) -> [UInt8] {
        /// Little-endian 16 bits.
        func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8((value >> 8) & 0xFF)] }
        /// Little-endian 32 bits.
        func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8((value >> (8 * $0)) & 0xFF) } }
        /// One RIFF INFO tag, NUL-terminated and padded to even length.
        func tag(_ key: String, _ value: String) -> [UInt8] {
            var text = Array(value.utf8) + [0]
            if text.count % 2 == 1 { text.append(0) }
            return Array(key.utf8) + le32(text.count) + text
        }
        let rate = 4_000
        let info = Array("INFO".utf8) + tag("INAM", title) + tag("IART", artist) + tag("IPRD", album)
        let samples = (0..<rate).map { UInt8(128 + Int(8 * sin(Double($0) * 2 * .pi * 440 / Double(rate)))) }
        let format = Array("fmt ".utf8) + le32(16) + le16(1) + le16(1) + le32(rate) + le32(rate) + le16(1) + le16(8)
        let body = Array("WAVE".utf8) + format + Array("LIST".utf8) + le32(info.count) + info + Array("data".utf8) + le32(samples.count) + samples
        return Array("RIFF".utf8) + le32(body.count) + body
    }
}
