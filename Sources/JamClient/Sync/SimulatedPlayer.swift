import JamProtocol

/// A `Player` with an exact virtual timeline, for tests and benchmarks.
///
/// Its position is a pure function of the injected clock: a list of segments, each
/// "from local instant `t` the position is `p`, advancing at speed `v`". Commands
/// add segments: `play(from:atLocal:)` replaces everything from its (possibly
/// future) start instant on, `seek` lands `seekLatencyMs` after the call, `setRate`
/// and `pause` act at once. The audio clock can run fast or slow
/// (`clockRateErrorPpm`), so a sync engine has real drift to correct. A `load` leaves what
/// plays audible until the new track's first start (`audible(atLocal:)`), as the `Player`
/// contract asks for a gapless hand-over.
public actor SimulatedPlayer: ProbePlayer {
    /// How the simulated device behaves.
    public struct Configuration: Sendable {
        /// How long `load` takes (slept on the injected sleeper), ms.
        public var loadDelayMs: Double = 0
        /// A seek lands this long after the call; until then the old course is reported, ms.
        public var seekLatencyMs: Double = 0
        /// The earliest a `play` can take effect after the call, ms. A start asked for
        /// earlier happens then, at the position its course has reached by then.
        public var startLatencyMs: Double = 0
        /// The audio clock's rate error: +200 means 200 ppm fast.
        public var clockRateErrorPpm: Double = 0
        /// Tracks whose load throws.
        public var failingTrackIds: Set<String> = []
        /// How long the output path (a Bluetooth speaker, say) takes to make a sample heard, ms.
        public var outputLatencyMs: Double = 0
        /// Whether the player reports `outputLatencyMs` (a Bluetooth route often reports
        /// less than it has: the difference is what a device delay corrects).
        public var reportedOutputLatencyMs: Double?

        /// Creates a configuration: an ideal player.
        public init(
            loadDelayMs: Double = 0, seekLatencyMs: Double = 0, startLatencyMs: Double = 0,
            clockRateErrorPpm: Double = 0, failingTrackIds: Set<String> = [], outputLatencyMs: Double = 0,
            reportedOutputLatencyMs: Double? = nil
        ) {
            self.outputLatencyMs = outputLatencyMs
            self.reportedOutputLatencyMs = reportedOutputLatencyMs
            self.loadDelayMs = loadDelayMs
            self.seekLatencyMs = seekLatencyMs
            self.startLatencyMs = startLatencyMs
            self.clockRateErrorPpm = clockRateErrorPpm
            self.failingTrackIds = failingTrackIds
        }
    }

    /// One call the player received, with the local instant of the call.
    public enum Call: Hashable, Sendable {
        case load(trackId: String, at: Double)
        case preload(trackId: String, at: Double)
        case loaded(trackId: String, at: Double)
        case play(fromMs: Double, atLocal: Double, at: Double)
        case pause(at: Double)
        case seek(toMs: Double, at: Double)
        case setRate(Double, at: Double)
        case probe(atLocal: Double, at: Double)
    }

    /// The failure of a load of a track listed in `failingTrackIds`.
    public struct LoadFailed: Error, Hashable {
        public var trackId: String
    }

    struct Segment: Sendable {
        var start: Double
        var position: Double
        var playing: Bool
        var rate: Double
    }

    private let clock: any MonotonicClock
    private let sleeper: any Sleeper
    /// The device's behaviour; may be changed between calls.
    public var configuration: Configuration

    private var track: Track?
    private var segments: [Segment] = []
    /// What played before the last load: heard until the loaded track first starts, or a pause.
    private var outgoing: (track: Track, segments: [Segment])?
    /// Tracks preloaded, with the local instant each is ready: loading one takes what is left.
    private var preloaded: [String: Double] = [:]
    private var rate: Double = 1
    private var startsToDrop = 0
    private var loadGeneration = 0

    /// Every call, in order.
    public private(set) var calls: [Call] = []
    /// The local instants the calibration probes left the player.
    private var probesSent: [Double] = []

    /// Creates a player reading time from `clock` and sleeping its load delay on `sleeper`.
    public init(clock: any MonotonicClock, sleeper: any Sleeper, configuration: Configuration = Configuration()) {
        self.clock = clock
        self.sleeper = sleeper
        self.configuration = configuration
    }

    /// Changes the device's behaviour.
    public func configure(_ change: @Sendable (inout Configuration) -> Void) {
        change(&configuration)
    }

    // MARK: - Player

    /// Loads `track` after the simulated load delay; what plays now plays on until the new
    /// track starts.
    public func load(_ track: Track) async throws {
        let now = clock.now()
        calls.append(.load(trackId: track.id, at: now))
        loadGeneration += 1
        let generation = loadGeneration
        if let current = self.track, segment(at: now)?.playing == true { outgoing = (current, segments) }
        self.track = nil
        segments = []
        let ready = preloaded.removeValue(forKey: track.id) ?? now + configuration.loadDelayMs
        try await sleeper.sleep(ms: max(0, ready - now))
        if configuration.failingTrackIds.contains(track.id) { throw LoadFailed(trackId: track.id) }
        guard generation == loadGeneration else { throw CancellationError() }
        self.track = track
        segments = [Segment(start: clock.now(), position: 0, playing: false, rate: rate)]
        calls.append(.loaded(trackId: track.id, at: clock.now()))
    }

    /// Starts loading `track` beside what plays: a `load` of it once the load delay has passed
    /// returns at once.
    public func preload(_ track: Track) async {
        let now = clock.now()
        calls.append(.preload(trackId: track.id, at: now))
        guard preloaded[track.id] == nil, self.track?.id != track.id else { return }
        preloaded[track.id] = now + configuration.loadDelayMs
    }

    /// Starts `positionMs` of the track at local time `atLocal`, as a real output would after its latency.
    public func play(from positionMs: Double, atLocal: Double) async {
        let now = clock.now()
        calls.append(.play(fromMs: positionMs, atLocal: atLocal, at: now))
        guard track != nil else { return }
        if startsToDrop > 0 {
            startsToDrop -= 1
            return
        }
        let start = max(atLocal, now + configuration.startLatencyMs)
        let position = positionMs + (start - atLocal)
        segments.removeAll { $0.start >= start }
        segments.append(Segment(start: start, position: position, playing: true, rate: rate))
    }

    /// Stops where the track is now (and whatever still played before it).
    public func pause() async {
        let now = clock.now()
        calls.append(.pause(at: now))
        outgoing = nil
        guard track != nil else { return }
        let position = truePosition(atLocal: now) ?? 0
        segments.removeAll { $0.start > now }
        segments.append(Segment(start: now, position: position, playing: false, rate: rate))
    }

    /// Moves to `positionMs`, playing on if it was playing.
    public func seek(to positionMs: Double) async {
        let now = clock.now()
        calls.append(.seek(toMs: positionMs, at: now))
        guard track != nil else { return }
        let lands = now + configuration.seekLatencyMs
        let before = segment(at: lands)
        let landing = Segment(start: lands, position: positionMs, playing: before?.playing ?? false, rate: rate)
        if let index = segments.firstIndex(where: { $0.start > lands }) {
            segments.insert(landing, at: index)
        } else {
            segments.append(landing)
        }
    }

    /// Plays at `rate` times normal speed from now (the sync engine nudges drift this way).
    public func setRate(_ rate: Double) async {
        let now = clock.now()
        calls.append(.setRate(rate, at: now))
        self.rate = rate
        guard track != nil, let current = segment(at: now) else { return }
        let position = truePosition(atLocal: now) ?? current.position
        segments.removeAll { $0.start == now }
        for index in segments.indices where segments[index].start > now { segments[index].rate = rate }
        let split = Segment(start: now, position: position, playing: current.playing, rate: rate)
        if let index = segments.firstIndex(where: { $0.start > now }) {
            segments.insert(split, at: index)
        } else {
            segments.append(split)
        }
    }

    /// Where the track is at local time `t`, or nil when nothing is loaded.
    public func position(atLocal t: Double) async -> Double? { truePosition(atLocal: t) }

    public var loadedTrackId: String? { track?.id }

    /// The reported output latency (the true one unless configured otherwise).
    public var outputLatencyMs: Double { configuration.reportedOutputLatencyMs ?? configuration.outputLatencyMs }

    /// Plays a click at each of `instants` (local time), for the calibration that measures output latency.
    public func playProbe(atLocal instants: [Double]) async {
        let now = clock.now()
        for instant in instants {
            calls.append(.probe(atLocal: instant, at: now))
            // Sent late, it sounds as soon as the player can.
            probesSent.append(max(instant, now + configuration.startLatencyMs))
        }
    }

    public var isPlaying: Bool {
        let now = clock.now()
        guard let current = segment(at: now), current.playing else { return false }
        if let duration = track?.durationMs, let position = truePosition(atLocal: now) {
            return position < Double(duration)
        }
        return true
    }

    // MARK: - Inspection and fault injection

    /// The exact position of the loaded track at local instant `t` given the commands so far;
    /// nil when nothing is loaded.
    public func truePosition(atLocal t: Double) -> Double? {
        guard let track else { return nil }
        return position(of: track, on: segments, at: t)
    }

    /// The track leaving the player at local instant `t`, and its position: the loaded one, or
    /// the one before it until the loaded one first starts (or a pause). Nil when neither is
    /// there; a track at its end reports its duration.
    public func audible(atLocal t: Double) -> (trackId: String, positionMs: Double)? {
        if let outgoing, segments.first(where: \.playing).map({ t < $0.start }) ?? true {
            return (outgoing.track.id, position(of: outgoing.track, on: outgoing.segments, at: t))
        }
        guard let track else { return nil }
        return (track.id, position(of: track, on: segments, at: t))
    }

    private func position(of track: Track, on segments: [Segment], at t: Double) -> Double {
        guard let s = segments.last(where: { $0.start <= t }) else { return segments.first?.position ?? 0 }
        var position = s.position
        if s.playing { position += (t - s.start) * s.rate * (1 + configuration.clockRateErrorPpm / 1_000_000) }
        if let duration = track.durationMs { position = min(position, Double(duration)) }
        return max(0, position)
    }

    /// The position people hear at local instant `t`: the output path delays it by the
    /// true `outputLatencyMs`.
    public func heardPosition(atLocal t: Double) -> Double? {
        truePosition(atLocal: t - configuration.outputLatencyMs)
    }

    /// The rate set last.
    public var currentRate: Double { rate }

    /// The local instants the calibration probes are heard: sent, plus the true output latency.
    public var probesHeard: [Double] { probesSent.map { $0 + configuration.outputLatencyMs } }

    /// Makes the next `count` starts never come (a seek that never landed, a start the
    /// output refused without a word): the player stays as it was.
    public func dropStarts(_ count: Int) {
        startsToDrop = count
    }

    /// Simulates an audio stall (a buffer underrun): from now on the audio is `ms` behind
    /// the course it was on.
    public func stall(ms: Double) {
        let now = clock.now()
        guard track != nil, let current = segment(at: now), let position = truePosition(atLocal: now) else { return }
        let split = Segment(start: now, position: position - ms, playing: current.playing, rate: current.rate)
        segments.removeAll { $0.start == now }
        if let index = segments.firstIndex(where: { $0.start > now }) {
            segments.insert(split, at: index)
        } else {
            segments.append(split)
        }
    }

    /// The segment in force at `t` (the last one starting at or before it).
    private func segment(at t: Double) -> Segment? {
        segments.last { $0.start <= t }
    }
}
