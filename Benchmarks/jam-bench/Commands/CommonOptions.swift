import ArgumentParser
import Foundation
import NIOCore
import NIOPosix

/// Options every benchmark takes.
struct CommonOptions: ParsableArguments {
    @Option(help: "The jam binary (default .build/release/jam, else .build/debug/jam with a note).")
    var jam: String?

    @Flag(help: "Seconds, tiny sizes: checks that the benchmark works (scripts/test.sh), not how fast.")
    var smoke = false

    @Option(name: .customLong("json-out"), help: "Also append the run's JSON line to this file.")
    var jsonOut: String?

    @Flag(name: .customLong("check-targets"), help: "Exit 2 when a figure misses its target.")
    var checkTargets = false

    @Flag(name: .customLong("keep-data"), help: "Keep the server's data folder and log.")
    var keepData = false

    @Option(name: .customLong("server-url"), help: "Measure a server that is already running on loopback instead of starting jam serve.")
    var serverURL: String?

    @Option(name: .customLong("server-pid"), help: "With --server-url: the process to sample for CPU and memory.")
    var serverPID: Int32?

    @Option(help: "Seed for the random choices (delays, clock offsets, load).")
    var seed: UInt64 = 42

    @Option(name: .customLong("wait-quiet"), help: "Wait up to this many seconds for the shared machine to be quiet (other processes under 25% of a core) before starting.")
    var waitQuiet: Double = 0

    /// Waits (at most `--wait-quiet` seconds) until other processes use under 25% of a core
    /// over 2 s; the figures of a run beside a build are not this server's.
    func awaitQuietMachine() async throws {
        guard waitQuiet > 0 else { return }
        let deadline = MonoTime.seconds() + min(waitQuiet, 3_600)
        while true {
            let before = try MachineCPU.sample()
            try await Task.sleep(for: .seconds(2))
            let busy = try MachineCPU.sample().percent(since: before)
            if busy < 25 { return }
            guard MonoTime.seconds() < deadline else {
                Console.line(String(format: "warning: the machine stayed busy (%.0f%% of a core in other processes); measuring anyway", busy))
                return
            }
            Console.line(String(format: "machine busy (%.0f%% of a core in other processes); waiting…", busy))
            try await Task.sleep(for: .seconds(8))
        }
    }

    /// The server under test: started here, or the one at `--server-url`.
    func startServer(_ wire: WireProtocol, music: URL? = nil) async throws -> (ServerUnderTest, JamExecutable?) {
        if let serverURL { return (try ServerUnderTest.external(url: serverURL, pid: serverPID), nil) }
        let jam = try JamExecutable.locate(jam)
        Console.line("starting \(jam.path) serve (\(wire.rawValue))…")
        return (try await ServerUnderTest.start(jam, protocol: wire, music: music), jam)
    }

    /// Prints the report, appends its JSON line, and exits non-zero on failures (or missed
    /// targets with `--check-targets`).
    func finish(_ report: Report, machine: MachineInfo = .current()) throws {
        var report = report
        if smoke {
            // Tiny sizes on any build: the figures prove the plumbing, not the speed.
            for index in report.figures.indices { report.figures[index].targets = [] }
            report.note("smoke run: tiny sizes, targets not evaluated")
        }
        report.print(machine: machine)
        if let jsonOut {
            let line = report.jsonLine(machine: machine) + "\n"
            if let handle = FileHandle(forWritingAtPath: jsonOut) {
                handle.seekToEndOfFile()
                handle.write(Data(line.utf8))
                handle.closeFile()
            } else {
                try line.write(toFile: jsonOut, atomically: true, encoding: .utf8)
            }
        }
        if !report.failures.isEmpty { throw ExitCode(1) }
        if checkTargets && !report.missedTargets.isEmpty { throw ExitCode(2) }
    }
}

extension Report {
    /// Notes the build and server that were measured.
    mutating func describe(server: ServerUnderTest, jam: JamExecutable?, wire: WireProtocol) {
        set("protocol", wire.rawValue)
        if let jam {
            set("build", jam.buildName)
            if !jam.isRelease { note("debug build: figures are not comparable with the targets") }
        } else {
            set("server", server.baseURL)
        }
    }
}

/// The event loops every client socket, proxy and HTTP request of the benchmark runs on.
enum BenchLoops {
    /// NIO's shared group (one thread per core), also used by JamClientNIO's transport.
    static var group: MultiThreadedEventLoopGroup { .singleton }
}
