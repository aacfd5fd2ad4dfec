import Foundation
import NIOCore

/// What one load phase measured.
struct PhaseResult: Sendable {
    let name: String
    /// Commands per second offered (open loop) or achieved (closed loop).
    var offeredRate: Double
    let seconds: Double
    /// From a command's intended send instant to each member's receipt of each event it caused.
    var delivery = Distribution()
    /// From a command's intended send instant to the first member's receipt of each event.
    var firstDelivery = Distribution()
    /// From the first to the last member's receipt of each event: the cost of fanning out.
    var spread = Distribution()
    /// From a command's intended send instant to its ack.
    var ack = Distribution()
    /// How far behind its open-loop schedule the load client sent.
    var sendLag = Distribution()
    var commands = 0
    var answered = 0
    var unanswered = 0
    var deliveries = 0
    var bytes = 0
    var lost = 0
    var duplicated = 0
    /// Events no command of the phase explains (a tick, or a command of an earlier phase).
    var unattributed = 0
    var errors: [String] = []
    var closed: [String] = []
    var server: (before: ProcessSample, after: ProcessSample)?
    var client: (before: ProcessSample, after: ProcessSample)?
    var machine: (before: MachineCPU, after: MachineCPU)?
    /// PostgreSQL's processes, when a database serves the nodes (backends that came or went
    /// during the phase are left out).
    var database: (before: ProcessSample, after: ProcessSample)?
    /// The store's group commits and the session rows they wrote (from `/metrics`).
    var commits: Double?
    var rows: Double?
    /// How long those commits took, handed to the store until stored (the server's histogram).
    var commitTimes: HistogramCounts?

    /// Group commits per second.
    var commitRate: Double? { commits.map { $0 / seconds } }
    /// Session rows written per commit.
    var rowsPerCommit: Double? {
        guard let commits, let rows, commits > 0 else { return nil }
        return rows / commits
    }

    /// Deliveries per second.
    var deliveryRate: Double { Double(deliveries) / seconds }
    /// Acknowledged commands per second.
    var answeredRate: Double { Double(answered) / seconds }
    /// Server CPU, % of one core.
    var serverCPU: Double? { server.map { $0.after.cpuPercent(since: $0.before) } }
    /// Pages the server had to read back from disk during the phase (stalls of a millisecond or more each).
    var serverMajorFaults: Double? { server.map { $0.after.majorFaults - $0.before.majorFaults } }
    /// Load client CPU, % of one core.
    var clientCPU: Double? { client.map { $0.after.cpuPercent(since: $0.before) } }
    /// PostgreSQL's CPU, % of one core.
    var databaseCPU: Double? { database.map { $0.after.cpuPercent(since: $0.before) } }
    /// CPU taken by other processes on the machine meanwhile, % of one core (noise, if not ~0).
    var othersCPU: Double? {
        guard let machine, let server = serverCPU, let client = clientCPU else { return nil }
        return max(0, machine.after.percent(since: machine.before) - server - client - (databaseCPU ?? 0))
    }

    /// CPU time the host took from this virtual machine during the phase, ms: a phase with
    /// some has tails that are not the server's.
    var hostStealMs: Double? { machine.map { $0.after.stealMs(since: $0.before) } }

    /// Store commits over 2.5 ms (`slowCommitSeconds`): each leaves a command that waits on it
    /// less than 0.5 ms of the 3 ms idle p99 target for the rest of its way.
    var slowCommits: Double? { commitTimes.map { $0.count(above: PhaseResult.slowCommitSeconds) } }
    /// The store's mean commit time, ms: the part of a command's latency the disk sets.
    var meanCommitMs: Double? { commitTimes?.mean.map { $0 * 1_000 } }
    /// The bound of the server's histogram the slowest commit stayed within, ms.
    var slowestCommitWithinMs: Double? { commitTimes?.slowestWithin.map { $0 * 1_000 } }
    /// A bucket bound of `openjam_store_commit_seconds`.
    static let slowCommitSeconds = 0.0025

    /// True when every command was answered and every event delivered once.
    var isClean: Bool { lost == 0 && duplicated == 0 && unanswered == 0 && errors.isEmpty && closed.isEmpty }

