import Foundation
import JamMedia
import JamProtocol
import JamTestSupport
import Testing

/// Broken files give a reason, never a crash, a hang or a made-up track.
@Suite(.timeLimit(.minutes(2))) struct CorruptFileTests {
    /// A copy of fixture `name` cut to `length` bytes (negative: that many bytes off the end).
    static func truncated(_ name: String, to length: Int, in folder: URL) throws -> URL {
        let data = try MediaFixtures.data(name)
        let file = folder.appendingPathComponent("cut-\(length)-" + name)
        try data.prefix(length >= 0 ? length : data.count + length).write(to: file)
        return file
    }

    static func reason(_ file: URL) -> String? {
        do {
            _ = try AudioFile.read(file)
            return nil
        } catch {
            return error.description
        }
    }

    @Test(arguments: [
        ("tone.wav", 30, "truncated fmt chunk"),
        ("tone.flac", 30, "truncated FLAC STREAMINFO"),
        ("tone.flac", 100, "truncated FLAC PICTURE"),
        ("tone.flac", -3000, "truncated FLAC audio"),
        ("vbr-v24.mp3", 20, "truncated ID3v2 tag"),
        ("vbr-v24.mp3", -500, "truncated MP3"),
        ("vorbis.ogg", 200, "truncated Ogg page"),
        ("vorbis-small-pages.oga", 500, "no Ogg audio pages"),
        ("tone.opus", 100, "truncated Ogg page"),
        ("tone.m4a", 40, "no moov atom"),
        ("tone.m4a", -2000, "truncated MP4 (the audio data runs past the end of the file)"),
    ])
    func truncatedCopiesSayWhatIsMissing(_ name: String, _ length: Int, _ expected: String) throws {
        let folder = try TestFolders.make("truncated")
        let reason = try #require(Self.reason(try Self.truncated(name, to: length, in: folder)))
        #expect(reason.hasPrefix(expected), "\(reason)")
    }

    @Test(arguments: ["vbr-v24.mp3", "tone.aac"])
    func anID3TagWithNothingBehindItHasNoFrames(_ name: String) throws {
        let bytes = [UInt8](try MediaFixtures.data(name))
        let tagEnd = 10 + bytes[6..<10].reduce(0) { $0 << 7 | Int($1) }
        let file = try Self.truncated(name, to: tagEnd, in: try TestFolders.make("tag-only"))
        #expect(Self.reason(file) == "no MPEG audio frames found")
    }

    @Test func emptyTextAndGarbageFilesAreNotAudio() throws {
        let folder = try TestFolders.make("garbage")
        let empty = folder.appendingPathComponent("empty.mp3")
        try Data().write(to: empty)
        #expect(Self.reason(empty) == "empty file")
        let text = folder.appendingPathComponent("lyrics.mp3")
        try Data("These are the lyrics, not the song.\n".utf8).write(to: text)
        #expect(Self.reason(text)?.hasPrefix("not a known audio format") == true)
        var generator = SeededRandom(seed: 7)
        let garbage = folder.appendingPathComponent("noise.flac")
        try Data((0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) }).write(to: garbage)
        #expect(Self.reason(garbage)?.hasPrefix("not a known audio format") == true)
    }

    @Test func magicBytesFollowedByNothingUsefulAreReasons() throws {
        let folder = try TestFolders.make("magic")
        let cases: [(String, [UInt8], String)] = [
            ("a.flac", Array("fLaC".utf8), "truncated FLAC metadata"),
            ("b.ogg", Array("OggS".utf8) + [0] + [UInt8](repeating: 0, count: 30), "no Vorbis or Opus stream in the Ogg file"),
            ("c.m4a", [0, 0, 0, 16] + Array("ftypM4A ".utf8) + [0, 0, 0, 0], "no moov atom"),
            ("d.mp3", Array("ID3".utf8) + [3, 0, 0, 0, 0, 0, 0] + [UInt8](repeating: 0x41, count: 5000), "no MPEG audio frames found"),
            ("e.wav", Array("RIFF".utf8) + [4, 0, 0, 0] + Array("WAVE".utf8), "no usable fmt chunk"),
        ]
        for (name, bytes, expected) in cases {
            let file = folder.appendingPathComponent(name)
            try Data(bytes).write(to: file)
            #expect(Self.reason(file)?.hasPrefix(expected) == true, "\(name): \(Self.reason(file) ?? "read")")
        }
    }

    @Test func aDamagedLengthFieldIsNotAVeryLongTrack() throws {
        let folder = try TestFolders.make("lengths")
        // The Opus stream's last granule position made enormous.
        var opus = [UInt8](try MediaFixtures.data("tone.opus"))
        let lastPage = try #require((0..<opus.count - 4).last { opus[$0..<$0 + 4].elementsEqual("OggS".utf8) })
        opus[lastPage + 13] = 0x40
        let file = folder.appendingPathComponent("long.opus")
        try Data(opus).write(to: file)
        #expect(Self.reason(file)?.hasPrefix("implausible length") == true)
        // A Xing frame count the file cannot hold: the frames are counted instead.
        var mp3 = [UInt8](try MediaFixtures.data("vbr-v24.mp3"))
        let xing = try #require((0..<mp3.count - 4).first { mp3[$0..<$0 + 4].elementsEqual("Xing".utf8) })
        mp3[xing + 9] = 0x7F
        let damaged = folder.appendingPathComponent("xing.mp3")
        try Data(mp3).write(to: damaged)
        #expect(abs(try AudioFile.read(damaged).durationMs - 2064) <= 30)
    }

    /// Every fixture cut at 60 places and with bytes flipped at random: the readers may
    /// accept a damaged file or give a reason, but must not trap or loop.
    @Test(arguments: AudioFixture.all)
    func cutAndDamagedCopiesNeverCrash(_ fixture: AudioFixture) throws {
        let folder = try TestFolders.make("fuzz")
        let original = [UInt8](try MediaFixtures.data(fixture.name))
        var generator = SeededRandom(seed: UInt64(original.count))
        var variants: [[UInt8]] = stride(from: 0, to: original.count, by: max(1, original.count / 60)).map { Array(original.prefix($0)) }
        for _ in 0..<60 {
            var damaged = original
            for _ in 0..<8 { damaged[Int.random(in: 0..<damaged.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator) }
            variants.append(damaged)
        }
        // Damage in the first bytes, where the lengths and headers are.
        for _ in 0..<60 {
            var damaged = original
            damaged[Int.random(in: 0..<min(512, damaged.count), using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            variants.append(damaged)
        }
        let file = folder.appendingPathComponent(fixture.name)
        for variant in variants {
            try Data(variant).write(to: file)
            do {
                let metadata = try AudioFile.read(file)
                #expect(metadata.durationMs >= 0)
                _ = try AudioFile.embeddedCoverArt(file)
            } catch {
                #expect(!error.description.isEmpty)
            }
        }
    }
}
