import Foundation
import Testing
import JamCore
import JamProtocol

/// The start lead makes room for every listening device's round trip, a member's second
/// device included.
struct RoundTripTests {
    /// A report from `device` whose clock error (half its round trip) is `errorMs`.
    func report(_ device: String?, errorMs: Double) -> Command {
        .syncReport(SyncReport(epoch: 0, offsetMs: 0, errorMs: errorMs, driftMs: 0, deviceId: device))
    }

    @Test func aMembersSlowestDeviceSetsTheLeadWhicheverReportedLast() throws {
        var jam = try Jam()
        try jam.apply(report("phone", errorMs: 400), by: alice)
        try jam.apply(report("laptop", errorMs: 5), by: alice)
        // The phone's 800 ms round trip, twice: the laptop's report does not hide it.
        #expect(jam.state.leadMs() == 1_600)
        let t = jam.now
        try jam.add(1, by: bob)
        #expect(jam.state.current?.anchorMs == t + 1_600)
    }

    @Test func aDeviceThatStopsReportingStopsCountingAfterThirtySeconds() throws {
        var jam = try Jam()
        try jam.apply(report("phone", errorMs: 400), by: alice)
        jam.wait(SessionState.roundTripFreshMs - 1)
        try jam.apply(report("laptop", errorMs: 5), by: alice)
        #expect(jam.state.leadMs() == 1_600, "the phone reported 30 s ago less 1 ms: it still counts")
        jam.wait(1)
        try jam.apply(report("laptop", errorMs: 5), by: alice)
        #expect(jam.state.leadMs() == jam.state.timing.minLeadMs, "only the laptop's 10 ms round trip is left")
        #expect(jam.state.deviceRoundTrips?.map(\.deviceId) == ["laptop"])
    }

    @Test func aDevicesNewReportReplacesItsOldOneEvenWhenFaster() throws {
        var jam = try Jam()
        try jam.apply(report("phone", errorMs: 400), by: alice)
        try jam.apply(report("phone", errorMs: 300), by: alice)
        #expect(jam.state.leadMs() == 1_200)
        // A device without an id is one device of its own.
        try jam.apply(report(nil, errorMs: 350), by: alice)
        #expect(jam.state.leadMs() == 1_400)
    }

    @Test func aPausedDeviceStillCountsForTheResumeToCome() throws {
        var jam = try Jam()
        // A phone on a slow link, paused with the session: its resume needs the lead too.
        try jam.apply(.syncReport(SyncReport(epoch: 0, offsetMs: 0, errorMs: 400, driftMs: 0, deviceId: "phone", playing: false)), by: alice)
        try jam.apply(report("laptop", errorMs: 5), by: alice)
        #expect(jam.state.leadMs() == 1_600)
    }

    @Test func aMemberKeepsTheRoundTripsOfEightDevicesAtMost() throws {
        var jam = try Jam()
        for n in 0..<12 { try jam.apply(report("device-\(n)", errorMs: Double(100 + n)), by: alice) }
        #expect(jam.state.deviceRoundTrips?.map(\.deviceId) == (4..<12).map { "device-\($0)" })
    }

    @Test func aMemberWhoLeavesTakesTheirDevicesRoundTripsAlong() throws {
        var jam = try Jam()
        try jam.apply(report("phone", errorMs: 400), by: alice)
        try jam.apply(report("laptop", errorMs: 50), by: bob)
        try jam.apply(.leave, by: alice)
        #expect(jam.state.deviceRoundTrips?.map(\.userId) == [bob])
        #expect(jam.state.roundTrips[alice] == nil)
        #expect(jam.state.leadMs() == jam.state.timing.minLeadMs)
    }

    @Test func sessionsStoredBeforeThePerDeviceRuleKeepTheMembersLatestReport() throws {
        // Rules as a session stored before the rule existed reads them.
        let stored = try JSONDecoder().decode(SessionRules.self, from: Data(#"{"startMode":"scheduled","maxQueueLength":1000}"#.utf8))
        #expect(stored.roundTripsPerDevice == false)
        #expect(SessionRules.openJam.roundTripsPerDevice)
        var jam = try Jam(rules: stored)
        try jam.apply(report("phone", errorMs: 400), by: alice)
        try jam.apply(report("laptop", errorMs: 5), by: alice)
        #expect(jam.state.leadMs() == jam.state.timing.minLeadMs, "the laptop's report replaced the phone's, as before")
        #expect(jam.state.deviceRoundTrips == nil)
    }
}
