import Foundation
import Testing
@testable import JamMedia

/// MPEG layer III frame headers and the Xing header, checked against hand-computed values.
@Suite struct MPEGFrameTests {
    @Test func parsesMPEG1MPEG2AndMPEG25Headers() throws {
        // MPEG-1, 128 kb/s, 44.1 kHz, no padding: 144 * 128000 / 44100 = 417 bytes.
        let mpeg1 = try #require(MPEGFrame([0xFF, 0xFB, 0x90, 0x64], at: 0))
        #expect(mpeg1.sampleRate == 44_100 && mpeg1.samplesPerFrame == 1152 && mpeg1.length == 417 && mpeg1.sideInfoLength == 32)
        // MPEG-2, 64 kb/s, 22.05 kHz, padded, mono: 72 * 64000 / 22050 + 1 = 209 bytes.
        let mpeg2 = try #require(MPEGFrame([0xFF, 0xF3, 0x82, 0xC4], at: 0))
        #expect(mpeg2.sampleRate == 22_050 && mpeg2.samplesPerFrame == 576 && mpeg2.length == 209 && mpeg2.sideInfoLength == 9)
        // MPEG-2.5, 8 kb/s, 8 kHz: 72 * 8000 / 8000 = 72 bytes.
        let mpeg25 = try #require(MPEGFrame([0xFF, 0xE3, 0x18, 0xC4], at: 0))
        #expect(mpeg25.sampleRate == 8000 && mpeg25.length == 72)
    }

    @Test func rejectsReservedAndOtherLayers() {
        #expect(MPEGFrame([0xFF, 0xFD, 0x90, 0x64], at: 0) == nil) // layer II
        #expect(MPEGFrame([0xFF, 0xEB, 0x90, 0x64], at: 0) == nil) // reserved version
        #expect(MPEGFrame([0xFF, 0xFB, 0xF0, 0x64], at: 0) == nil) // bad bitrate
        #expect(MPEGFrame([0xFF, 0xFB, 0x9C, 0x64], at: 0) == nil) // reserved sample rate
        #expect(MPEGFrame([0xFF, 0xFB, 0x90], at: 0) == nil)       // too short
    }

    @Test func readsTheXingCountsAndTheLAMEDelayAndPadding() throws {
        let header = try #require(MPEGFrame([0xFF, 0xFB, 0x90, 0xC4], at: 0)) // mono: Xing at 4 + 17
        var frame = [UInt8](repeating: 0, count: header.length)
        frame.replaceSubrange(0..<4, with: [0xFF, 0xFB, 0x90, 0xC4])
        let xing = 21
        frame.replaceSubrange(xing..<xing + 16, with: Array("Info".utf8) + [0, 0, 0, 3] + [0, 0, 0, 100] + [0, 0, 0x9C, 0x40])
        frame.replaceSubrange(xing + 16..<xing + 20, with: Array("LAME".utf8))
        frame.replaceSubrange(xing + 16 + 21..<xing + 16 + 24, with: [0x24, 0x01, 0x20]) // delay 576, padding 288
        let parsed = try #require(MP3File.xingHeader(frame, header))
        #expect(parsed.frames == 100)
        #expect(parsed.bytes == 40_000)
        #expect(parsed.delayAndPadding == 576 + 288)
    }

    @Test func framesAreCountedWhenThereIsNoXingHeader() throws {
        // 78 frames of 1152 samples at 44.1 kHz, the encoder's delay and padding included.
        #expect(try AudioFile.read(MediaFixtures.url("cbr-noxing.mp3")).durationMs == 2038)
    }
}
