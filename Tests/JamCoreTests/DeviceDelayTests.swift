import Foundation
import Testing
import JamCore
import JamProtocol

struct DeviceDelayTests {
    func delay(_ user: UserID, _ device: String, _ ms: Double) -> Command {
        .setDeviceDelay(DeviceDelay(userId: user, deviceId: device, delayMs: ms))
    }

    @Test func memberSetsTheirOwnDeviceDelay() throws {
        var jam = try Jam()
        let outcome = try jam.apply(delay(alice, "phone", 120.04), by: alice)
        #expect(outcome.events.types == [.deviceDelay])
        #expect(outcome.events[0].event.deviceDelay == DeviceDelay(userId: alice, deviceId: "phone", delayMs: 120))
        #expect(jam.state.deviceDelay(of: DeviceRef(userId: alice, deviceId: "phone")) == 120)
        #expect(jam.state.view(for: bob).deviceDelays == [DeviceDelay(userId: alice, deviceId: "phone", delayMs: 120)])
    }

    @Test func hostSetsAMembersDeviceDelayButAMemberCannotSetAnothers() throws {
        var jam = try Jam()
        try jam.apply(delay(alice, "speaker", -35.5), by: host)
        #expect(jam.state.deviceDelay(of: DeviceRef(userId: alice, deviceId: "speaker")) == -35.5)
        jam.reject(delay(alice, "speaker", 10), by: bob, .forbidden)
        #expect(jam.state.deviceDelay(of: DeviceRef(userId: alice, deviceId: "speaker")) == -35.5)
    }

    @Test func settingTheSameDelayAgainChangesNothingAndZeroRemovesIt() throws {
        var jam = try Jam()
        try jam.apply(delay(alice, "phone", 40), by: alice)
        #expect(try jam.apply(delay(alice, "phone", 40), by: alice).events.isEmpty)
        let removed = try jam.apply(delay(alice, "phone", 0), by: alice)
        #expect(removed.events[0].event.deviceDelay?.delayMs == 0)
        #expect(jam.state.deviceDelays == nil)
        #expect(jam.state.view(for: alice).deviceDelays == nil)
    }

    @Test func badDelaysAndDeviceIdsAreRefusedWithoutChange() throws {
        var jam = try Jam()
        jam.reject(delay(alice, "phone", 2_000.5), by: alice, .invalidField)
        jam.reject(delay(alice, "phone", .nan), by: alice, .invalidField)
        jam.reject(delay(alice, "", 10), by: alice, .invalidField)
        jam.reject(delay(alice, "a b", 10), by: alice, .invalidField)
        jam.reject(delay(stranger, "phone", 10), by: host, .notFound)
        #expect(jam.state.deviceDelays == nil)
    }

    @Test func aMemberKeepsDelaysForAtMostEightDevices() throws {
        var jam = try Jam()
        for n in 0..<SessionState.deviceDelaysPerMember { try jam.apply(delay(alice, "d\(n)", 5), by: alice) }
        jam.reject(delay(alice, "one-more", 5), by: alice, .queueLimit)
        // Changing a kept device still works.
        try jam.apply(delay(alice, "d0", 9), by: alice)
        #expect(jam.state.deviceDelays?.count == SessionState.deviceDelaysPerMember)
    }

    @Test func aMemberWhoLeavesTakesTheirDelaysAlong() throws {
        var jam = try Jam()
        try jam.apply(delay(alice, "phone", 40), by: alice)
        try jam.apply(delay(bob, "laptop", 15), by: bob)
        try jam.apply(.leave, by: alice)
        #expect(jam.state.deviceDelays == [DeviceDelay(userId: bob, deviceId: "laptop", delayMs: 15)])
    }

    @Test func delaysSurviveEncodingAndASessionStoredBeforeDelaysDecodes() throws {
        var jam = try Jam()
        try jam.apply(delay(alice, "phone", 40), by: alice)
        let data = try JSONEncoder().encode(jam.state)
        #expect(try JSONDecoder().decode(SessionState.self, from: data) == jam.state)
        var old = try JSONSerialization.jsonObject(with: data) as! [String: Any]
        old["deviceDelays"] = nil
        let decoded = try JSONDecoder().decode(SessionState.self, from: JSONSerialization.data(withJSONObject: old))
        #expect(decoded.deviceDelays == nil)
    }
}

