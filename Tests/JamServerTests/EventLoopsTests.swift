import Foundation
import JamProtocol
import JamTestSupport
import NIOCore
import Testing

@testable import JamServer

/// `jam serve` on SQLite leaves the store's commit thread a core: one event loop fewer than cores.
@Suite(.serialized) struct EventLoopsTests {
    /// How many threads of a running `jam serve` are loops of NIO's shared group (named
    /// `NIO-SGLTN-…`), read before it is stopped again. NIO's own variable reaches the server
    /// only when `environment` sets it: a machine that exports it would otherwise decide.
    static func sharedLoopThreads(environment: [String: String] = [:]) async throws -> Int {
        let server = try await ServerProcess(
            dataDirectory: TestServer.makeDataDirectory(), environment: environment,
            removing: environment[EventLoops.environmentVariable] == nil ? [EventLoops.environmentVariable] : [])
        let pid = server.child.pid
        let counted = Result { () throws -> Int in
            let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")
            return tasks.filter { task in
                // A thread that ended while the folder was read has no name to read: not a loop.
                let name = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8)
                return name?.hasPrefix("NIO-SGLTN-") ?? false
            }.count
        }
        try await server.terminate()
        return try counted.get()
    }

    @Test func aMachineGetsOneLoopFewerThanItHasCoresWhenItCommitsOnAThreadOfItsOwn() {
        #expect(EventLoops.count(cores: 1, commitThread: true) == 1)
        #expect(EventLoops.count(cores: 2, commitThread: true) == 1)
        #expect(EventLoops.count(cores: 16, commitThread: true) == 15)
        #expect(EventLoops.count(cores: 2, commitThread: false) == 2)
    }

    @Test(arguments: ["abc", "0", "-2", "", "1.5", "1025"])
    func aLoopCountInNIOsVariableThatIsNotACountIsRefused(_ text: String) {
        // Refused before the group is sized, so this process's group is left alone.
        #expect(throws: JamError(.invalidField, "NIO_SINGLETON_GROUP_LOOP_COUNT must be a whole number of event loops from 1 to 1024, got \"\(text)\"")) {
            try EventLoops.configure(environment: [EventLoops.environmentVariable: text], commitThread: true)
        }
    }

    @Test func jamServeOnSQLiteRunsOneLoopFewerThanCores() async throws {
        #expect(try await Self.sharedLoopThreads() == EventLoops.count(cores: System.coreCount, commitThread: true))
    }

    @Test func nioOwnLoopCountStillDecides() async throws {
        #expect(try await Self.sharedLoopThreads(environment: [EventLoops.environmentVariable: "3"]) == 3)
    }

    @Test func jamServeRefusesToStartOnALoopCountThatIsNoNumber() async throws {
        do {
            let server = try await ServerProcess(
                dataDirectory: TestServer.makeDataDirectory(), environment: [EventLoops.environmentVariable: "many"])
            try await server.terminate()
            Issue.record("jam serve started with \(EventLoops.environmentVariable)=many")
        } catch {
            #expect("\(error)".contains("NIO_SINGLETON_GROUP_LOOP_COUNT must be a whole number of event loops from 1 to 1024, got \"many\""), "\(error)")
        }
    }
}
