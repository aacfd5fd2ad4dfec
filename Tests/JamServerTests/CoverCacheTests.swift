import Foundation
import JamMedia
import Testing

@testable import JamServer

/// The covers kept between reads: the least recently asked for go first.
struct CoverCacheTests {
    static func cover(_ size: Int) -> CoverArt { CoverArt(data: Data(repeating: 1, count: size), mimeType: "image/png") }

    @Test func theLeastRecentlyAskedForCoverGoesFirstPastTheCount() {
        var cache = CoverCache(maxCount: 2, maxBytes: 1000)
        cache.keep(Self.cover(10), for: "a")
        cache.keep(Self.cover(10), for: "b")
        #expect(cache.cover("a") != nil, "asked for: now the most recent")
        cache.keep(Self.cover(10), for: "c")
        #expect(cache.cover("b") == nil)
        #expect(cache.cover("a") != nil && cache.cover("c") != nil)
        #expect(cache.bytes == 20)
    }

    @Test func coversGoPastTheBytesAndOneTooLargeIsNotKept() {
        var cache = CoverCache(maxCount: 10, maxBytes: 100)
        cache.keep(Self.cover(60), for: "a")
        cache.keep(Self.cover(50), for: "b")
        #expect(cache.cover("a") == nil)
        #expect(cache.bytes == 50)
        cache.keep(Self.cover(101), for: "huge")
        #expect(cache.cover("huge") == nil)
        #expect(cache.cover("b") != nil)
    }

    @Test func noCoverIsKeptAsAnAnswerAndAReplacedCoverCountsOnce() {
        var cache = CoverCache(maxCount: 10, maxBytes: 100)
        cache.keep(nil, for: "bare")
        #expect(cache.cover("bare") == .some(nil))
        #expect(cache.cover("unknown") == nil)
        cache.keep(Self.cover(40), for: "a")
        cache.keep(Self.cover(30), for: "a")
        #expect(cache.bytes == 30)
        cache.removeAll()
        #expect(cache.cover("a") == nil && cache.bytes == 0)
    }
}
