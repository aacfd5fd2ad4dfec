import Foundation
import JamProtocol
import NIOCore

/// S sessions × M members, each with an open load socket, ready to run load phases.
struct LoadRoom: Sendable {
    /// `sinks[session][member]`; member 0 is the host (the DJ in PirateRadio).
    let sinks: [[MemberSink]]
    let dialect: LoadDialect

    /// Every sink, flat.
    var all: [MemberSink] { sinks.flatMap { $0 } }

    /// Builds OpenJam sessions: people sign in and join over REST (from many loopback
    /// addresses), the host queues a one-hour track that plays throughout and `votable`
    /// items to vote on, then everybody opens a socket.
    static func openjam(
        server: ServerUnderTest, sessions: Int, members: Int, votable: Int, voteShare: Double, seed: UInt64, queue: Bool = true,
        beforeConnect: @Sendable () async -> Void = {}
    ) async throws -> LoadRoom {
        let http = LoopbackHTTP(group: BenchLoops.group, host: server.host, port: server.port)
        let rest = OpenJamREST(http: http)
        let made = try await rest.makeSessions(
            count: sessions, members: members, settings: SettingsPatch(maxMembers: members + 1, maxQueuedPerMember: SessionSettings.queueLimit),
            concurrency: 160, nodes: server.nodes.map { OpenJamREST(http: LoopbackHTTP(group: BenchLoops.group, host: $0.host, port: $0.port)) })
        var items: [[String]] = []
        for (index, session) in made.enumerated() {
            let host = session.people[0]
            var ids: [String] = []
            for n in 0...votable where queue {
                // The first add starts playing at once and lasts the whole run; the rest are votable.
                let track = Track(
                    id: "s\(index)-seed\(n)", name: "Seed \(n)", artist: "jam-bench", durationMs: n == 0 ? 3_600_000 : 180_000, source: .external)
                let item = try await http.json(
                    .POST, "/api/v1/sessions/\(session.id)/queue", token: host.token, body: AddToQueue(track: track, nonce: "seed-\(index)-\(n)"),
                    as: QueueItem.self)
                if n > 0 { ids.append(item.id.rawValue) }
            }
            items.append(ids)
        }
        await beforeConnect()
        var sinks: [[MemberSink]] = []
        for (s, session) in made.enumerated() {
            sinks.append(session.people.indices.map { m in
                MemberSink(session: s, member: m, dialect: .openjam(votable: items[s]), voteShare: voteShare, seed: seed &+ UInt64(s * 1000 + m))
            })
        }
        try await connect(sinks, server: server) { s, m in
            (path: "/api/v1/sessions/\(made[s].id)/realtime", token: made[s].people[m].token)
        }
        return LoadRoom(sinks: sinks, dialect: .openjam(votable: []))
    }

    /// Builds PirateRadio sessions: the DJ signs in and creates one, the members join by
    /// opening their sockets (`?token&sessionId`).
    static func pirateRadio(server: ServerUnderTest, sessions: Int, members: Int, seed: UInt64) async throws -> LoadRoom {
        let rest = PirateRadioREST(http: LoopbackHTTP(group: BenchLoops.group, host: server.host, port: server.port))
        var rows: [[String]] = []
        for s in 0..<sessions {
            let dj = try await rest.auth("dj-\(s)", name: "DJ \(s)")
            let created = try await rest.create(dj)
            var row = [PirateRadioREST.socketPath(token: dj, session: created.id)]
            for m in 1..<max(1, members) {
                row.append(PirateRadioREST.socketPath(token: try await rest.auth("m-\(s)-\(m)", name: "Member \(s).\(m)"), session: created.id))
            }
            rows.append(row)
        }
        let paths = rows
        let sinks = paths.indices.map { s in
            paths[s].indices.map { m in MemberSink(session: s, member: m, dialect: .pirateRadio, voteShare: 0, seed: seed &+ UInt64(s * 1000 + m)) }
        }
        try await connect(sinks, server: server) { s, m in (path: paths[s][m], token: nil) }
        return LoadRoom(sinks: sinks, dialect: .pirateRadio)
    }

    /// Connects to the echo server: no sign-in, one room per session path; `durable` rooms
    /// write and fsync each message before answering it.
    static func echo(host: String, port: Int, sessions: Int, members: Int, durable: Bool = false, seed: UInt64) async throws -> LoadRoom {
        let sinks = (0..<sessions).map { s in
            (0..<members).map { m in MemberSink(session: s, member: m, dialect: .echo, voteShare: 0, seed: seed &+ UInt64(s * 1000 + m)) }
        }
        let server = ServerUnderTest(host: host, port: port, pid: nil, child: nil, dataDirectory: nil, startupSeconds: nil)
        let tag = seed
        let prefix = durable ? EchoRooms.durablePrefix : "/echo/"
        try await connect(sinks, server: server) { s, _ in (path: "\(prefix)\(tag)-\(s)", token: nil) }
        return LoadRoom(sinks: sinks, dialect: .echo)
    }

    /// Opens every sink's socket, 64 at a time, and waits (bounded) for every snapshot.
    static func connect(
        _ sinks: [[MemberSink]], server: ServerUnderTest, _ address: @escaping @Sendable (Int, Int) -> (path: String, token: String?)
    ) async throws {
        let nodes = server.nodes
        let flat = sinks.flatMap { $0 }
        try await withThrowingTaskGroup(of: Void.self) { group in
            var next = 0
            /// Starts connecting the next sink.
            func launch() {
                let sink = flat[next]
                next += 1
                group.addTask {
                    let (path, token) = address(sink.session, sink.member)
                    // Sockets come from many loopback addresses too, as phones would.
                    // Several nodes: a session's members are spread over all of them, a host on the
                    // node that created it.
                    let node = nodes[(sink.session + sink.member) % nodes.count]
                    let socket = try await LoadSocket.connect(
                        group: BenchLoops.group, host: node.host, port: node.port, path: path, token: token,
                        source: SourceAddresses.shared.next(), sink: sink)
                    try await socket.eventLoop.submit { sink.attach(socket) }.get()
                }
            }
            while next < min(64, flat.count) { launch() }
            while try await group.next() != nil {
                if next < flat.count { launch() }
            }
        }
        try await waitFor("every socket's first snapshot", timeout: .seconds(60)) { () async throws -> Bool? in
            for sink in flat where !(try await sink.onLoop { $0.isSynced }) { return nil }
            return true
        }
        // Let the set-up's own events (members connecting, the first track's commit 350 ms
        // after it was queued) arrive before any phase counts events.
        try await Task.sleep(for: .milliseconds(700))
    }

    /// Closes every socket (bounded).
    func close() async {
        await withTaskGroup(of: Void.self) { group in
            for sink in all {
                group.addTask {
                    do {
                        await (try await sink.onLoop { $0.socket })?.close()
                    } catch {
                        // The loop is gone: so is the socket.
                    }
                }
            }
        }
    }
}

extension MemberSink {
    /// Runs `body` on this sink's socket loop (where all its state lives).
    func onLoop<T: Sendable>(_ body: @escaping @Sendable (MemberSink) -> T) async throws -> T {
        guard let loop = loopHint else { return body(self) }
        return try await loop.submit { body(self) }.get()
    }
}
