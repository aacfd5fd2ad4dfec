import JamPirateRadioWire
import Foundation
import JamClient
import JamClientNIO
import JamProtocol
import NIOCore

/// Builds PirateRadio devices: the same `ClockSync`, `SyncEngine` and `SimulatedPlayer` as
/// an OpenJam device, wired to a PirateRadio socket (`?token&sessionId`) through
/// `PirateRadioTranslator`, since JamClient's `SessionClient` speaks only OpenJam.
enum PirateRadioDevice {
    /// Signs in as user `name`, and prepares a device that joins `session` by opening its socket.
    static func make(
        name: String, rest: PirateRadioREST, server: ServerUnderTest, session: String, group: any EventLoopGroup, shape: PathShape,
        clockOffsetMs: Double, clockDriftPpm: Double, outputLatencyMs: Double, seed: UInt64
    ) async throws -> SimulatedDevice {
        let token = try await rest.auth(name, name: name)
        let proxy = try await DelayProxy.start(group: group, targetHost: server.host, targetPort: server.port, shape: shape, seed: seed)
        let clock = DeviceClock(offsetMs: clockOffsetMs, driftPpm: clockDriftPpm)
        let sleeper = TaskSleeper()
        let player = SimulatedPlayer(clock: clock, sleeper: sleeper, configuration: .init(outputLatencyMs: outputLatencyMs))
        let clockSync = ClockSync(clock: clock)
        // The protocol has no `ready` or `syncReport`: the engine's messages go nowhere.
        let engine = SyncEngine(player: player, clockSync: clockSync, clock: clock, send: { _ in })
        guard let url = URL(string: "ws://127.0.0.1:\(proxy.port)" + PirateRadioREST.socketPath(token: token, session: session)) else {
            throw LoadSocket.Failure(description: "bad socket URL")
        }
        return SimulatedDevice(
            name: name, clock: clock, shape: shape, player: player, clockSync: clockSync, proxy: proxy,
            run: { try await run(url: url, clock: clock, clockSync: clockSync, engine: engine, sleeper: sleeper) })
    }

    /// Holds the socket until cancelled: pongs go to the clock sync stamped as they are read,
    /// timeline frames to the engine in order, pings out every burst.
    static func run(url: URL, clock: DeviceClock, clockSync: ClockSync, engine: SyncEngine, sleeper: any Sleeper) async throws {
        let close = try await NIOWebSocketTransport().withSocket(url: url, headers: [:]) { socket in
            let (feed, feedIn) = AsyncStream.makeStream(of: ServerEnvelope.self)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    try await clockSync.run(
                        send: { ping in
                            let data = PirateRadio.json(PirateRadio.Ping(clientSendTime: ping.clientSendTime))
                            try await socket.send("{\"type\":\"ping\",\"data\":\(data)}")
                        }, sleeper: sleeper)
                }
                group.addTask { try await engine.run(sleeper: sleeper) }
                group.addTask {
                    for await envelope in feed { await engine.handle(envelope) }
                }
                var translator = PirateRadioTranslator()
                while let text = try await socket.receive() {
                    let receivedAt = clock.now()
                    for output in try translator.translate(text) {
                        switch output {
                        case .pong(let pong): await clockSync.record(pong, receivedAt: receivedAt)
                        case .envelope(let envelope): feedIn.yield(envelope)
                        }
                    }
                }
                feedIn.finish()
                group.cancelAll()
            }
        }
        if let code = close.code, code != 1000 {
            throw LoadSocket.Failure(description: "the PirateRadio server closed the socket with \(code): \(close.reason ?? "")")
        }
    }
}
