import Foundation
import JamProtocol
import Testing

@testable import JamClient

/// The shared fixtures in Tests/Fixtures/ClientParity, which the web client's modules
/// pass too (Tests/Browser/test_parity_fixtures.py): the browser client is a hand port
/// of this SDK, and these cases keep the two answering alike.
enum ParityFixtures {
    // #filePath, not bundle resources: the same files the browser test reads.
    static func data(_ name: String, filePath: String = #filePath) throws -> Data {
        let url = URL(fileURLWithPath: filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/ClientParity/\(name).json")
        return try Data(contentsOf: url)
    }

    static func load<T: Decodable>(_ type: T.Type, _ name: String) throws -> T {
        try JSONDecoder().decode(type, from: data(name))
    }
}

struct ClientParityFixtureTests {
    // MARK: Add cooldown

    struct CreditsFixture: Decodable {
        struct Case: Decodable {
            struct Who: Decodable { var role: Role, lastAddedAt: Millis? }
            var name: String, addCooldownSeconds: Int, member: Who, expected: Millis?
        }
        struct QueueRoom: Decodable { var name: String, maxQueuedPerMember: Int, waiting: Int, role: Role, may: Bool }
        var cases: [Case]
        var queueRoom: [QueueRoom]
    }

    @Test("the per-member queue limit matches the shared cases")
    func queueRoomMatchesTheSharedCases() throws {
        let fixture = try ParityFixtures.load(CreditsFixture.self, "credits")
        #expect(fixture.queueRoom.contains { $0.may } && fixture.queueRoom.contains { !$0.may })
        for c in fixture.queueRoom {
            let settings = SessionSettings(maxQueuedPerMember: c.maxQueuedPerMember)
            #expect(settings.mayQueueAnother(waiting: c.waiting, role: c.role) == c.may, "\(c.name)")
        }
    }

    @Test("add cooldowns match the shared cases")
    func addCooldownsMatchTheSharedCases() throws {
        let fixture = try ParityFixtures.load(CreditsFixture.self, "credits")
        #expect(!fixture.cases.isEmpty)
        for c in fixture.cases {
            let settings = SessionSettings(addCooldownSeconds: c.addCooldownSeconds)
            let member = Member(userId: "u", displayName: "U", role: c.member.role, connected: true, lastAddedAt: c.member.lastAddedAt)
            #expect(settings.nextAddAt(for: member) == c.expected, "\(c.name)")
        }
    }

    // MARK: Load retry

    struct LoadRetryFixture: Decodable {
        struct Retry: Decodable { var epoch: Int64, failures: Int, dueAt: Double }
        struct Case: Decodable { var name: String, previous: Retry?, epoch: Int64, now: Double, expected: Retry }
        var baseMs: Double, capMs: Double, delaysMs: [Double], cases: [Case]
    }

    @Test("a failed load's retries are timed as the shared cases say")
    func loadRetriesMatchTheSharedCases() throws {
        let fixture = try ParityFixtures.load(LoadRetryFixture.self, "load-retry")
        var configuration = SyncEngine.Configuration()
        configuration.loadRetryBaseMs = fixture.baseMs
        configuration.loadRetryCapMs = fixture.capMs
        #expect(fixture.delaysMs.count > 4 && !fixture.cases.isEmpty)
        for (index, expected) in fixture.delaysMs.enumerated() {
            #expect(LoadRetry.delayMs(afterFailures: index + 1, configuration: configuration) == expected, "after \(index + 1)")
        }
        for c in fixture.cases {
            let previous = c.previous.map { LoadRetry(epoch: $0.epoch, failures: $0.failures, dueAt: $0.dueAt) }
            let got = LoadRetry.after(previous, failedEpoch: c.epoch, now: c.now, configuration: configuration)
            #expect(got == LoadRetry(epoch: c.expected.epoch, failures: c.expected.failures, dueAt: c.expected.dueAt), "\(c.name)")
        }
    }

    // MARK: Settings

    struct SettingsFixture: Decodable {
        struct Limits: Decodable, Equatable { var memberLimit: Int, queueLimit: Int, cooldownLimit: Int }
        struct Step<Value: Decodable>: Decodable { var value: Value, words: String }
        struct Closest: Decodable { var name: String, choices: String, value: Double, index: Int }
        struct Count: Decodable { var name: String, text: String, limit: String, value: Int? }
        var limits: Limits
        var skipThresholds: [Step<Double>]
        var addCooldowns: [Step<Int>]
        var closest: [Closest]
        var counts: [Count]
    }

