import Foundation
@testable import JamMedia
import Testing

/// Covers: embedded ones first, else a picture file beside the audio.
@Suite struct CoverArtTests {
    static let jpegLike = Data([0xFF, 0xD8, 0xFF, 0xE0, 1, 2, 3, 0xFF, 0xD9])

    @Test func aPictureBesideTheAudioIsItsCoverInAnyLetterCase() throws {
        let folder = try MediaFixtures.folder(with: ["tone.wav"], label: "sidecar")
        try Self.jpegLike.write(to: folder.appendingPathComponent("Folder.JPG"))
        let audio = folder.appendingPathComponent("tone.wav")
        #expect(try AudioFile.sidecarCover(beside: audio)?.lastPathComponent == "Folder.JPG")
        #expect(try AudioFile.coverArt(audio) == CoverArt(data: Self.jpegLike, mimeType: "image/jpeg"))
        let library = MusicLibrary.scan([folder])
        let track = try #require(library.tracks.first)
        #expect(track.hasCover)
        #expect(try library.coverArt(track.id)?.data == Self.jpegLike)
    }

    @Test func coverIsPreferredToFolderAndFront() throws {
        let folder = try MediaFixtures.folder(with: ["tone.wav"], label: "sidecar-order")
        for name in ["front.jpg", "folder.jpg", "cover.png"] { try Data().write(to: folder.appendingPathComponent(name)) }
        #expect(try AudioFile.sidecarCover(beside: folder.appendingPathComponent("tone.wav"))?.lastPathComponent == "cover.png")
    }

    @Test func anEmbeddedCoverWinsOverAPictureBeside() throws {
        let folder = try MediaFixtures.folder(with: ["tone.flac"], label: "embedded-first")
        try Self.jpegLike.write(to: folder.appendingPathComponent("cover.jpg"))
        let cover = try #require(try AudioFile.coverArt(folder.appendingPathComponent("tone.flac")))
        #expect(cover.data == (try MediaFixtures.data("cover.png")))
    }

    @Test func aCoverOfADeclaredTypeNoBrowserShouldRunIsServedAsBytes() {
        // An SVG would run its scripts on the server's own origin.
        let svg = Array(#"<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>"#.utf8)
        #expect(CoverArt(bytes: svg, declared: "image/svg+xml").mimeType == "application/octet-stream")
        #expect(CoverArt(bytes: svg, declared: "text/html").mimeType == "application/octet-stream")
        // Raster types are kept, from the bytes or as declared.
        #expect(CoverArt(bytes: [0x89, 0x50, 0x4E, 0x47, 0x0D], declared: "image/svg+xml").mimeType == "image/png")
        #expect(CoverArt(bytes: [0x00, 0x01], declared: "image/webp").mimeType == "image/webp")
    }

    @Test func aPictureBesideTooLargeToServeIsNoCoverAndIsNotRead() throws {
        let folder = try MediaFixtures.folder(with: ["tone.wav"], label: "huge-sidecar")
        let picture = folder.appendingPathComponent("cover.jpg")
        try Self.jpegLike.write(to: picture)
        // Grown past the limit without writing it: a read would take its whole size.
        let handle = try FileHandle(forWritingTo: picture)
        try handle.truncate(atOffset: UInt64(CoverArt.maxBytes + 1))
        try handle.close()
        #expect(try AudioFile.coverArt(folder.appendingPathComponent("tone.wav")) == nil)
        try FileHandle(forWritingTo: picture).truncate(atOffset: UInt64(Self.jpegLike.count))
        #expect(try AudioFile.coverArt(folder.appendingPathComponent("tone.wav"))?.mimeType == "image/jpeg")
    }

    @Test func noCoverAnywhereIsNil() throws {
        let folder = try MediaFixtures.folder(with: ["tone.aac"], label: "no-cover")
        let library = MusicLibrary.scan([folder])
        let track = try #require(library.tracks.first)
        #expect(!track.hasCover)
        #expect(try AudioFile.coverArt(track.file) == nil)
        #expect(try library.coverArt(track.id) == nil)
    }

    @Test func theWireTrackCarriesTheArtworkURLTheServerGives() throws {
        let library = MusicLibrary.scan([try MediaFixtures.folder(with: ["tone.m4a"], label: "wire")])
        let track = try #require(library.tracks.first)
        #expect(track.track.artworkURL == nil)
        #expect(track.track(artworkURL: "/api/v1/library/\(track.id)/cover").artworkURL == "/api/v1/library/\(track.id)/cover")
    }
}
