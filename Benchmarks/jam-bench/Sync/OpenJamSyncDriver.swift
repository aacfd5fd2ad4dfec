import Foundation
import JamClient
import JamClientNIO
import JamProtocol
import NIOCore

/// The OpenJam host: a `SessionClient` on a direct (undelayed) socket that adds, skips and
/// reads the timeline from its mirror. It plays nothing, so like a remote-control host it
/// never sends `ready`: every start is committed at its deadline, 150 ms before it.
struct OpenJamSyncDriver: SyncDriver {
    let rest: OpenJamREST
    let server: ServerUnderTest
    let group: any EventLoopGroup
    let code: String
    let host: SessionClient
    /// What-if clock-sync knobs for the devices' `Participant` (nil: its defaults).
    var clockConfiguration: ClockSync.Configuration?

    /// Signs the host in and opens a session that admits `capacity` members.
    static func make(
        rest: OpenJamREST, server: ServerUnderTest, group: any EventLoopGroup, capacity: Int, clockConfiguration: ClockSync.Configuration? = nil
    ) async throws -> OpenJamSyncDriver {
        let identity = try await rest.guest("bench host")
        let view = try await rest.create(identity.token, settings: SettingsPatch(maxMembers: min(1000, capacity), allowDuplicates: true))
        guard let url = URL(string: server.baseURL) else { throw ScenarioFailure(description: "bad server URL") }
        let client = SessionClient(
            api: JamAPI(server: url, token: identity.token), sessionId: view.session.id, me: identity.userId, transport: NIOWebSocketTransport())
        return OpenJamSyncDriver(rest: rest, server: server, group: group, code: view.session.joinCode, host: client, clockConfiguration: clockConfiguration)
    }

    /// Runs the host's SessionClient.
    func runConnection() async throws {
        try await host.run()
    }

    /// Adds `track` to the empty queue, which starts it, and waits for its commit.
    func play(_ track: Track) async throws -> PlaybackTimeline {
        // Adding while nothing plays starts the track at once.
        let ack = try await host.send(.addToQueue(AddToQueue(track: track, nonce: UUID().uuidString)))
        guard let itemId = ack.itemId else { throw ScenarioFailure(description: "the add was acknowledged without an item id") }
        return try await playing { $0.item.id == itemId }
    }

    /// Adds `track` behind the current item.
    func queue(_ track: Track) async throws {
        try await host.send(.addToQueue(AddToQueue(track: track, nonce: UUID().uuidString)))
    }

    /// Host skip; waits for `next` to be committed.
    func skip(to next: Track) async throws -> PlaybackTimeline {
        try await host.send(.skip(Skip()))
        return try await playing { $0.item.track.id == next.id }
    }

    /// Waits for the gapless hand-over to `track`.
    func waitForStart(of track: Track) async throws -> PlaybackTimeline {
        try await playing(timeout: .seconds(30)) { $0.item.track.id == track.id }
    }

    /// Waits for the queue to run dry.
    func waitStopped() async throws {
        try await waitFor("the queue to run dry", timeout: .seconds(30)) { await host.mirror.view?.nowPlaying == nil ? true : nil }
    }

    /// The host mirror's playing timeline.
    func current() async -> PlaybackTimeline? {
        guard let now = await host.mirror.view?.nowPlaying, now.state == .playing else { return nil }
        return PlaybackTimeline(now)
    }

    /// A new member device joined by code.
    func makeDevice(
        name: String, shape: PathShape, clockOffsetMs: Double, clockDriftPpm: Double, outputLatencyMs: Double, seed: UInt64
    ) async throws -> SimulatedDevice {
        try await OpenJamDevice.make(
            name: name, rest: rest, server: server, code: code, group: group, shape: shape, clockOffsetMs: clockOffsetMs,
            clockDriftPpm: clockDriftPpm,
            outputLatencyMs: outputLatencyMs, seed: seed,
            clockConfiguration: clockConfiguration ?? ClockSync.Configuration())
    }

    /// The committed timeline of the item `matches` picks, once the host's mirror has it.
    private func playing(timeout: Duration = .seconds(15), _ matches: @escaping @Sendable (NowPlaying) -> Bool) async throws -> PlaybackTimeline {
        try await waitFor("a committed start", timeout: timeout) {
            guard let now = await host.mirror.view?.nowPlaying, now.state == .playing, matches(now) else { return nil }
            return PlaybackTimeline(now)
        }
    }
}
