import Foundation

/// A dozen short pieces OpenJam synthesises on first start, so a fresh server plays music
/// at once without anybody's files.
public enum DemoLibrary {
    /// One piece: a name, a tempo and a melody in scale steps.
    struct Piece {
        let title: String
        let seconds: Double
        let tempo: Double
        let root: Double
        let melody: [Int]
    }

    static let artist = "The OpenJam Demo Band"
    static let album = "Listen Together"

    static let pieces: [Piece] = [
        Piece(title: "Morning Light", seconds: 24, tempo: 96, root: 261.63, melody: [0, 2, 4, 7, 4, 2, 0, -3]),
        Piece(title: "Harbour Lights", seconds: 28, tempo: 84, root: 220.00, melody: [0, 4, 7, 9, 7, 4, 2, 0]),
        Piece(title: "Paper Planes", seconds: 22, tempo: 120, root: 293.66, melody: [0, 2, 0, 4, 2, 5, 4, 2]),
        Piece(title: "Slow River", seconds: 32, tempo: 72, root: 196.00, melody: [0, -1, 0, 2, 4, 2, 0, -3]),
        Piece(title: "Neon Rain", seconds: 26, tempo: 110, root: 246.94, melody: [0, 3, 5, 7, 5, 3, 7, 10]),
        Piece(title: "Café au Lait", seconds: 24, tempo: 100, root: 329.63, melody: [0, 4, 2, 5, 4, 7, 5, 4]),
        Piece(title: "Night Bus", seconds: 30, tempo: 88, root: 174.61, melody: [0, 0, 3, 5, 3, 0, -2, 0]),
        Piece(title: "Kite Festival", seconds: 20, tempo: 132, root: 349.23, melody: [0, 2, 4, 5, 7, 5, 4, 2]),
        Piece(title: "Blue Hour", seconds: 34, tempo: 68, root: 207.65, melody: [0, 3, 7, 10, 7, 3, 2, 0]),
        Piece(title: "Sunday Crossword", seconds: 22, tempo: 104, root: 277.18, melody: [0, 5, 4, 2, 0, 2, 4, 5]),
        Piece(title: "Lantern Walk", seconds: 28, tempo: 90, root: 233.08, melody: [0, 2, 3, 5, 7, 8, 7, 5]),
        Piece(title: "Last Train Home", seconds: 36, tempo: 76, root: 185.00, melody: [0, 4, 7, 12, 11, 7, 4, 2]),
    ]

    /// Writes the demo pieces into `directory` (those not there yet); returns their files.
    @discardableResult
    public static func install(into directory: URL, sampleRate: Int = 22_050) throws -> [URL] {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var files: [URL] = []
        for (index, piece) in pieces.enumerated() {
            let name = String(format: "%02d ", index + 1) + piece.title.replacingOccurrences(of: " ", with: "-") + ".wav"
            let file = directory.appendingPathComponent(name)
            files.append(file)
            if FileManager.default.fileExists(atPath: file.path) { continue }
            let samples = synthesise(piece, sampleRate: sampleRate)
            let data = WAVFile.encode(samples: samples, sampleRate: sampleRate, title: piece.title, artist: artist, album: album)
            try data.write(to: file, options: .atomic)
        }
        return files
    }

    /// A melody over a soft drone, each note with a short attack and a decay, so it sounds
    /// like music rather than a test tone. Phases and the decay advance by multiplication
    /// per sample, which keeps the synthesis cheap.
    static func synthesise(_ piece: Piece, sampleRate: Int) -> [Float] {
        let count = Int(piece.seconds * Double(sampleRate))
        let rate = Double(sampleRate)
        let beatSamples = Int(60.0 / piece.tempo * rate)
        let major = [0, 2, 4, 5, 7, 9, 11]
        func frequency(_ step: Int) -> Double {
            let octave = Int((Double(step) / 7).rounded(.down))
            let degree = ((step % 7) + 7) % 7
            return piece.root * pow(2, Double(octave) + Double(major[degree]) / 12)
        }
        var samples = [Float](repeating: 0, count: count)
        let decayPerSample = exp(-3 / rate)
        let attackSamples = 0.02 * rate
        let droneStep = 2 * Double.pi * piece.root / 2 / rate
        var dronePhase = 0.0
        var melodyPhase = 0.0
        var melodyStep = 0.0
        var decay = 1.0
        for index in 0..<count {
            let within = index % beatSamples
            if within == 0 {
                let note = index / beatSamples
                let step = piece.melody[note % piece.melody.count] + (note / piece.melody.count % 2 == 1 ? 2 : 0)
                melodyStep = 2 * Double.pi * frequency(step) / rate
                decay = 1
            }
            let envelope = min(1, Double(within) / attackSamples) * decay
            decay *= decayPerSample
            let t = Double(index) / rate
            let fade = min(1, t, (piece.seconds - t) / 1.5)
            samples[index] = Float((sin(melodyPhase) * envelope * 0.35 + sin(dronePhase) * 0.12) * fade)
            melodyPhase += melodyStep
            dronePhase += droneStep
            if melodyPhase > 2 * Double.pi { melodyPhase -= 2 * Double.pi }
            if dronePhase > 2 * Double.pi { dronePhase -= 2 * Double.pi }
        }
        return samples
    }
}