    /// One line for progress output.
    var summary: String {
        var text = String(
            format: "%@: %.0f cmd/s offered → %.0f deliveries/s, p50 %@ p99 %@ max %@", name, offeredRate, deliveryRate, Report.ms(delivery.median),
            Report.ms(delivery.p99), Report.ms(delivery.max))
        if firstDelivery.count > 0 { text += " (first member p50 \(Report.ms(firstDelivery.median)), spread p50 \(Report.ms(spread.median)))" }
        if lost + duplicated + unanswered > 0 { text += " · lost \(lost) duplicated \(duplicated) unanswered \(unanswered)" }
        if let cpu = serverCPU { text += String(format: " · server CPU %.0f%%", cpu) }
        if let cpu = databaseCPU { text += String(format: " · database CPU %.0f%%", cpu) }
        if let cpu = clientCPU { text += String(format: " · client CPU %.0f%%", cpu) }
        if let cpu = othersCPU { text += String(format: " · others %.0f%%", cpu) }
        if let rate = commitRate, let rows = rowsPerCommit { text += String(format: " · %.0f commits/s × %.1f sessions", rate, rows) }
        if let faults = serverMajorFaults, faults > 0 { text += String(format: " · server major page faults %.0f", faults) }
        if let steal = hostStealMs, steal > 0 { text += String(format: " · host steal %.0f ms", steal) }
        if let slow = slowCommits, slow > 0, let within = slowestCommitWithinMs {
            text += String(format: " · commits over %.1f ms %.0f, slowest ≤ %@", Self.slowCommitSeconds * 1_000, slow, within.isFinite ? Report.ms(within) : "∞")
        }
        return text
    }
}

extension LoadRoom {
    /// Runs `seconds` of load at `rate` commands a second in all (open loop: every member
    /// sends on its own Poisson schedule; PirateRadio: each DJ), or closed loop (each member
    /// keeps one command in flight), then drains and attributes every delivery to its command.
    func runPhase(
        _ name: String, rate: Double, seconds: Double, closedLoop: Bool = false, server: ServerUnderTest?
    ) async throws -> PhaseResult {
        let sinks = all
        for sink in sinks { try await sink.onLoop { $0.beginPhase() } }
        let serverBefore = server?.sample()
        let storeBefore = try await Self.storeCounters(server)
        let clientBefore = Self.selfSample()
        let machineBefore = Self.machineSample()
        let databaseBefore = ProcessSample.database()
        let until = NIODeadline.now() + .nanoseconds(Int64(seconds * 1_000_000_000))
        let senders: [MemberSink] = switch dialect {
        case .pirateRadio: sinks.filter { $0.member == 0 }
        case .openjam, .echo: sinks
        }
        let perSender = rate / Double(max(1, senders.count))
        for sink in senders {
            _ = try await sink.onLoop { closedLoop ? $0.startClosedLoop(until: until) : $0.startSending(rate: perSender, until: until) }
        }
        try await Task.sleep(for: .nanoseconds(Int64(seconds * 1_000_000_000)))
        try await drain(sinks)
        var result = PhaseResult(name: name, offeredRate: rate, seconds: seconds)
        if let serverBefore, let after = server?.sample() { result.server = (serverBefore, after) }
        if let clientBefore, let after = Self.selfSample() { result.client = (clientBefore, after) }
        if let machineBefore, let after = Self.machineSample() { result.machine = (machineBefore, after) }
        if let databaseBefore, let after = ProcessSample.database() { result.database = (databaseBefore, after) }
        if let before = storeBefore, let after = try await Self.storeCounters(server) {
            result.commits = after.commits - before.commits
            result.rows = after.rows - before.rows
            result.commitTimes = after.commitTimes.since(before.commitTimes)
        }
        var data: [MemberPhaseData] = []
        for sink in sinks { data.append(try await sink.onLoop { $0.endPhase() }) }
        analyse(data, into: &result)
        if closedLoop { result.offeredRate = result.answeredRate }
        return result
    }

    /// Waits (at most 10 s) until every command is answered and every member has every
    /// event of its session, so a slow tail is measured as late rather than counted as lost.
    private func drain(_ sinks: [MemberSink]) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            var progress: [MemberSink.Progress] = []
            for sink in sinks { progress.append(try await sink.onLoop { $0.progress }) }
            let bySession = Dictionary(grouping: progress, by: \.session)
            let settled = bySession.values.allSatisfy { members in
                let target = members.map(\.target).max() ?? -1
                return members.allSatisfy { $0.unanswered == 0 && $0.last >= target }
            }
            if settled { return }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// The store's commit and row counters and commit times from `/metrics`, for a server
    /// this benchmark started (jam serve, which exports them all); nil for any other server.
    private static func storeCounters(_ server: ServerUnderTest?) async throws -> (commits: Double, rows: Double, commitTimes: HistogramCounts)? {
        guard let server, server.dataDirectory != nil else { return nil }
        let rest = OpenJamREST(http: LoopbackHTTP(group: BenchLoops.group, host: server.host, port: server.port))
        guard let metrics = try await rest.metrics() else { throw LoopbackHTTP.Failure(description: "the server does not serve /metrics") }
        guard let commits = metrics.value("openjam_store_batches_total"), let rows = metrics.value("openjam_store_rows_total") else {
            throw LoopbackHTTP.Failure(description: "the server's /metrics has no openjam_store_batches_total or openjam_store_rows_total")
        }
        guard let times = metrics.histogram("openjam_store_commit_seconds") else {
            throw LoopbackHTTP.Failure(description: "the server's /metrics has no openjam_store_commit_seconds histogram")
        }
        return (commits, rows, times)
    }

