import Foundation
import JamMedia
import JamTestSupport
import Testing

/// Each format's reader against files FFmpeg made from a tone of known length.
@Suite struct AudioFileTests {
    @Test(arguments: AudioFixture.all)
    func readsTagsFormatAndLength(_ fixture: AudioFixture) throws {
        let metadata = try AudioFile.read(MediaFixtures.url(fixture.name))
        #expect(metadata.format == fixture.format)
        #expect(metadata.title == fixture.title)
        #expect(metadata.artist == fixture.artist)
        #expect(metadata.album == fixture.album)
        #expect(metadata.hasCover == fixture.hasCover)
        let seconds = try #require(try MediaFixtures.lengths()[fixture.name])
        #expect(abs(Double(metadata.durationMs) - seconds * 1000) <= 50, "read \(metadata.durationMs) ms for a \(seconds) s tone")
    }

    @Test(arguments: AudioFixture.all)
    func bytesInMemoryReadAsTheSameFileDoes(_ fixture: AudioFixture) throws {
        let (metadata, cover) = try AudioFile.read(bytes: [UInt8](MediaFixtures.data(fixture.name)))
        #expect(metadata == (try AudioFile.read(MediaFixtures.url(fixture.name))))
        #expect(cover?.data == (fixture.hasCover ? try MediaFixtures.data("cover.png") : nil))
    }

    @Test func damagedBytesInMemoryAreRefusedWithTheReason() {
        #expect(throws: AudioFile.ReadError("empty file")) { try AudioFile.read(bytes: []) }
        #expect(throws: AudioFile.ReadError("truncated FLAC STREAMINFO")) { try AudioFile.read(bytes: Array("fLaC".utf8) + [0, 0, 0, 34]) }
    }

    @Test func wavTagsWrittenInWindowsCodePageReadAsWrittenAndUTF8StaysUTF8() throws {
        // RIFF INFO names no encoding: Windows writes its code page, most other tools UTF-8.
        var bytes = [UInt8](WAVFile.encode(samples: [0, 0.5, -0.5], sampleRate: 8000, title: "CafX", artist: "DonXt", album: "Café"))
        func patch(_ marked: String, _ byte: UInt8) throws {
            let pattern = Array(marked.utf8)
            let at = try #require((0...(bytes.count - pattern.count)).first { Array(bytes[$0..<$0 + pattern.count]) == pattern })
            bytes[at + pattern.firstIndex(of: UInt8(ascii: "X"))!] = byte
        }
        try patch("CafX", 0xE9) // é in Latin-1 and Windows-1252
        try patch("DonXt", 0x92) // ’ in Windows-1252 only
        let metadata = try AudioFile.read(bytes: bytes).metadata
        #expect(metadata.title == "Café")
        #expect(metadata.artist == "Don\u{2019}t")
        #expect(metadata.album == "Café", "valid UTF-8 is read as UTF-8")
    }

    @Test(arguments: AudioFixture.all.filter(\.hasCover))
    func embeddedCoversAreTheExactPNG(_ fixture: AudioFixture) throws {
        let cover = try #require(try AudioFile.embeddedCoverArt(MediaFixtures.url(fixture.name)))
        #expect(cover.mimeType == "image/png")
        #expect(cover.data == (try MediaFixtures.data("cover.png")))
    }

    @Test(arguments: AudioFixture.all.filter { !$0.hasCover })
    func filesWithoutAPictureHaveNoEmbeddedCover(_ fixture: AudioFixture) throws {
        #expect(try AudioFile.embeddedCoverArt(MediaFixtures.url(fixture.name)) == nil)
    }

    @Test func contentTypesAreWhatBrowsersPlay() throws {
        let expected: [AudioFormat: String] = [
            .wav: "audio/wav", .flac: "audio/flac", .mp3: "audio/mpeg", .vorbis: "audio/ogg", .opus: "audio/ogg",
            .mp4: "audio/mp4", .aac: "audio/aac",
        ]
        for format in AudioFormat.allCases { #expect(format.contentType == expected[format]) }
        for fixture in AudioFixture.all {
            #expect(try AudioFile.read(MediaFixtures.url(fixture.name)).contentType == expected[fixture.format])
        }
    }

    @Test func theFormatComesFromTheBytesNotTheName() throws {
        let folder = try TestFolders.make("misnamed")
        let misnamed = folder.appendingPathComponent("really-flac.mp3")
        try FileManager.default.copyItem(at: MediaFixtures.url("tone.flac"), to: misnamed)
        #expect(try AudioFile.read(misnamed).format == .flac)
        #expect(try AudioFile.read(misnamed).contentType == "audio/flac")
    }

    @Test func theOpusPreSkipIsTakenOffTheLength() throws {
        // The last granule is 120 312 (48 kHz) with a pre-skip of 312: exactly 2.5 s.
        #expect(try AudioFile.read(MediaFixtures.url("tone.opus")).durationMs == 2500)
        #expect(try AudioFile.read(MediaFixtures.url("tone.opus")).sampleRate == 48_000)
    }

    @Test func theLAMEDelayAndPaddingAreTakenOffTheLength() throws {
        // 79 frames of 576 samples = 45 504, less 576 delay and 828 padding = 44 100 at 22.05 kHz.
        #expect(try AudioFile.read(MediaFixtures.url("vbr-v24.mp3")).durationMs == 2000)
    }

    @Test func theAACPrimingInTheEditListIsTakenOffTheLength() throws {
        #expect(try AudioFile.read(MediaFixtures.url("tone.m4a")).durationMs == 1500)
    }
}
