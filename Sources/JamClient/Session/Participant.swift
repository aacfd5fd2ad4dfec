import Foundation
import JamProtocol
import Logging

/// A member taking part: the session connection, its optimistic store, the clock sync
/// over the same socket and (for a device that plays) a `SyncEngine` driving its player,
/// run together. Pongs go to `ClockSync` with the instant they arrived, the clock
/// re-syncs after every reconnect, and every frame reaches the engine in order.
public struct Participant: Sendable {
    /// The connection.
    public let client: SessionClient
    /// What an app renders.
    public let store: SessionStore
    /// The estimate of server time.
    public let clockSync: ClockSync
    /// Plays along, when the member's device has a player.
    public let engine: SyncEngine?
    /// Gets tracks ready ahead of their start, when the device has a way to.
    public let preparer: QueuePreparer?
    private let clock: any MonotonicClock
    private let sleeper: any Sleeper

    /// Puts the pieces together for a member with a token in `api`; with a `player` the
    /// device plays in sync. `deviceId` names this device (stable across launches): its
    /// delay in the session is applied and its sync reports carry it.
    public init(
        api: JamAPI, sessionId: SessionID, me: UserID, transport: any RealtimeTransport, player: (any Player)? = nil,
        deviceId: String? = nil,
        trackPreparer: (any TrackPreparer)? = nil, clock: any MonotonicClock = SystemMonotonicClock(), sleeper: any Sleeper = TaskSleeper(),
        backoff: Backoff = Backoff(), clockConfiguration: ClockSync.Configuration = ClockSync.Configuration()
    ) {
        self.clock = clock
        self.sleeper = sleeper
        let client = SessionClient(api: api, sessionId: sessionId, me: me, transport: transport, backoff: backoff, clock: clock, sleeper: sleeper)
        let clockSync = ClockSync(clock: clock, configuration: clockConfiguration)
        self.client = client
        self.clockSync = clockSync
        store = SessionStore(client: client)
        preparer = trackPreparer.map { QueuePreparer(preparer: $0) }
        engine = player.map { player in
            SyncEngine(
                player: player, clockSync: clockSync, clock: clock, send: { command in await client.post(command) },
                device: deviceId.map { DeviceRef(userId: me, deviceId: $0) })
        }
    }

    /// Server time now, once the clock is in sync.
    public func serverNow() async -> Double? {
        await clockSync.serverTime(atLocal: clock.now())
    }

    /// Runs everything until cancelled; throws when the session is gone for this member.
    /// However it ends, the player is paused (a device out of the session falls silent); a
    /// later `run()` plays on where the session is.
    public func run() async throws {
        let run = await engine?.begin()
        do {
            try await runParts()
        } catch {
            await engine?.stop(run: run)
            throw error
        }
        await engine?.stop(run: run)
    }

    /// The client, the clock, the store, the preparer and the engine, side by side.
    private func runParts() async throws {
        let clockSync = self.clockSync
        let client = self.client
        let sleeper = self.sleeper
        await client.onPong { pong, receivedAt in await clockSync.record(pong, receivedAt: receivedAt) }
        // Subscribed before the connection starts: a subscription replays no envelopes, and the
        // engine follows only envelopes, so one made in its task could miss the first stateSync.
        let envelopes = engine == nil ? nil : await client.subscribe()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await store.run() }
            group.addTask {
                try await clockSync.run(send: { ping in await client.post(.ping(ping)) }, sleeper: sleeper)
            }
            if let preparer {
                // The current and next tracks first, the rest of the queue in the background.
                group.addTask { await preparer.run() }
                group.addTask {
                    // Each list is taken in order, and its head prepared beside: a song change
                    // must not wait for the download of one that no longer plays.
                    await withDiscardingTaskGroup { heads in
                        for await update in await client.subscribe() {
                            guard case .mirror(let mirror) = update, let view = mirror.view else { continue }
                            let upcoming = [view.upNext?.item.track].compactMap { $0 } + view.queue.map(\.track)
                            guard let plan = await preparer.accept(current: view.nowPlaying?.item.track, queue: upcoming) else { continue }
                            heads.addTask { await preparer.prepareHead(of: plan) }
                        }
                    }
                }
            }
            if let engine, let envelopes {
                group.addTask { try await engine.run(sleeper: sleeper) }
                // Events go to the engine as they come; bringing the player to them runs beside.
                // A load can take seconds: a resume that replays three songs must not load each
                // in turn while later events wait, only the one playing by the time a load ends.
                let (changes, changed) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
                group.addTask {
                    // A schedule kept from an earlier run plays again now: a resume with nothing
                    // missed brings no event to start it.
                    changed.yield()
                    // The engine holds a first start until the clock's first burst is in
                    // (`SyncEngine.clockSettled`); the events themselves go to it at once.
                    for await update in envelopes {
                        guard case .envelope(let envelope) = update else { continue }
                        // Pongs are recorded above with the instant they arrived; the engine
                        // would record each a second time, later (and first, when it wins). A
                        // pong may settle the clock a held first start waits for: catch up.
                        if case .pong = envelope.event {
                            changed.yield()
                            continue
                        }
                        await engine.take(envelope)
                        changed.yield()
                    }
                    changed.finish()
                }
                group.addTask {
                    for await _ in changes { await engine.catchUp() }
                }
            }
            group.addTask {
                // A reconnect may come through another route: measure the clock again. The
                // server forgot this device's ready with the old socket: say it again. The run's
                // first connection does both too (the web client only reconnects): a later run
                // of the same participant resumes a schedule kept from the one before.
                var wasConnected = false
                for await update in await client.subscribe() {
                    guard case .phase(let phase) = update else { continue }
                    if phase == .connected && !wasConnected {
                        await clockSync.reset()
                        await engine?.reconnected()
                    }
                    wasConnected = phase == .connected
                }
            }
            try await client.run()
            group.cancelAll()
        }
    }
}
