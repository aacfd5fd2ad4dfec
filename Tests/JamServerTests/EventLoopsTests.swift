import Foundation
import JamTestSupport
import NIOCore
import Testing

@testable import JamServer

/// `jam serve` leaves the store's commit thread a core: one event loop fewer than cores.
@Suite(.serialized) struct EventLoopsTests {
    /// How many of `pid`'s threads are loops of NIO's shared group (named `NIO-SGLTN-…`).
    static func sharedLoopThreads(of pid: pid_t) throws -> Int {
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")
        return try tasks.filter { task in
            try String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8).hasPrefix("NIO-SGLTN-")
        }.count
    }

    @Test func aMachineGetsOneLoopFewerThanItHasCoresAndNeverNone() {
        #expect(EventLoops.count(cores: 1) == 1)
        #expect(EventLoops.count(cores: 2) == 1)
        #expect(EventLoops.count(cores: 16) == 15)
    }

    @Test func jamServeRunsOneLoopFewerThanCores() async throws {
        let server = try await ServerProcess(dataDirectory: TestServer.makeDataDirectory())
        let loops = try Self.sharedLoopThreads(of: server.child.pid)
        try await server.terminate()
        #expect(loops == EventLoops.count(cores: System.coreCount))
    }

    @Test func nioOwnLoopCountStillDecides() async throws {
        let server = try await ServerProcess(dataDirectory: TestServer.makeDataDirectory(), environment: [EventLoops.environmentVariable: "3"])
        let loops = try Self.sharedLoopThreads(of: server.child.pid)
        try await server.terminate()
        #expect(loops == 3)
    }
}
