import Foundation
import JamClient
import JamClientNIO
import NIOCore

/// What-if wiring for tuning studies: the same parts as `Participant` (a `SessionClient`, a
/// `ClockSync`, a `SyncEngine` driving the player), wired the same way, but with a
/// `ClockSync.Configuration` of the benchmark's choosing (Participant takes none) and,
/// optionally, the first timeline held back until a whole ping burst has been answered.
struct TunedSync: Sendable {
    /// The clock sync's knobs.
    var configuration: ClockSync.Configuration
    /// Hold timeline events until `burstSize` pongs arrived (the engine otherwise starts on the first).
    var waitForFullBurst: Bool

    /// A device like `OpenJamDevice.make`'s, wired with these knobs.
    func make(
        name: String, rest: OpenJamREST, server: ServerUnderTest, code: String, group: any EventLoopGroup, shape: PathShape, clockOffsetMs: Double,
        seed: UInt64
    ) async throws -> SimulatedDevice {
        let identity = try await rest.guest(name)
        let view = try await rest.join(identity.token, code: code)
        let proxy = try await DelayProxy.start(group: group, targetHost: server.host, targetPort: server.port, shape: shape, seed: seed)
        let clock = DeviceClock(offsetMs: clockOffsetMs)
        let sleeper = TaskSleeper()
        let player = SimulatedPlayer(clock: clock, sleeper: sleeper)
        guard let proxied = URL(string: "http://127.0.0.1:\(proxy.port)") else { throw LoadSocket.Failure(description: "bad proxy URL") }
        let client = SessionClient(
            api: JamAPI(server: proxied, token: identity.token), sessionId: view.session.id, me: identity.userId, transport: NIOWebSocketTransport(),
            backoff: Backoff(baseMs: 50, capMs: 500), clock: clock)
        let clockSync = ClockSync(clock: clock, configuration: configuration)
        let engine = SyncEngine(player: player, clockSync: clockSync, clock: clock, send: { command in await client.post(command) })
        let fullBurst = waitForFullBurst ? configuration.burstSize : 0
        return SimulatedDevice(
            name: name, clock: clock, shape: shape, player: player, clockSync: clockSync, proxy: proxy,
            run: { try await Self.run(client: client, clockSync: clockSync, engine: engine, sleeper: sleeper, fullBurst: fullBurst) })
    }

    /// `Participant.run` without the store and preparer, plus the optional hold.
    static func run(client: SessionClient, clockSync: ClockSync, engine: SyncEngine, sleeper: any Sleeper, fullBurst: Int) async throws {
        await client.onPong { pong, receivedAt in await clockSync.record(pong, receivedAt: receivedAt) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await clockSync.run(send: { ping in await client.post(.ping(ping)) }, sleeper: sleeper) }
            group.addTask { try await engine.run(sleeper: sleeper) }
            group.addTask {
                var held = fullBurst > 0
                for await update in await client.subscribe() {
                    guard case .envelope(let envelope) = update else { continue }
                    if held {
                        // Bounded: after 2 s the engine gets the timeline whatever the clock has.
                        let deadline = ContinuousClock.now + .seconds(2)
                        while await clockSync.acceptedSamples < fullBurst && ContinuousClock.now < deadline {
                            try await Task.sleep(for: .milliseconds(10))
                        }
                        held = false
                    }
                    await engine.handle(envelope)
                }
            }
            group.addTask {
                // A reconnect may come through another route: measure the clock again.
                var wasConnected = false
                for await update in await client.subscribe() {
                    guard case .phase(let phase) = update else { continue }
                    if phase == .connected && !wasConnected { await clockSync.reset() }
                    wasConnected = phase == .connected
                }
            }
            try await client.run()
            group.cancelAll()
        }
    }
}
