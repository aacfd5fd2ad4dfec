import JamProtocol
import Testing

@testable import JamClient

@Suite("PlaybackTimeline")
struct PlaybackTimelineTests {
    let item = Fixture.item("a", durationMs: 200_000)

    func timeline(_ state: PlaybackState, position: Double, anchor: Double) -> PlaybackTimeline {
        PlaybackTimeline(epoch: 3, itemId: item.id, track: item.track, state: state, positionMs: position, anchorMs: anchor)
    }

    @Test("a playing timeline advances from its anchor, holds before it and stops at the end")
    func playingPosition() {
        let t = timeline(.playing, position: 10_000, anchor: 1_000_000)
        #expect(t.position(atServer: 999_000) == 10_000)
        #expect(t.position(atServer: 1_000_000) == 10_000)
        #expect(t.position(atServer: 1_002_500) == 12_500)
        #expect(t.position(atServer: 2_000_000) == 200_000)
        #expect(t.isAdvancing(atServer: 999_999) == false)
        #expect(t.isAdvancing(atServer: 1_000_001))
        #expect(t.isAdvancing(atServer: 1_190_000) == false)
        #expect(t.endsAtServer == 1_190_000)
    }

    @Test("paused and preparing timelines hold their position")
    func heldPositions() {
        #expect(timeline(.paused, position: 5_000, anchor: 0).position(atServer: 1e9) == 5_000)
        #expect(timeline(.preparing, position: 0, anchor: 10).position(atServer: 1e9) == 0)
        #expect(timeline(.paused, position: 5_000, anchor: 0).endsAtServer == nil)
        #expect(timeline(.paused, position: 5_000, anchor: 0).isAdvancing(atServer: 1e9) == false)
    }

    @Test("commit, pause, resume and seek move the timeline as the server does")
    func transitions() {
        let prepared = PlaybackTimeline(PlayPrepare(item: item, epoch: 4, startAt: 5_000, previous: nil))
        #expect(prepared.state == .preparing && prepared.anchorMs == 5_000 && prepared.positionMs == 0)
        let playing = prepared.committed(PlayCommit(itemId: item.id, epoch: 4, startAt: 5_000, positionMs: 0))
        #expect(playing.state == .playing && playing.position(atServer: 6_000) == 1_000)
        let paused = playing.paused(TimelineChange(epoch: 4, positionMs: 2_000, atMs: 7_000))
        #expect(paused.state == .paused && paused.position(atServer: 9_000) == 2_000)
        let resumed = paused.resumed(TimelineChange(epoch: 4, positionMs: 2_000, atMs: 9_500))
        #expect(resumed.position(atServer: 9_000) == 2_000 && resumed.position(atServer: 10_500) == 3_000)
        let sought = resumed.sought(TimelineChange(epoch: 4, positionMs: 60_000, atMs: 11_000))
        #expect(sought.state == .playing && sought.position(atServer: 12_000) == 61_000)
    }

    @Test("a stateSync's nowPlaying becomes the same timeline")
    func fromNowPlaying() {
        let now = NowPlaying(item: item, epoch: 9, state: .playing, positionMs: 30_000, anchorMs: 1_000)
        let t = PlaybackTimeline(now)
        #expect(t.position(atServer: 11_000) == Double(now.position(at: 11_000)))
        #expect(t.epoch == 9 && t.itemId == item.id)
    }

    @Test("the same course restated with another anchor is recognised; a different one is not")
    func sameCourse() {
        let a = timeline(.playing, position: 0, anchor: 1_000)
        let b = timeline(.playing, position: 4_000, anchor: 5_000)
        let c = timeline(.playing, position: 4_100, anchor: 5_000)
        #expect(a.hasSameCourse(as: b))
        #expect(!a.hasSameCourse(as: c))
        var other = b
        other.epoch = 4
        #expect(!a.hasSameCourse(as: other))
        #expect(!a.hasSameCourse(as: timeline(.paused, position: 0, anchor: 1_000)))
    }
}