/// A device that plays ahead of the timeline (its output latency plus its delay) needs the
/// start's commit that much earlier, or it is heard late.
struct DeviceLeadTests {
    func report(_ device: String, latency: Double, delay: Double = 0) -> Command {
        .syncReport(SyncReport(epoch: 0, offsetMs: 0, errorMs: 5, driftMs: 0, deviceId: device, outputLatencyMs: latency, delayMs: delay))
    }

    @Test func theCommitGoesOutEarlierByTheSlowestConnectedDevicesLead() throws {
        var jam = try Jam()
        try jam.apply(report("speaker", latency: 180, delay: 21), by: alice)
        try jam.apply(report("phone", latency: 12), by: bob)
        #expect(jam.state.commitLeadMs() == jam.state.timing.commitMarginMs + 205)
        try jam.apply(.add(track: track(1), nonce: "n1", itemId: itemID(1)), by: host)
        let current = try jam.requireCurrent()
        #expect(current.commitBy == current.anchorMs - jam.state.timing.commitMarginMs - 205)
        // Alice's speaker goes quiet (she disconnects): only Bob's phone counts.
        try jam.apply(.disconnect, by: alice)
        #expect(jam.state.slowestDeviceLeadMs() == 15)
    }

    @Test func theLeadBetweenPrepareAndStartMakesRoomForTheSlowestDevice() throws {
        var jam = try Jam()
        #expect(jam.state.leadMs() == jam.state.timing.minLeadMs)
        try jam.apply(report("speaker", latency: 900), by: alice)
        #expect(jam.state.leadMs() == 2 * 10 + 900, "twice the round trip, plus the lead")
    }

    @Test func aWobblingLatencyChangesNothingWithinFiveMilliseconds() throws {
        var jam = try Jam()
        try jam.apply(report("speaker", latency: 151.2), by: alice)
        let before = jam.state
        try jam.apply(report("speaker", latency: 154.9), by: alice)
        #expect(jam.state == before)
        try jam.apply(report("speaker", latency: 0), by: alice)
        #expect(jam.state.deviceLeads == nil)
    }
}

/// Join codes and device ids read as the web client reads them: Tests/Fixtures/ClientParity/join-codes.json
/// (JoinCodes; normaliseJoinCode in js/protocol.js) and device-ids.json (Validate.deviceId; isDeviceId in
/// js/protocol.js), which the web client passes too (Tests/Browser/test_parity_fixtures.py).
struct JoinCodeAndDeviceIdParityTests {
    struct JoinCodeFixture: Decodable {
        struct Case: Decodable {
            var name: String, input: String, code: String, refusal: String?
        }
        var maxCodeLength: Int, cases: [Case]
    }

    struct DeviceIdFixture: Decodable {
        struct Case: Decodable {
            var name: String, text: String, times: Int, accepted: Bool
        }
        var maxDeviceId: Int, cases: [Case]
    }

    static func fixture<T: Decodable>(_ name: String, as type: T.Type) throws -> T {
        // #filePath, not bundle resources: the same file the browser test reads.
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/ClientParity/\(name).json")
        return try JSONDecoder().decode(T.self, from: Data(contentsOf: url))
    }

    @Test func joinCodesNormaliseLikeTheWebClientsSharedCases() throws {
        let fixture = try Self.fixture("join-codes", as: JoinCodeFixture.self)
        #expect(fixture.maxCodeLength == JoinCodes.maxLength)
        #expect(!fixture.cases.isEmpty)
        for c in fixture.cases {
            // Scalar by scalar, as JavaScript compares: Swift's == would let a canonically equivalent spelling pass.
            #expect(Array(JoinCodes.normalise(c.input).unicodeScalars) == Array(c.code.unicodeScalars), "\(c.name)")
            do {
                let code = try JoinCodes.read(c.input)
                #expect(c.refusal == nil, "\(c.name) was accepted")
                #expect(Array(code.unicodeScalars) == Array(c.code.unicodeScalars), "\(c.name)")
            } catch {
                #expect(error.message == c.refusal, "\(c.name) was refused: \(error.message)")
            }
        }
    }

    @Test func deviceIdsAreCheckedLikeTheWebClientsSharedCases() throws {
        let fixture = try Self.fixture("device-ids", as: DeviceIdFixture.self)
        #expect(fixture.maxDeviceId == Validate.maxDeviceId)
        #expect(!fixture.cases.isEmpty)
        for c in fixture.cases {
            let id = String(repeating: c.text, count: c.times)
            do {
                try Validate.deviceId(id)
                #expect(c.accepted, "\(c.name) was accepted")
            } catch {
                #expect(!c.accepted, "\(c.name) was refused: \(error.message)")
            }
        }
    }
}
