import Foundation
import JamProtocol
import JamTestSupport
import Testing

/// The sync column, device delays, re-syncs and a calibration, over real sockets to a real server.
struct DeviceSyncEndToEndTests {
    func report(_ device: String, clock: Double = 0.8, playback: Double = 1.5, playing: Bool = true, canListen: Bool? = nil) -> ClientCommand {
        .syncReport(SyncReport(
            epoch: 0, offsetMs: 12, errorMs: clock, driftMs: playback, deviceId: device, outputLatencyMs: 40, delayMs: 0,
            clockDriftPpm: 4, playing: playing, canListen: canListen))
    }

    @Test func aMembersSyncReportReachesTheHostsButNotOtherMembers() async throws {
        try await TestServer.with { server in
            let party = try await Party.start(server, guests: ["Eli", "Fay"])
            let eli = party.guests[0], fay = party.guests[1]
            eli.socket.send(report("eli-phone", playback: 9), id: "r1")
            try await eli.socket.next("ack r1") { $0.ack?.id == "r1" }
            let status = try await party.host.socket.next("Eli's row") { $0.syncStatus?.devices.contains { $0.userId == eli.id } == true }
            let row = try #require(status.syncStatus?.devices.first { $0.userId == eli.id })
            #expect(row.deviceId == "eli-phone")
            #expect(row.grade == .fair)
            #expect(row.playbackErrorMs == 9)
            #expect(row.outputLatencyMs == 40)
            #expect(row.playing)
            // Fay is no host: her own report is acknowledged, and she sees nobody's.
            fay.socket.send(report("fay-laptop"), id: "r2")
            try await fay.socket.next("ack r2") { $0.ack?.id == "r2" }
            try await party.host.socket.next("Fay's row") { $0.syncStatus?.devices.count == 2 }
            #expect(await fay.socket.received.allSatisfy { $0.syncStatus == nil })
            await party.close()
        }
    }

    @Test func aHostWhoConnectsSeesTheBoardAtOnce() async throws {
        try await TestServer.with { server in
            let party = try await Party.start(server, guests: ["Eli"])
            party.guests[0].socket.send(report("eli-phone"), id: "r1")
            try await party.host.socket.next(.syncStatus)
            let second = TestSocket(server: server, session: party.id, token: party.host.token)
            try await second.next(.stateSync)
            let status = try await second.next(.syncStatus)
            #expect(status.syncStatus?.devices.map(\.deviceId) == ["eli-phone"])
            await second.close()
            await party.close()
        }
    }

