import Foundation
import JamClient
import JamClientNIO
import JamProtocol
import NIOCore

/// Builds OpenJam devices: JamClient's `Participant` exactly as an app uses it, with a
/// `SimulatedPlayer`, the device's offset clock, and its socket through its own proxy.
enum OpenJamDevice {
    /// Signs in, joins by `code` and prepares a participant behind a new proxy shaped `shape`.
    static func make(
        name: String, rest: OpenJamREST, server: ServerUnderTest, code: String, group: any EventLoopGroup, shape: PathShape, clockOffsetMs: Double, clockDriftPpm: Double,
        outputLatencyMs: Double, seed: UInt64, clockConfiguration: ClockSync.Configuration = ClockSync.Configuration()
    ) async throws -> SimulatedDevice {
        let identity = try await rest.guest(name)
        let view = try await rest.join(identity.token, code: code)
        let proxy = try await DelayProxy.start(group: group, targetHost: server.host, targetPort: server.port, shape: shape, seed: seed)
        let clock = DeviceClock(offsetMs: clockOffsetMs, driftPpm: clockDriftPpm)
        let sleeper = TaskSleeper()
        let player = SimulatedPlayer(clock: clock, sleeper: sleeper, configuration: .init(outputLatencyMs: outputLatencyMs))
        // REST went direct; only the realtime socket (pings, events) takes the delayed path.
        guard let proxied = URL(string: "http://127.0.0.1:\(proxy.port)") else { throw LoadSocket.Failure(description: "bad proxy URL") }
        let participant = Participant(
            api: JamAPI(server: proxied, token: identity.token), sessionId: view.session.id, me: identity.userId,
            transport: NIOWebSocketTransport(), player: player, deviceId: "bench-\(seed)", clock: clock, sleeper: sleeper, backoff: Backoff(baseMs: 50, capMs: 500),
            clockConfiguration: clockConfiguration)
        return SimulatedDevice(
            name: name, clock: clock, shape: shape, player: player, clockSync: participant.clockSync, proxy: proxy,
            run: { try await participant.run() })
    }
}
