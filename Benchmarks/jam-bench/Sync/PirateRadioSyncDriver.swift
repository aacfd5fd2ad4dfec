import JamPirateRadioWire
import Foundation
import JamClient
import JamClientNIO
import JamProtocol
import NIOCore

/// The PirateRadio DJ: starts tracks itself with `playPrepare` + `playCommit {ntpTimestamp}`
/// (500 ms ahead, like OpenJam's shortest lead), queues with `addToQueue`, skips with `skip`,
/// and reads skips and auto-advances from the `stateSync`s the server sends everybody.
struct PirateRadioSyncDriver: SyncDriver {
    let rest: PirateRadioREST
    let server: ServerUnderTest
    let group: any EventLoopGroup
    let session: String
    let token: String
    let state = PirateDJState()
    /// How far ahead of "now" the DJ schedules a start.
    static let leadMs = 500.0

    /// Signs the DJ in and creates the session.
    static func make(rest: PirateRadioREST, server: ServerUnderTest, group: any EventLoopGroup) async throws -> PirateRadioSyncDriver {
        let token = try await rest.auth("bench-dj", name: "Bench DJ")
        let created = try await rest.create(token)
        return PirateRadioSyncDriver(rest: rest, server: server, group: group, session: created.id, token: token)
    }

    /// Holds the DJ's socket, reading every frame into `state`.
    func runConnection() async throws {
        guard let url = URL(string: "ws://\(server.host):\(server.port)" + PirateRadioREST.socketPath(token: token, session: session)) else {
            throw ScenarioFailure(description: "bad socket URL")
        }
        let state = self.state
        _ = try await NIOWebSocketTransport().withSocket(url: url, headers: [:]) { socket in
            await state.attach(socket)
            while let text = try await socket.receive() { try await state.received(text) }
        }
    }

    /// The DJ prepares `track`, then commits it to start `leadMs` from now.
    func play(_ track: Track) async throws -> PlaybackTimeline {
        let wire = PirateRadio.Track(track)
        try await state.send(type: "playPrepare", data: PirateRadio.json(PirateRadio.PlayPrepare(trackId: wire.id, track: wire)))
        // Time for every device to load before the commit names the instant.
        try await Task.sleep(for: .milliseconds(300))
        let anchor = (TrueTime.serverNow() + Self.leadMs).rounded()
        try await state.send(type: "playCommit", data: PirateRadio.json(PirateRadio.TimelineData(positionMs: 0, ntpTimestamp: anchor)))
        let timeline = PlaybackTimeline(epoch: 0, itemId: JamID("dj-start"), track: track, state: .playing, positionMs: 0, anchorMs: anchor)
        await state.setTimeline(timeline)
        return timeline
    }

    /// Adds `track` and waits for the queue update that shows it.
    func queue(_ track: Track) async throws {
        try await state.send(type: "addToQueue", data: PirateRadio.json(PirateRadio.AddToQueue(track: PirateRadio.Track(track), nonce: UUID().uuidString)))
        try await waitFor("\(track.id) in the queue") { await state.queued.contains(track.id) ? true : nil }
    }

    /// DJ skip; the server starts the queue head and says so in a `stateSync`.
    func skip(to next: Track) async throws -> PlaybackTimeline {
        try await state.send(type: "skip", data: "{}")
        return try await waitForStart(of: next)
    }

    /// Waits for a `stateSync` playing `track`.
    func waitForStart(of track: Track) async throws -> PlaybackTimeline {
        try await waitFor("\(track.id) to start", timeout: .seconds(30)) {
            guard let timeline = await state.timeline, timeline.track.id == track.id else { return nil }
            return timeline
        }
    }

    /// Waits for a `stateSync` that plays nothing.
    func waitStopped() async throws {
        try await waitFor("the queue to run dry", timeout: .seconds(30)) { await state.timeline == nil ? true : nil }
    }

    /// The timeline the DJ last started or was told of.
    func current() async -> PlaybackTimeline? {
        await state.timeline
    }

    /// A new device that joins by opening its socket.
    func makeDevice(
        name: String, shape: PathShape, clockOffsetMs: Double, clockDriftPpm: Double, outputLatencyMs: Double, seed: UInt64
    ) async throws -> SimulatedDevice {
        try await PirateRadioDevice.make(
            name: name.replacingOccurrences(of: " ", with: "-"), rest: rest, server: server, session: session, group: group, shape: shape,
            clockOffsetMs: clockOffsetMs, clockDriftPpm: clockDriftPpm, outputLatencyMs: outputLatencyMs, seed: seed)
    }
}

/// What the DJ's socket has told it: the playing timeline and the queue.
actor PirateDJState {
    private var socket: (any RealtimeSocket)?
    /// The playing track's timeline (from the DJ's own commit or the latest `stateSync`).
    private(set) var timeline: PlaybackTimeline?
    /// Track ids in the queue.
    private(set) var queued: Set<String> = []

    /// A frame's type.
    private struct Header: Decodable {
        var type: String
    }

    /// A frame's data.
    private struct Body<T: Decodable>: Decodable {
        var data: T
    }

    /// The DJ's socket is open.
    func attach(_ socket: any RealtimeSocket) {
        self.socket = socket
    }

    /// Sends `{"type", "data"}`, waiting (at most 10 s) for the socket to open.
    func send(type: String, data: String) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while socket == nil && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        guard let socket else { throw ScenarioFailure(description: "the DJ's socket did not open") }
        try await socket.send("{\"type\":\"\(type)\",\"data\":\(data)}")
    }

    /// The DJ started a track itself (the server relays the commit to the others only).
    func setTimeline(_ timeline: PlaybackTimeline) {
        self.timeline = timeline
    }

    /// Reads one frame.
    func received(_ text: String) throws {
        let bytes = Data(text.utf8)
        let decoder = JSONDecoder()
        let name: String
        do {
            name = try decoder.decode(Header.self, from: bytes).type
        } catch {
            throw ScenarioFailure(description: "the DJ got a frame that is not an envelope: \(text.prefix(200))")
        }
        // A type PirateRadio's server does not send tells the DJ nothing.
        guard let type = PirateRadio.ServerType(rawValue: name) else { return }
        do {
            switch type {
            case .stateSync:
                let snapshot = try decoder.decode(Body<PirateRadio.Snapshot>.self, from: bytes).data
                queued = Set(snapshot.queue.map(\.id))
                if let track = snapshot.currentTrack, snapshot.isPlaying {
                    timeline = PlaybackTimeline(
                        epoch: snapshot.epoch, itemId: JamID("epoch-\(snapshot.epoch)"), track: track.openJam, state: .playing,
                        positionMs: Double(snapshot.positionMs), anchorMs: Double(snapshot.positionTimestamp))
                } else {
                    timeline = nil
                }
            case .queueUpdate:
                queued = Set(try decoder.decode(Body<PirateRadio.QueueUpdate>.self, from: bytes).data.queue.map(\.id))
            case .error:
                throw ScenarioFailure(description: "the server refused a DJ message: \(text.prefix(300))")
            case .playPrepare, .playCommit, .pause, .resume, .seek, .driftReport, .memberJoined, .memberLeft, .pong:
                // The DJ's timeline is its own commit or a stateSync; it does not ping.
                break
            }
        } catch let failure as ScenarioFailure {
            throw failure
        } catch {
            throw ScenarioFailure(description: "the DJ could not read \(name): \(error)")
        }
    }
}
