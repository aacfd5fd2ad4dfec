import ArgumentParser
import Dispatch
import Foundation
import Logging

/// `jam-bench`: OpenJam's benchmarks, as programs that print figures.
@main
struct JamBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jam-bench",
        abstract: "OpenJam benchmarks: run the release-built server on loopback and print figures.",
        discussion: """
            Every benchmark starts `jam serve` itself (a fresh data folder on disk), drives it from
            127.0.0.0/8 only, prints a table (median, p99, max from HDR histograms; throughput;
            server CPU and memory from /proc) with the targets beside the figures, and one JSON
            line for tracking. --smoke runs each in seconds with tiny sizes. See docs/PERFORMANCE.md.
            """,
        subcommands: [SyncCommand.self, FanoutCommand.self, DurableCommand.self, PrepareCommand.self, IdleCommand.self, RestartCommand.self, SoakCommand.self, EchoServerCommand.self]
    )

    /// Sets up logging and interruption before the chosen subcommand runs.
    static func main() async {
        // Library logs (reconnects, corrections) go to standard error, warnings and worse only,
        // so standard output holds the report alone.
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .warning
            return handler
        }
        Interruption.install()
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}

/// Ctrl-C or SIGTERM: kill the servers this run started, then exit, so no server outlives
/// an interrupted benchmark on the shared machine.
enum Interruption {
    nonisolated(unsafe) private static var sources: [any DispatchSourceSignal] = []

    /// Installs the handlers (once, before any child starts).
    static func install() {
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler {
                ChildRegistry.shared.killAll()
                exit(128 + signalNumber)
            }
            source.resume()
            sources.append(source)
        }
    }
}