    /// The whole machine's CPU time (to show what other processes took).
    private static func machineSample() -> MachineCPU? {
        do {
            return try MachineCPU.sample()
        } catch {
            return nil
        }
    }

    /// The benchmark's own CPU and memory (the load client's cost).
    private static func selfSample() -> ProcessSample? {
        do {
            return try ProcFile.sample(pid: getpid())
        } catch {
            return nil
        }
    }

    /// Matches receipts to commands: OpenJam by the acks' seqs (a command's events are the
    /// seqs after the previous ack's, up to its own), PirateRadio by order (the n-th queue
    /// update answers the DJ's n-th command).
    private func analyse(_ data: [MemberPhaseData], into result: inout PhaseResult) {
        for member in data {
            result.commands += member.commands
            result.answered += member.acks.count
            result.unanswered += member.unanswered
            result.ack.merge(member.ackLatency)
            result.sendLag.merge(member.sendLag)
            result.bytes += member.bytes
            result.lost += member.gaps
            result.duplicated += member.duplicates
            result.errors += member.errors
            if let closed = member.closed { result.closed.append("session \(member.session): \(closed)") }
        }
        let bySession = Dictionary(grouping: data, by: \.session)
        for (_, members) in bySession {
            // First and last receipt of every event, for the fan-out cost.
            var span: [Int64: (first: UInt64, last: UInt64)] = [:]
            for member in members {
                for receipt in member.receipts {
                    let known = span[receipt.key] ?? (receipt.at, receipt.at)
                    span[receipt.key] = (min(known.first, receipt.at), max(known.last, receipt.at))
                }
            }
            if members.count > 1 {
                for entry in span.values { result.spread.record(Double(entry.last - entry.first) / 1_000_000) }
            }
            switch dialect {
            case .openjam, .echo:
                let acks = members.flatMap(\.acks).sorted { $0.seq < $1.seq }
                let start = members.map(\.startLast).max() ?? -1
                let lastSeq = acks.last?.seq ?? start
                for (seq, entry) in span where seq > start {
                    if let command = Self.firstAck(atOrAfter: seq, in: acks), entry.first >= command.sent {
                        result.firstDelivery.record(Double(entry.first - command.sent) / 1_000_000)
                    }
                }
                for member in members {
                    for receipt in member.receipts where receipt.key > start {
                        guard let command = Self.firstAck(atOrAfter: receipt.key, in: acks), receipt.at >= command.sent else {
                            result.unattributed += 1
                            continue
                        }
                        result.deliveries += 1
                        result.delivery.record(Double(receipt.at &- command.sent) / 1_000_000)
                    }
                    // A member that stopped short of the session's last event lost the rest.
                    if member.last < lastSeq { result.lost += Int(lastSeq - member.last) }
                }
            case .pirateRadio:
                guard let dj = members.first(where: { $0.sends.count > 0 || $0.sendsTotal > 0 }) else { continue }
                result.answered += dj.sends.count
                for (key, entry) in span {
                    let index = Int(key) - dj.sendsBefore
                    if index >= 0, index < dj.sends.count, entry.first >= dj.sends[index] {
                        result.firstDelivery.record(Double(entry.first - dj.sends[index]) / 1_000_000)
                    }
                }
                for member in members {
                    for receipt in member.receipts {
                        let index = Int(receipt.key) - dj.sendsBefore
                        guard index >= 0 else { continue }
                        guard index < dj.sends.count, receipt.at >= dj.sends[index] else {
                            result.unattributed += 1
                            continue
                        }
                        result.deliveries += 1
                        result.delivery.record(Double(receipt.at &- dj.sends[index]) / 1_000_000)
                    }
                    if member.last < Int64(dj.sendsTotal) { result.lost += dj.sendsTotal - Int(member.last) }
                }
            }
        }
    }

    /// The first ack whose seq is at least `seq` (binary search in acks sorted by seq).
    private static func firstAck(atOrAfter seq: Int64, in acks: [(seq: Int64, sent: UInt64)]) -> (seq: Int64, sent: UInt64)? {
        var low = 0, high = acks.count
        while low < high {
            let mid = (low + high) / 2
            if acks[mid].seq < seq { low = mid + 1 } else { high = mid }
        }
        return low < acks.count ? acks[low] : nil
    }
}