    @Test("the settings' limits, steps and the step a value shows as match the web client's")
    func settingsStepsMatchTheSharedCases() throws {
        let fixture = try ParityFixtures.load(SettingsFixture.self, "settings")
        let limits = SettingsFixture.Limits(
            memberLimit: SessionSettings.memberLimit, queueLimit: SessionSettings.queueLimit, cooldownLimit: SessionSettings.cooldownLimit)
        #expect(fixture.limits == limits)
        #expect(fixture.skipThresholds.map(\.value) == SettingsChoices.skipThresholds.map(\.value))
        #expect(fixture.skipThresholds.map(\.words) == SettingsChoices.skipThresholds.map(\.words))
        #expect(fixture.addCooldowns.map(\.value) == SettingsChoices.addCooldowns.map(\.value))
        #expect(fixture.addCooldowns.map(\.words) == SettingsChoices.addCooldowns.map(\.words))
        #expect(SettingsChoices.addCooldowns.last?.value == SessionSettings.cooldownLimit, "the longest step is the longest the server takes")
        // Every step is one the server takes.
        for step in SettingsChoices.skipThresholds { #expect(throws: Never.self) { try SettingsPatch(skipThreshold: step.value).validate() } }
        for step in SettingsChoices.addCooldowns { #expect(throws: Never.self) { try SettingsPatch(addCooldownSeconds: step.value).validate() } }
        #expect(fixture.closest.contains { $0.choices == "skipThresholds" } && fixture.closest.contains { $0.choices == "addCooldowns" })
        for c in fixture.closest {
            switch c.choices {
            case "skipThresholds": #expect(SettingsChoices.skipThresholdIndex(c.value) == c.index, "\(c.name)")
            case "addCooldowns": #expect(SettingsChoices.addCooldownIndex(Int(c.value)) == c.index, "\(c.name)")
            default: Issue.record("\(c.name): no choices named \(c.choices)")
            }
        }
    }

    @Test("a typed count the web client takes is one the server takes, and one it refuses the server refuses")
    func typedCountsAgreeWithTheServersRule() throws {
        let fixture = try ParityFixtures.load(SettingsFixture.self, "settings")
        #expect(fixture.counts.contains { $0.value == nil } && fixture.counts.contains { $0.value != nil })
        for c in fixture.counts {
            let patch: (Int) -> SettingsPatch
            switch c.limit {
            case "memberLimit": patch = { SettingsPatch(maxMembers: $0) }
            case "queueLimit": patch = { SettingsPatch(maxQueuedPerMember: $0) }
            default: Issue.record("\(c.name): no limit named \(c.limit)"); continue
            }
            if let value = c.value {
                #expect(throws: Never.self, "\(c.name)") { try patch(value).validate() }
            } else if let whole = Int(c.text.trimmingCharacters(in: .whitespaces)) {
                // Refused whole numbers are the server's refusals too; other text never reaches it.
                #expect(throws: JamError.self, "\(c.name)") { try patch(whole).validate() }
            }
        }
    }

    // MARK: Error statuses

    struct ErrorStatusFixture: Decodable {
        struct Case: Decodable { var status: Int, code: ErrorCode }
        var cases: [Case]
    }

    @Test("a status without an error body means the same code as in the web client")
    func aStatusWithoutAnErrorBodyMeansTheSameCode() throws {
        let fixture = try ParityFixtures.load(ErrorStatusFixture.self, "error-statuses")
        #expect(!fixture.cases.isEmpty)
        for c in fixture.cases { #expect(ErrorCode.forStatus(c.status) == c.code, "\(c.status)") }
        // Every status the server sends maps back to a code that is sent with it.
        for code in ErrorCode.allCases { #expect(ErrorCode.forStatus(code.httpStatus).httpStatus == code.httpStatus) }
    }

    // MARK: Close failures

    struct CloseFailureFixture: Decodable {
        struct Failure: Decodable, Equatable { var code: ErrorCode, message: String }
        struct Case: Decodable { var name: String, code: UInt16?, reason: String, refusal: Failure?, failure: Failure? }
        var cases: [Case]
    }

    @Test("a realtime close means the same failure as in the web client, named by its refusal frame")
    func aRealtimeCloseMeansTheSameFailure() throws {
        let fixture = try ParityFixtures.load(CloseFailureFixture.self, "close-failures")
        #expect(fixture.cases.count >= 10)
        for c in fixture.cases {
            let refusal = c.refusal.map { JamError($0.code, $0.message) }
            let failure = CloseCode.permanentFailure(c.code, reason: c.reason, refusal: refusal)
            #expect(failure.map { CloseFailureFixture.Failure(code: $0.code, message: $0.message) } == c.failure, "\(c.name)")
        }
    }

    // MARK: Connection watch

    struct ConnectionWatchFixture: Decodable {
        struct Case: Decodable {
            var name: String, answered: Bool, sinceOpenedMs: Double, oldestUnansweredPingMs: Double?, sinceHeardMs: Double, dead: Bool
        }
        struct ProbeCase: Decodable {
            var name: String, answered: Bool, oldestUnansweredPingMs: Double?, oldestWaitingCommandMs: Double?, sinceHeardMs: Double, probe: Bool
        }
        var watch: ConnectionWatchLimits
        var cases: [Case]
        var probeCases: [ProbeCase]
    }

    struct ConnectionWatchLimits: Decodable {
        var openLimitMs: Double, silenceLimitMs: Double, checkEveryMs: Double, quietProbeMs: Double, commandProbeMs: Double
    }

    @Test("a socket counts as dead at the same instants as in the web client, with the same default limits")
    func aSocketCountsAsDeadAtTheSameInstants() throws {
        let fixture = try ParityFixtures.load(ConnectionWatchFixture.self, "connection-watch")
        let watch = ConnectionWatch()
        let limits = fixture.watch
        #expect(
            watch
                == ConnectionWatch(
                    openLimitMs: limits.openLimitMs, silenceLimitMs: limits.silenceLimitMs, checkEveryMs: limits.checkEveryMs,
                    quietProbeMs: limits.quietProbeMs, commandProbeMs: limits.commandProbeMs))
        #expect(!fixture.cases.isEmpty)
        for c in fixture.cases {
            let dead = watch.isDead(answered: c.answered, sinceOpenedMs: c.sinceOpenedMs, oldestUnansweredPingMs: c.oldestUnansweredPingMs, sinceHeardMs: c.sinceHeardMs)
            #expect(dead == c.dead, "\(c.name)")
        }
    }

    @Test("a quiet socket or a waiting command is probed at the same instants as in the web client")
    func aQuietSocketIsProbedAtTheSameInstants() throws {
        let fixture = try ParityFixtures.load(ConnectionWatchFixture.self, "connection-watch")
        let watch = ConnectionWatch()
        #expect(!fixture.probeCases.isEmpty)
        for c in fixture.probeCases {
            let probe = watch.shouldProbe(
                answered: c.answered, oldestUnansweredPingMs: c.oldestUnansweredPingMs, oldestWaitingCommandMs: c.oldestWaitingCommandMs,
                sinceHeardMs: c.sinceHeardMs)
            #expect(probe == c.probe, "\(c.name)")
        }
    }

    // MARK: Calibration probe

    struct ProbeFixture: Decodable {
        struct Case: Decodable {
            var name: String, sampleRate: Double, length: Int, samples: [[Double]], energy: Double
        }
        var cases: [Case]
    }

    @Test("the probe matches the web client's, sample for sample")
    func theProbeMatchesTheWebClientsSampleForSample() throws {
        let fixture = try ParityFixtures.load(ProbeFixture.self, "probe")
        #expect(!fixture.cases.isEmpty)
        for c in fixture.cases {
            let probe = ProbeSignal.samples(sampleRate: c.sampleRate)
            #expect(probe.count == c.length, "\(c.name)")
            for pair in c.samples {
                let index = Int(pair[0])
                guard probe.indices.contains(index) else {
                    Issue.record("\(c.name): no sample \(index)")
                    continue
                }
                #expect(abs(Double(probe[index]) - pair[1]) <= 1e-6, "\(c.name): sample \(index) \(probe[index]) != \(pair[1])")
            }
            let energy = probe.reduce(0.0) { $0 + Double($1) * Double($1) }
            #expect(abs(energy - c.energy) <= 1e-3, "\(c.name): energy \(energy) != \(c.energy)")
        }
    }

    // MARK: Timeline

    struct TimelineFixture: Decodable {
        struct Case: Decodable {
            struct Timeline: Decodable {
                var state: PlaybackState, positionMs: Double, anchorMs: Double, durationMs: Double?
            }
            var name: String, timeline: Timeline, atMs: Double, expectedMs: Double
        }
        var cases: [Case]
    }

    @Test("positions match the shared timeline cases")
    func positionsMatchTheSharedTimelineCases() throws {
        let fixture = try ParityFixtures.load(TimelineFixture.self, "timeline")
        #expect(!fixture.cases.isEmpty)
        for c in fixture.cases {
            let track = Track(id: "t", name: "n", artist: "a", durationMs: c.timeline.durationMs.map { Int64($0) }, source: .library)
            if c.timeline.durationMs.map({ $0 == $0.rounded() }) ?? true {
                let timeline = PlaybackTimeline(
                    epoch: 1, itemId: ItemID("item"), track: track, state: c.timeline.state, positionMs: c.timeline.positionMs,
                    anchorMs: c.timeline.anchorMs)
                #expect(abs(timeline.position(atServer: c.atMs) - c.expectedMs) <= 1e-9, "\(c.name)")
            }
            // The rule itself, in fractional ms (a fractional duration cannot be a Track's).
            let position = PlaybackPosition.at(
                c.atMs, state: c.timeline.state, positionMs: c.timeline.positionMs, anchorMs: c.timeline.anchorMs,
                durationMs: c.timeline.durationMs)
            #expect(abs(position - c.expectedMs) <= 1e-9, "\(c.name)")
            // The session view's whole milliseconds, when the case has only whole ones.
            let whole = [c.timeline.positionMs, c.timeline.anchorMs, c.atMs, c.expectedMs] + [c.timeline.durationMs].compactMap { $0 }
            if whole.allSatisfy({ $0 == $0.rounded() }) {
                let item = QueueItem(
                    id: ItemID("item"), track: track, addedBy: Member(userId: UserID("u"), displayName: "U", role: .host, connected: true),
                    addedAt: 0, score: 0, reason: "now playing")
                let now = NowPlaying(item: item, epoch: 1, state: c.timeline.state, positionMs: Int64(c.timeline.positionMs), anchorMs: Int64(c.timeline.anchorMs))
                #expect(now.position(at: Int64(c.atMs)) == Int64(c.expectedMs), "\(c.name)")
            }
        }
    }

    // MARK: Correction

    struct CorrectionFixture: Decodable {
        struct Configuration: Decodable {
            var seekThresholdMs, deadBandMs, targetBandMs, correctionHorizonMs, correctionIntervalMs, maxRateDeviation, minRateStep: Double
        }
        struct Expected: Decodable {
            var kind: String, deadline: Double?, rate: Double?
        }
        struct Case: Decodable {
            var name: String, error: Double, rate: Double, deadline: Double?, now: Double, expected: Expected
        }
        var configuration: Configuration
        var cases: [Case]
    }

    @Test("correction steps match the shared cases")
    func correctionStepsMatchTheSharedCases() throws {
        let fixture = try ParityFixtures.load(CorrectionFixture.self, "correction")
        var configuration = SyncEngine.Configuration()
        let given = fixture.configuration
        configuration.seekThresholdMs = given.seekThresholdMs
        configuration.deadBandMs = given.deadBandMs
        configuration.targetBandMs = given.targetBandMs
        configuration.correctionHorizonMs = given.correctionHorizonMs
        configuration.correctionIntervalMs = given.correctionIntervalMs
        configuration.maxRateDeviation = given.maxRateDeviation
        configuration.minRateStep = given.minRateStep
        #expect(!fixture.cases.isEmpty)
        for c in fixture.cases {
            let step = CorrectionStep.decide(error: c.error, rate: c.rate, deadline: c.deadline, now: c.now, configuration: configuration)
            switch step {
            case .jump:
                #expect(c.expected.kind == "jump", "\(c.name)")
            case .inBand:
                #expect(c.expected.kind == "inBand", "\(c.name)")
            case .steer(let deadline, let rate):
                #expect(c.expected.kind == "steer", "\(c.name)")
                #expect(c.expected.deadline.map { abs($0 - deadline) <= 1e-9 } == true, "\(c.name)")
                switch (rate, c.expected.rate) {
                case (nil, nil): break
                case (let rate?, let expected?): #expect(abs(rate - expected) <= 1e-9, "\(c.name)")
                case (nil, _?), (_?, nil): Issue.record("\(c.name): rate \(String(describing: rate)), expected \(String(describing: c.expected.rate))")
                }
            }
        }
    }

    // MARK: Mirror

    /// What a mirror case's member does between envelopes.
    enum LocalStep: String {
        /// The server answered the member's skip request for an item.
        case requestSkipAnswered
        /// The server answered the member's withdrawal of their skip request for an item.
        case withdrawSkipAnswered
    }

    @Test("the mirror matches the shared event sequences")
    func theMirrorMatchesTheSharedEventSequences() throws {
        let root = try #require(try JSONSerialization.jsonObject(with: ParityFixtures.data("mirror")) as? [String: Any])
        let cases = try #require(root["cases"] as? [[String: Any]])
        #expect(!cases.isEmpty)
        for c in cases {
            let name = try #require(c["name"] as? String)
            let me = try #require(c["me"] as? String)
            let envelopes = try #require(c["envelopes"] as? [Any])
            let results = try #require(c["results"] as? [String])
            let expected = try #require(c["expected"] as? [String: Any])
            var mirror = SessionMirror(me: UserID(me))
            var applied: [String] = []
            for envelope in envelopes {
                // A step is a server envelope, or what the member's own client does ("local").
                if let step = envelope as? [String: Any], let local = step["local"] as? String {
                    switch LocalStep(rawValue: local) {
                    case .requestSkipAnswered:
                        mirror.requestSkipAnswered(for: ItemID(try #require(step["itemId"] as? String)))
                    case .withdrawSkipAnswered:
                        mirror.withdrawSkipAnswered(for: ItemID(try #require(step["itemId"] as? String)))
                    case nil:
                        Issue.record("\(name): unknown local step \(local)")
                    }
                    applied.append("local")
                    continue
                }
                // A frame that does not decode never reaches the mirror (SessionClient asks for the
                // whole state instead); the web client's mirror refuses it itself.
                let frame: ServerEnvelope
                do {
                    frame = try ServerEnvelope.decode(JSONSerialization.data(withJSONObject: envelope as Any))
                } catch {
                    applied.append("unreadable")
                    continue
                }
                switch mirror.apply(frame) {
                case .applied: applied.append("applied")
                case .duplicate: applied.append("duplicate")
                case .stale: applied.append("stale")
                case .gap: applied.append("gap")
                case .direct: applied.append("direct")
                case .mine: applied.append("mine")
                }
            }
            #expect(applied == results, "\(name)")
            #expect(mirror.seq == (expected["seq"] as? NSNumber)?.int64Value, "\(name)")
            #expect(mirror.epoch == (expected["epoch"] as? NSNumber)?.int64Value, "\(name)")
            let view = try WireCoding.decode(SessionView.self, from: JSONSerialization.data(withJSONObject: try #require(expected["view"])))
            #expect(mirror.view == view, "\(name)")
        }
    }

    // MARK: Clock

    struct ClockFixture: Decodable {
        struct Reading: Decodable {
            var offsetMs, errorBoundMs, halfRoundTripMs, resyncIntervalMs: Double
        }
        struct Expected: Decodable {
            var acceptedSamples, rejectedSamples, ignoredPongs: Int
            var driftMsPerSecond: Double
            var at: [Reading]
        }
        struct Case: Decodable {
            var name: String, exchanges: [[Double]], at: [Double], expected: Expected
        }
        var cases: [Case]
    }

    @Test("clock estimates match the shared ping samples")
    func clockEstimatesMatchTheSharedPingSamples() async throws {
        let fixture = try ParityFixtures.load(ClockFixture.self, "clock")
        #expect(!fixture.cases.isEmpty)
        for c in fixture.cases {
            // Pings and answers in time order (a ping first when both fall on one instant), as the JS runner does.
            var events: [(at: Double, isAnswer: Bool, exchange: [Double])] = []
            for exchange in c.exchanges {
                try #require(exchange.count == 4, "\(c.name)")
                events.append((exchange[0], false, exchange))
                events.append((exchange[3], true, exchange))
            }
            events.sort { a, b in a.at != b.at ? a.at < b.at : (!a.isAnswer && b.isAnswer) }
            let clock = ManualClock(0)
            let sync = ClockSync(clock: clock)
            for event in events {
                clock.set(event.at)
                let e = event.exchange
                if event.isAnswer {
                    await sync.record(Pong(clientSendTime: e[0], serverReceiveTime: e[1], serverSendTime: e[2]), receivedAt: e[3])
                } else {
                    let ping = await sync.makePing()
                    #expect(ping.clientSendTime == e[0], "\(c.name)")
                }
            }
            #expect(await sync.acceptedSamples == c.expected.acceptedSamples, "\(c.name)")
            #expect(await sync.rejectedSamples == c.expected.rejectedSamples, "\(c.name)")
            #expect(await sync.ignoredPongs == c.expected.ignoredPongs, "\(c.name)")
            #expect(abs(await sync.driftMsPerSecond - c.expected.driftMsPerSecond) <= 1e-6, "\(c.name)")
            let estimate = try #require(await sync.estimate, "\(c.name)")
            for (t, want) in zip(c.at, c.expected.at) {
                #expect(abs(estimate.offset(atLocal: t) - want.offsetMs) <= 1e-6, "\(c.name) offset at \(t)")
                #expect(abs(estimate.errorBound(atLocal: t) - want.errorBoundMs) <= 1e-6, "\(c.name) bound at \(t)")
                #expect(abs(estimate.halfRoundTripBound(atLocal: t) - want.halfRoundTripMs) <= 1e-6, "\(c.name) half round trip at \(t)")
                #expect(await sync.resyncInterval(now: t) == want.resyncIntervalMs, "\(c.name) resync interval at \(t)")
            }
        }
    }

    // MARK: Defaults

    struct DefaultsFixture: Decodable {
        struct Listed: Decodable { var value: Double, reason: String }
        struct Different: Decodable { var swift: Double, js: Double, reason: String }
        struct Module: Decodable {
            var shared: [String: Double]
            var swiftOnly: [String: Listed]
            var jsOnly: [String: Listed]
            var different: [String: Different]
        }
        var clock: Module
        var sync: Module
    }

    /// Every stored property of `configuration` with its value as a number (a flag as 0 or 1).
    private func fields(_ configuration: Any) throws -> [String: Double] {
        var result: [String: Double] = [:]
        for child in Mirror(reflecting: configuration).children {
            let label = try #require(child.label)
            switch child.value {
            case let value as Double: result[label] = value
            case let value as Int: result[label] = Double(value)
            case let value as Bool: result[label] = value ? 1 : 0
            default: Issue.record("\(label) is neither Double nor Int: extend the defaults test")
            }
        }
        return result
    }

    private func check(_ module: DefaultsFixture.Module, against actual: [String: Double], _ name: String) {
        var expected = module.shared
        for (key, listed) in module.swiftOnly { expected[key] = listed.value }
        for (key, different) in module.different { expected[key] = different.swift }
        #expect(Set(actual.keys) == Set(expected.keys), "\(name): fields not listed in defaults.json, or listed but gone")
        for (key, value) in actual { #expect(expected[key] == value, "\(name).\(key) = \(value), defaults.json says \(String(describing: expected[key]))") }
        for (key, listed) in module.jsOnly {
            #expect(actual[key] == nil, "\(name).\(key) is listed as web-only but JamClient has it")
            #expect(!listed.reason.isEmpty)
        }
        for listed in module.swiftOnly.values { #expect(!listed.reason.isEmpty) }
        for different in module.different.values { #expect(!different.reason.isEmpty && different.swift != different.js) }
    }

    @Test("configuration defaults match the web client's apart from the listed differences")
    func configurationDefaultsMatchTheWebClientsApartFromTheListedDifferences() throws {
        let fixture = try ParityFixtures.load(DefaultsFixture.self, "defaults")
        check(fixture.clock, against: try fields(ClockSync.Configuration()), "clock")
        check(fixture.sync, against: try fields(SyncEngine.Configuration()), "sync")
    }
}
