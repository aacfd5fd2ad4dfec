import Foundation
import JamTestSupport
import Testing

/// `jam host` and `jam join` driven in tmux, as a person at two terminals would.
@Suite(.serialized) struct TerminalClientTests {
    /// A tmux session running one command, read with capture-pane.
    struct Pane {
        let name: String

        static var tmuxAvailable: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux") }

        init(_ name: String, command: String) throws {
            self.name = name
            _ = try? Self.tmux(["kill-session", "-t", name])
            try Self.tmux(["new-session", "-d", "-s", name, "-x", "110", "-y", "32", command])
        }

        @discardableResult
        static func tmux(_ arguments: [String]) throws -> String {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/tmux")
            process.arguments = arguments
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = pipe
            try process.run()
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            let text = String(decoding: data, as: UTF8.self)
            guard process.terminationStatus == 0 else { throw TestFailure("tmux \(arguments.joined(separator: " ")) failed: \(text)") }
            return text
        }

        func keys(_ keys: String...) throws {
            try Self.tmux(["send-keys", "-t", name] + keys)
        }

        /// Types text literally.
        func type(_ text: String) throws {
            try Self.tmux(["send-keys", "-t", name, "-l", text])
        }

        var screen: String {
            get throws { try Self.tmux(["capture-pane", "-p", "-t", name]) }
        }

        /// Waits until the screen contains all of `texts`.
        @discardableResult
        func waitFor(_ texts: String..., timeout: Duration = .seconds(8)) async throws -> String {
            let deadline = ContinuousClock.now + timeout
            var last = ""
            while ContinuousClock.now < deadline {
                last = try screen
                if texts.allSatisfy({ last.contains($0) }) { return last }
                try await Task.sleep(for: .milliseconds(50))
            }
            throw TestFailure("\(name) never showed \(texts); screen:\n\(last)")
        }

        func kill() {
            _ = try? Self.tmux(["kill-session", "-t", name])
        }
    }

    @Test func hostAndGuestSeeAddsVotesAndSkipsOnBothScreens() async throws {
        guard Pane.tmuxAvailable else {
            if ProcessInfo.processInfo.environment["JAM_REQUIRE_ALL"] == "1" { Issue.record("tmux is required (JAM_REQUIRE_ALL=1)") }
            return
        }
        let directory = TestServer.makeDataDirectory()
        let server = try await ServerProcess(dataDirectory: directory)
        defer { server.terminate() }
        let jam = try ServerProcess.executable.path
        let url = "http://127.0.0.1:\(server.port)"
        let suffix = UUID().uuidString.prefix(6)
        let host = try Pane("host-\(suffix)", command: "\(jam) host --server \(url) --name Hana; echo HOST-EXITED; sleep 30")
        let guestName = "guest-\(suffix)"
        defer {
            host.kill()
            Pane(nameOnly: guestName).kill()
        }
        // The host starts on the invite: code, link and a QR code of the link.
        let invite = try await host.waitFor("Join code:", "/j/", "█▀▀▀▀▀█")
        let code = try #require(invite.split(separator: "\n").first { $0.contains("Join code:") }?.split(separator: " ").last.map(String.init))
        try host.keys("x")
        try await host.waitFor("Queue (0)", "Members: ● Hana (host)")

        let guest = try Pane(guestName, command: "\(jam) join \(code) --server \(url) --name Gil; echo GUEST-EXITED; sleep 30")
        try await guest.waitFor("Queue (0)", "Hana (host)", "● Gil")
        try await host.waitFor("● Gil")

        // Gil adds a song: it starts playing on both screens.
        try guest.keys("a")
        try guest.type("Harvest Moon - Neil Young")
        try guest.keys("Enter")
        try await host.waitFor("▶ Harvest Moon — Neil Young", "added by Gil")
        try await guest.waitFor("▶ Harvest Moon — Neil Young")

        // Hana adds two more; Gil votes the second one up: it leads on both screens.
        try host.keys("a")
        try host.type("Second Song - Band")
        try host.keys("Enter")
        try await host.waitFor("Second Song — Band")
        try host.keys("a")
        try host.type("Third Song - Band")
        try host.keys("Enter")
        try await guest.waitFor("Second Song — Band", "Third Song — Band")
        try guest.keys("Down")
        try guest.keys("+")
        let hostScreen = try await host.waitFor("1 vote")
        let queueLines = hostScreen.split(separator: "\n").filter { $0.contains("Song — Band") }
        #expect(queueLines.first?.contains("Third Song") == true, "\(hostScreen)")
        try await guest.waitFor("▲+1")

        // Gil asks to skip; Hana skips: the voted song plays everywhere.
        try guest.keys("s")
        try await host.waitFor("Skip requests 1/2")
        try host.keys("n")
        try await host.waitFor("▶ Third Song — Band")
        try await guest.waitFor("▶ Third Song — Band")

        // A resized terminal is redrawn to its new width.
        try Pane.tmux(["resize-window", "-t", host.name, "-x", "72", "-y", "30"])
        let narrow = try await host.waitFor(String(repeating: "─", count: 72))
        #expect(!narrow.contains(String(repeating: "─", count: 73)))

        // Gil searches the library and adds what he finds.
        try guest.keys("/")
        try guest.type("cafe")
        try guest.keys("Enter")
        try await guest.waitFor("› Café au Lait — The OpenJam Demo Band")
        try guest.keys("Enter")
        try await host.waitFor("Café au Lait — The OpenJam Demo Band")

        // Quitting leaves the terminal as it was: the shell's line shows, not the live screen.
        try guest.keys("q")
        let after = try await guest.waitFor("GUEST-EXITED")
        #expect(!after.contains("Members:"))
    }
}

extension TerminalClientTests.Pane {
    /// A handle on an existing tmux session (for cleanup).
    init(nameOnly: String) {
        self.name = nameOnly
    }
}