    @Test func aDelayTheHostSetsReachesTheMemberAndComesBackAfterAReconnect() async throws {
        try await TestServer.with { server in
            let party = try await Party.start(server, guests: ["Eli"])
            let eli = party.guests[0]
            party.host.socket.send(.setDeviceDelay(SetDeviceDelay(userId: eli.id, deviceId: "eli-speaker", delayMs: 185)), id: "d1")
            try await party.host.socket.next("ack d1") { $0.ack?.id == "d1" }
            let event = try await eli.socket.next(.deviceDelay)
            #expect(event.deviceDelay == DeviceDelay(userId: eli.id, deviceId: "eli-speaker", delayMs: 185))
            // Eli's own change; then a fresh socket sees both in its stateSync.
            eli.socket.send(.setDeviceDelay(SetDeviceDelay(deviceId: "eli-phone", delayMs: -12.5)), id: "d2")
            try await eli.socket.next("ack d2") { $0.ack?.id == "d2" }
            await eli.socket.close()
            let again = TestSocket(server: server, session: party.id, token: eli.token)
            let view = try #require(try await again.next(.stateSync).stateSync)
            #expect(Set(view.deviceDelays ?? []) == [
                DeviceDelay(userId: eli.id, deviceId: "eli-speaker", delayMs: 185),
                DeviceDelay(userId: eli.id, deviceId: "eli-phone", delayMs: -12.5),
            ])
            // A member may not set the host's.
            again.send(.setDeviceDelay(SetDeviceDelay(userId: party.host.id, deviceId: "x", delayMs: 5)), id: "d3")
            let refused = try await again.next("error d3") { $0.error?.id == "d3" }
            #expect(refused.error?.code == .forbidden)
            await again.close()
            await party.close()
        }
    }

    @Test func aResyncReachesOnlyTheMemberItNames() async throws {
        try await TestServer.with { server in
            let party = try await Party.start(server, guests: ["Eli", "Fay"])
            party.host.socket.send(.resync(Resync(userId: party.guests[0].id, deviceId: "eli-phone")), id: "s1")
            try await party.host.socket.next("ack s1") { $0.ack?.id == "s1" }
            let got = try await party.guests[0].socket.next(.resync)
            #expect(got.resync == Resync(userId: party.guests[0].id, deviceId: "eli-phone"))
            party.guests[1].socket.send(.resync(Resync(userId: party.host.id)), id: "s2")
            let refused = try await party.guests[1].socket.next("error s2") { $0.error?.id == "s2" }
            #expect(refused.error?.code == .forbidden)
            #expect(await party.guests[1].socket.received.allSatisfy { $0.resync == nil })
            await party.close()
        }
    }

    @Test func aCalibrationTurnsTheListenersOffsetsIntoDelaysEveryoneSees() async throws {
        try await TestServer.with { server in
            let party = try await Party.start(server, guests: ["Eli", "Fay"])
            let eli = party.guests[0], fay = party.guests[1]
            party.host.socket.send(report("host-mic"), id: "r0")
            eli.socket.send(report("eli-phone"), id: "r1")
            fay.socket.send(report("fay-speaker"), id: "r2")
            try await party.host.socket.next("three rows") { $0.syncStatus?.devices.count == 3 }

            // Fay, no host, may not start one.
            fay.socket.send(.calibrate(Calibrate(deviceId: "fay-speaker")), id: "c0")
            #expect(try await fay.socket.next("error c0") { $0.error?.id == "c0" }.error?.code == .forbidden)

            party.host.socket.send(.calibrate(Calibrate(deviceId: "host-mic")), id: "c1")
            try await party.host.socket.next("ack c1") { $0.ack?.id == "c1" }
            let plan = try #require(try await eli.socket.next(.calibration).calibration)
            #expect(plan.listener == DeviceRef(userId: party.host.id, deviceId: "host-mic"))
            #expect(plan.probes.first?.deviceId == "host-mic")
            #expect(Set(plan.probes.map(\.deviceId)) == ["host-mic", "eli-phone", "fay-speaker"])
            // A second one waits for the first.
            party.host.socket.send(.calibrate(Calibrate(deviceId: "host-mic")), id: "c2")
            #expect(try await party.host.socket.next("error c2") { $0.error?.id == "c2" }.error?.code == .conflict)
            // Only the listener reports.
            let report = CalibrationReport(calibrationId: plan.id, arrivals: [
                ProbeArrival(userId: party.host.id, deviceId: "host-mic", offsetMs: 8),
                ProbeArrival(userId: eli.id, deviceId: "eli-phone", offsetMs: 58.25),
                ProbeArrival(userId: fay.id, deviceId: "fay-speaker", offsetMs: nil),
            ])
            eli.socket.send(.calibrationReport(report), id: "x1")
            #expect(try await eli.socket.next("error x1") { $0.error?.id == "x1" }.error?.code == .forbidden)
            party.host.socket.send(.calibrationReport(report), id: "x2")
            try await party.host.socket.next("ack x2") { $0.ack?.id == "x2" }

            let delay = try await eli.socket.next(.deviceDelay)
            #expect(delay.deviceDelay == DeviceDelay(userId: eli.id, deviceId: "eli-phone", delayMs: 50.3))
            let result = try #require(try await fay.socket.next(.calibrationResult).calibrationResult)
            #expect(result.ok)
            #expect(result.results.first { $0.deviceId == "fay-speaker" }?.heard == false)
            #expect(result.results.first { $0.deviceId == "eli-phone" }?.correctionMs == 50.3)
            let view = try await server.api.view(eli.token, party.id)
            #expect(view.deviceDelays == [DeviceDelay(userId: eli.id, deviceId: "eli-phone", delayMs: 50.3)])
            await party.close()
        }
    }

    @Test func aMemberRemovedDuringACalibrationDoesNotVoidTheOthersCorrections() async throws {
        try await TestServer.with { server in
            let party = try await Party.start(server, guests: ["Eli", "Fay"])
            let eli = party.guests[0], fay = party.guests[1]
            party.host.socket.send(report("host-mic"), id: "r0")
            eli.socket.send(report("eli-phone"), id: "r1")
            fay.socket.send(report("fay-speaker"), id: "r2")
            try await party.host.socket.next("three rows") { $0.syncStatus?.devices.count == 3 }
            party.host.socket.send(.calibrate(Calibrate(deviceId: "host-mic")), id: "c1")
            let plan = try #require(try await eli.socket.next(.calibration).calibration)
            // Fay is removed while the devices chirp.
            let kicked = try await server.api.request("DELETE", "/api/v1/sessions/\(party.id)/members/\(fay.id)", token: party.host.token)
            #expect(kicked.status == 204)
            party.host.socket.send(.calibrationReport(CalibrationReport(calibrationId: plan.id, arrivals: [
                ProbeArrival(userId: party.host.id, deviceId: "host-mic", offsetMs: 8),
                ProbeArrival(userId: eli.id, deviceId: "eli-phone", offsetMs: 58.25),
                ProbeArrival(userId: fay.id, deviceId: "fay-speaker", offsetMs: 20),
            ])), id: "x1")
            let result = try #require(try await eli.socket.next(.calibrationResult).calibrationResult)
            #expect(result.ok, "\(result.message)")
            #expect(result.results.first { $0.deviceId == "eli-phone" }?.delayMs == 50.3)
            #expect(result.results.first { $0.deviceId == "fay-speaker" }?.delayMs == 0, "nothing kept for a member who is gone")
            let view = try await server.api.view(eli.token, party.id)
            #expect(view.deviceDelays == [DeviceDelay(userId: eli.id, deviceId: "eli-phone", delayMs: 50.3)])
            await party.close()
        }
    }

    @Test func aCalibrationWithAListenerThatIsNotPlayingIsRefused() async throws {
        try await TestServer.with { server in
            let party = try await Party.start(server, guests: ["Eli"])
            party.host.socket.send(report("host-mic", playing: false), id: "r0")
            party.guests[0].socket.send(report("eli-phone"), id: "r1")
            try await party.host.socket.next("two rows") { $0.syncStatus?.devices.count == 2 }
            party.host.socket.send(.calibrate(Calibrate(deviceId: "host-mic")), id: "c1")
            let refused = try await party.host.socket.next("error c1") { $0.error?.id == "c1" }
            #expect(refused.error?.code == .conflict)
            #expect(refused.error?.message.contains("not playing") == true)
            await party.close()
        }
    }

    @Test func aDeviceThatSaysItCannotRecordShowsSoAndIsRefusedAsTheListener() async throws {
        try await TestServer.with { server in
            let party = try await Party.start(server, guests: ["Eli"])
            let eli = party.guests[0]
            party.host.socket.send(report("host-laptop", canListen: true), id: "r0")
            eli.socket.send(report("eli-speaker", canListen: false), id: "r1")
            let board = try await party.host.socket.next("two rows") { $0.syncStatus?.devices.count == 2 }
            let rows = try #require(board.syncStatus?.devices)
            #expect(rows.first { $0.deviceId == "eli-speaker" }?.canListen == false)
            #expect(rows.first { $0.deviceId == "host-laptop" }?.canListen == true)
            party.host.socket.send(.calibrate(Calibrate(userId: eli.id, deviceId: "eli-speaker")), id: "c1")
            let refused = try await party.host.socket.next("error c1") { $0.error?.id == "c1" }
            #expect(refused.error?.code == .conflict)
            #expect(refused.error?.message.contains("cannot record the room") == true)
            // The device that can listen still can: the refusal started nothing.
            party.host.socket.send(.calibrate(Calibrate(deviceId: "host-laptop")), id: "c2")
            try await party.host.socket.next("ack c2") { $0.ack?.id == "c2" }
            let plan = try await eli.socket.next(.calibration)
            #expect(plan.calibration?.listener == DeviceRef(userId: party.host.id, deviceId: "host-laptop"))
            #expect(await eli.socket.received.filter { $0.calibration != nil }.count == 1)
            await party.close()
        }
    }

    @Test func aCalibrateOrResyncSentAgainAfterAReconnectGetsItsFirstAnswerAndRunsOnce() async throws {
        try await TestServer.with { server in
            let party = try await Party.start(server, guests: ["Eli"])
            let eli = party.guests[0]
            party.host.socket.send(report("host-mic"), id: "r0")
            eli.socket.send(report("eli-phone"), id: "r1")
            try await party.host.socket.next("two rows") { $0.syncStatus?.devices.count == 2 }
            party.host.socket.send(.calibrate(Calibrate(deviceId: "host-mic")), id: "c1")
            try await party.host.socket.next("ack c1") { $0.ack?.id == "c1" }
            party.host.socket.send(.resync(Resync(userId: eli.id, deviceId: "eli-phone")), id: "s1")
            try await party.host.socket.next("ack s1") { $0.ack?.id == "s1" }

            // The host's phone changes network before it saw the answers, and sends both again.
            await party.host.socket.close()
            let again = TestSocket(server: server, session: party.id, token: party.host.token)
            try await again.next(.stateSync)
            again.send(.calibrate(Calibrate(deviceId: "host-mic")), id: "c1")
            let answer = try await again.next("answer c1") { $0.ack?.id == "c1" || $0.error?.id == "c1" }
            #expect(answer.ack?.id == "c1", "the run it started, not a conflict with it: \(String(describing: answer.error))")
            again.send(.resync(Resync(userId: eli.id, deviceId: "eli-phone")), id: "s1")
            try await again.next("ack s1") { $0.ack?.id == "s1" }

            // Anything sent to Eli for the retries would be there before the answer to a later report.
            eli.socket.send(report("eli-phone"), id: "r2")
            try await eli.socket.next("ack r2") { $0.ack?.id == "r2" }
            let received = await eli.socket.received
            #expect(received.filter { $0.calibration != nil }.count == 1, "the room chirped twice")
            #expect(received.filter { $0.resync != nil }.count == 1, "the device re-synced twice")
            await again.close()
            await party.close()
        }
    }

    @Test func aMemberWhoIsRemovedLeavesTheSyncColumnAndNoCalibrationCountsTheirDevice() async throws {
        try await TestServer.with { server in
            let party = try await Party.start(server, guests: ["Fay"])
            let fay = party.guests[0]
            party.host.socket.send(report("host-mic"), id: "r0")
            fay.socket.send(report("fay-phone"), id: "r1")
            try await party.host.socket.next("two rows") { $0.syncStatus?.devices.count == 2 }
            let kicked = try await server.api.request("DELETE", "/api/v1/sessions/\(party.id)/members/\(fay.id)", token: party.host.token)
            #expect(kicked.status == 204)
            // Nobody else reports: the column drops Fay's phone anyway.
            let status = try await party.host.socket.next("the column without Fay") { $0.syncStatus?.devices.count == 1 }
            #expect(status.syncStatus?.devices.map(\.deviceId) == ["host-mic"])
            // Within the 12 s a report counts as fresh, her phone is no longer one to calibrate.
            party.host.socket.send(.calibrate(Calibrate(deviceId: "host-mic")), id: "c1")
            let refused = try await party.host.socket.next("error c1") { $0.error?.id == "c1" || $0.ack?.id == "c1" }
            #expect(refused.error?.code == .conflict, "a calibration counted a removed member's device")
            await party.close()
        }
    }
}
