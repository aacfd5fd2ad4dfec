import JamCore
import JamProtocol
import Testing

@testable import JamServer

struct SyncBoardTests {
    let alice: UserID = "alice"
    let bob: UserID = "bob"

    func report(_ device: String?, clock: Double = 1, playback: Double = 0, playing: Bool = true) -> SyncReport {
        SyncReport(
            epoch: 1, offsetMs: 0, errorMs: clock, driftMs: playback, deviceId: device, outputLatencyMs: 20, delayMs: 0,
            clockDriftPpm: 3, playing: playing)
    }

    @Test func theFirstReportIsPublishedAtOnceAndTheNextWithinASecondWaitsForTheSecondToEnd() {
        var board = SyncBoard()
        #expect(board.record(report("d1"), from: alice, at: 10_000) == .now)
        _ = board.publish(at: 10_000)
        #expect(board.record(report("d2"), from: bob, at: 10_300) == .at(11_000))
        #expect(board.due(at: 11_000) == .now)
        _ = board.publish(at: 11_000)
        #expect(board.due(at: 12_500) == .none)
    }

    @Test func eachDeviceOfAMemberHasItsOwnRowGradedByItsWorstError() {
        var board = SyncBoard()
        _ = board.record(report("phone", clock: 1, playback: 2), from: alice, at: 0)
        _ = board.record(report("laptop", clock: 1, playback: -12), from: alice, at: 0)
        _ = board.record(report(nil, clock: 45, playback: 0, playing: false), from: bob, at: 0)
        let rows = board.status(at: 500).devices
        #expect(rows.map(\.deviceId) == ["laptop", "phone", nil])
        #expect(rows.map(\.grade) == [.fair, .good, .poor])
        #expect(rows[1].outputLatencyMs == 20)
        #expect(rows[1].clockDriftPpm == 3)
        #expect(rows.map(\.ageMs) == [500, 500, 500])
    }

    @Test func aDeviceThatStoppedPlayingIsGradedByItsClockNotByItsLastSongsError() {
        var board = SyncBoard()
        _ = board.record(report("phone", clock: 1, playback: 150, playing: false), from: alice, at: 0)
        _ = board.record(report("laptop", clock: 1, playback: 150, playing: true), from: alice, at: 0)
        let rows = board.status(at: 500).devices
        #expect(rows.map(\.deviceId) == ["laptop", "phone"])
        #expect(rows.map(\.grade) == [.poor, .good])
        #expect(rows[1].playbackErrorMs == 150 && !rows[1].playing, "shown as reported, with 'not playing' beside it")
    }

    @Test func aSilentDeviceTurnsFairThenPoorAndIsForgottenAfterTwoMinutes() {
        var board = SyncBoard()
        _ = board.record(report("phone"), from: alice, at: 0)
        #expect(board.status(at: 13_000).devices.first?.grade == .fair)
        #expect(board.status(at: 31_000).devices.first?.grade == .poor)
        _ = board.record(report("other"), from: bob, at: 121_000)
        #expect(board.status(at: 121_000).devices.map(\.userId) == [bob])
    }

    @Test func onlyRecentlyPlayingDevicesWithAnIdCanTakePartInACalibration() {
        var board = SyncBoard()
        _ = board.record(report("phone"), from: alice, at: 0)
        _ = board.record(report("paused", playing: false), from: alice, at: 0)
        _ = board.record(report(nil), from: bob, at: 0)
        _ = board.record(report("old"), from: bob, at: -20_000)
        #expect(board.playingDevices(at: 1_000) == [DeviceRef(userId: alice, deviceId: "phone")])
    }

    @Test func aMembersNewDeviceBeyondTheLimitTakesThePlaceOfTheirLongestSilent() {
        var board = SyncBoard()
        let limit = SessionState.deviceDelaysPerMember
        for n in 0..<limit { _ = board.record(report("d\(n)"), from: alice, at: Millis(n) * 10) }
        _ = board.record(report("bob's"), from: bob, at: 5)
        _ = board.record(report("d0"), from: alice, at: 1_000)  // d0 speaks again: d1 is now the longest silent
        _ = board.record(report("invented"), from: alice, at: 1_010)
        let devices = board.status(at: 1_010).devices
        #expect(devices.filter { $0.userId == alice }.count == limit)
        #expect(!devices.contains { $0.deviceId == "d1" })
        #expect(devices.contains { $0.deviceId == "d0" } && devices.contains { $0.deviceId == "invented" })
        #expect(devices.contains { $0.userId == bob }, "another member's devices stay")
        // A thousand invented ids later, still the limit.
        for n in 0..<1_000 { _ = board.record(report("fake-\(n)"), from: alice, at: 2_000 + Millis(n)) }
        #expect(board.status(at: 3_000).devices.filter { $0.userId == alice }.count == limit)
        #expect(board.entries.count == limit + 1)
    }

    @Test func forgettingAMemberDropsTheirRows() {
        var board = SyncBoard()
        _ = board.record(report("phone"), from: alice, at: 0)
        _ = board.publish(at: 0)
        board.forget(alice)
        #expect(board.status(at: 0).devices.isEmpty)
        #expect(board.due(at: 2_000) == .now, "the removal is news for the hosts")
    }
}
