import Foundation
import Testing

@testable import JamMedia

/// A file may take only so much reading: the readers go through a file about once, and a
/// file that makes one go round its bytes again and again is refused at a bound, so a
/// regression fails here at once instead of holding a test (or a scan) for hours.
@Suite struct ReadingWorkTests {
    @Test(arguments: AudioFixture.all)
    func everyFixtureIsReadInAboutOnePass(_ fixture: AudioFixture) throws {
        let reader = try FileReader(MediaFixtures.url(fixture.name))
        _ = try AudioFile.parse(reader, cover: true)
        // A few headers are looked at twice (the format's magic, a frame found and then
        // read): well under twice the file, far under the limit of 16 times.
        #expect(reader.work > 0)
        #expect(reader.work <= reader.size * 3 / 2, "read \(reader.work) bytes of \(reader.size)")
    }

    @Test func readingPastTheLimitRefusesTheFileWithTheReason() throws {
        let reader = FileReader(bytes: Array(repeating: 7, count: 1_000), workLimit: 2_500)
        #expect(try reader.read(at: 0, count: 1_000).count == 1_000)
        #expect(try reader.read(at: 0, count: 1_000).count == 1_000)
        for offset in 0..<500 { _ = try reader.byte(at: offset) }
        #expect(reader.work == 2_500)
        let error = #expect(throws: AudioFile.ReadError.self) { try reader.byte(at: 0) }
        #expect(error?.description == "reading the file took more than 2500 bytes for its 1000: a damaged or crafted file")
        #expect(throws: AudioFile.ReadError.self) { try reader.read(at: 0, count: 1) }
    }

    @Test func searchingCountsEveryByteItLooksAt() throws {
        // 0xFF starts the pattern at every byte and never completes it: the search looks at
        // each byte and at the pattern's length after it.
        let reader = FileReader(bytes: Array(repeating: 0xFF, count: 10_000), workLimit: 30_000)
        let error = #expect(throws: AudioFile.ReadError.self) {
            try reader.find([0xFF, 0x00, 0x01, 0x02], from: 0, before: 10_000)
        }
        #expect(error?.description.hasPrefix("reading the file took more than 30000 bytes") == true)
    }

    @Test func theLimitIsSixteenTimesTheSizeAndSixtyFourMebibytesForSmallFiles() {
        #expect(FileReader.workLimit(size: 1_000) == 64 << 20)
        #expect(FileReader.workLimit(size: 100 << 20) == 1_600 << 20)
        #expect(FileReader.workLimit(size: .max / 2) == .max)
        #expect(FileReader(bytes: [1, 2, 3]).workLimit == 64 << 20)
    }
}
