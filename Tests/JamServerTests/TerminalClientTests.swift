import Foundation
import JamTestSupport
import JamProtocol
import Testing

/// `jam host` and `jam join` driven in tmux, as a person at two terminals would.
@Suite(.serialized) struct TerminalClientTests {
    /// A tmux session running one command, read with capture-pane.
    struct Pane {
        let name: String

        static var tmuxAvailable: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux") }

        /// Where the panes' `jam` keeps its sign-ins (`XDG_STATE_HOME`), unless a test names
        /// its own: never the home folder of whoever runs the tests.
        static let stateHome = FileManager.default.temporaryDirectory.appendingPathComponent("openjam-terminal-tests-state")

        init(_ name: String, command: String, stateHome: URL = Pane.stateHome) async throws {
            self.name = name
            _ = try? await Self.tmux(["kill-session", "-t", name])
            try await Self.tmux(["new-session", "-d", "-s", name, "-x", "110", "-y", "32", "XDG_STATE_HOME=\(stateHome.path) " + command])
        }

        /// Runs tmux to the end (through swift-subprocess: see `ChildProcess`).
        @discardableResult
        static func tmux(_ arguments: [String]) async throws -> String {
            let (status, text) = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/tmux"), arguments: arguments)
            guard status.isSuccess else { throw TestFailure("tmux \(arguments.joined(separator: " ")) failed (\(status)): \(text)") }
            return text
        }

        func keys(_ keys: String...) async throws {
            try await Self.tmux(["send-keys", "-t", name] + keys)
        }

        /// Types text literally.
        func type(_ text: String) async throws {
            try await Self.tmux(["send-keys", "-t", name, "-l", text])
        }

        /// Pastes `text` as a terminal does, marked as a paste when the program asked for that
        /// (bracketed paste); line breaks arrive as carriage returns, as typed.
        func paste(_ text: String) async throws {
            try await Self.tmux(["set-buffer", "-b", name, text])
            try await Self.tmux(["paste-buffer", "-p", "-d", "-b", name, "-t", name])
        }

        var screen: String {
            get async throws { try await Self.tmux(["capture-pane", "-p", "-t", name]) }
        }

        /// Waits until the screen contains all of `texts`.
        @discardableResult
        func waitFor(_ texts: String..., timeout: Duration = .seconds(8)) async throws -> String {
            try await waitUntil("\(texts)", timeout: timeout) { screen in texts.allSatisfy { screen.contains($0) } }
        }

        /// Waits until `holds` accepts the screen; `what` names the wait in the failure.
        @discardableResult
        func waitUntil(_ what: String, timeout: Duration = .seconds(8), _ holds: (String) -> Bool) async throws -> String {
            let deadline = ContinuousClock.now + timeout
            var last = ""
            while ContinuousClock.now < deadline {
                last = try await screen
                if holds(last) { return last }
                try await Task.sleep(for: .milliseconds(50))
            }
            throw TestFailure("\(name) never showed \(what); screen:\n\(last)")
        }

        func kill() async {
            _ = try? await Self.tmux(["kill-session", "-t", name])
        }

        /// The process the pane runs (with `exec`, the command itself).
        var pid: pid_t {
            get async throws {
                let text = try await Self.tmux(["display-message", "-p", "-t", name, "#{pane_pid}"])
                guard let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)) else { throw TestFailure("no pane pid in \(text)") }
                return pid
            }
        }
    }

    /// Whether `pid` has ended (gone, or a zombie nobody reaped yet), polled until `timeout`.
    private static func ends(_ pid: pid_t, within timeout: Duration) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
            if let end = stat.lastIndex(of: ")"), stat[stat.index(end, offsetBy: 2)] == "Z" { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    /// Runs `body` with a real `jam serve` and a suffix for unique pane names, when tmux is here.
    private static func withServerInTmux(_ body: (ServerProcess, Substring) async throws -> Void) async throws {
        guard Pane.tmuxAvailable else {
            if ProcessInfo.processInfo.environment["JAM_REQUIRE_ALL"] == "1" { Issue.record("tmux is required (JAM_REQUIRE_ALL=1)") }
            return
        }
        try await ServerProcess.with(dataDirectory: TestServer.makeDataDirectory()) { server in
            try await body(server, UUID().uuidString.prefix(6))
        }
    }

    /// Runs `body`, then ends `panes` and waits for tmux to have ended them, whether `body`
    /// threw or not: a pane left open keeps its `jam` process and its socket after the test.
    private static func closing(_ panes: Pane..., body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch {
            for pane in panes { await pane.kill() }
            throw error
        }
        for pane in panes { await pane.kill() }
    }

    /// A session Hana opened over REST, and a pane where Gil joins it with `jam join` (after
    /// `environment`, e.g. `ESCDELAY=4000`); the pane says `GUEST-EXITED <status>` once `jam` ends.
    private static func gilJoinsHanasSession(
        _ server: ServerProcess, pane name: String, environment: String = ""
    ) async throws -> (api: RestClient, host: GuestAuthResponse, view: SessionView, guest: Pane) {
        let url = "http://127.0.0.1:\(server.port)"
        let api = RestClient(baseURL: url)
        let host = try await api.guest("Hana")
        let view = try await api.create(host.token)
        let command = "\(environment)\(try ServerProcess.executable.path) join \(view.session.joinCode) --server \(url) --name Gil; echo GUEST-EXITED $?; sleep 30"
        return (api, host, view, try await Pane(name, command: command))
    }

    @Test func aClosedTerminalOrASIGTERMEndsTheLiveScreen() async throws {
        try await Self.withServerInTmux { server, suffix in
            let command = "exec \(try ServerProcess.executable.path) host --server http://127.0.0.1:\(server.port) --name Hana"
            // What each process says on its way out, kept after its pane is gone.
            let errors = FileManager.default.temporaryDirectory.appendingPathComponent("jam-hangup-\(suffix)")
            try FileManager.default.createDirectory(at: errors, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: errors) }
            let closed = try await Pane("closed-\(suffix)", command: command + " 2>\(errors.path)/closed")
            try await Self.closing(closed) {
                let stopped = try await Pane("stopped-\(suffix)", command: command + " 2>\(errors.path)/stopped")
                try await Self.closing(stopped) {
                    try await closed.waitFor("Join code:")
                    try await stopped.waitFor("Join code:")
                    let closedPid = try await closed.pid, stoppedPid = try await stopped.pid
                    // Closing the terminal: the pane's tty goes away and the process gets SIGHUP.
                    await closed.kill()
                    // Leaving closes the socket politely, which takes a moment on a machine running
                    // every suite at once; before the fix the process never ended at all.
                    #expect(try await Self.ends(closedPid, within: .seconds(20)), "jam host outlived its terminal")
                    Foundation.kill(stoppedPid, SIGTERM)
                    #expect(try await Self.ends(stoppedPid, within: .seconds(20)), "jam host ignored SIGTERM")
                    // Ending is an exit, not a crash: a trap on the closed terminal's refused write
                    // used to print a fatal error and hold the process for seconds in the crash report.
                    for name in ["closed", "stopped"] {
                        let said = try String(contentsOf: errors.appendingPathComponent(name), encoding: .utf8)
                        #expect(!said.contains("Fatal error"), "jam host crashed on its way out (\(name)): \(said.prefix(300))")
                    }
                }
            }
        }
    }

    @Test func hostAndGuestSeeAddsVotesAndSkipsOnBothScreens() async throws {
        try await Self.withServerInTmux { server, suffix in
            let host = try await Pane("host-\(suffix)", command: "\(try ServerProcess.executable.path) host --server http://127.0.0.1:\(server.port) --name Hana; echo HOST-EXITED; sleep 30")
            let guest = Pane(nameOnly: "guest-\(suffix)")
            do {
                try await play(server: server, host: host, guest: guest)
            } catch {
                await host.kill()
                await guest.kill()
                throw error
            }
            await host.kill()
            await guest.kill()
        }
    }

    @Test func aHostWhoQuitsComesBackWithJamJoinAsTheHost() async throws {
        try await Self.withServerInTmux { server, suffix in
            let jam = try ServerProcess.executable.path
            let url = "http://127.0.0.1:\(server.port)"
            let state = FileManager.default.temporaryDirectory.appendingPathComponent("jam-state-\(suffix)")
            defer { try? FileManager.default.removeItem(at: state) }
            let host = try await Pane("leaving-\(suffix)", command: "\(jam) host --server \(url) --name Hana; echo HOST-EXITED $?; sleep 30", stateHome: state)
            try await Self.closing(host) {
                let invite = try await host.waitFor("Join code:")
                let code = try #require(invite.split(separator: "\n").first { $0.contains("Join code:") }?.split(separator: " ").last.map(String.init))
                try await host.keys("x")
                try await host.waitFor("Queue (0)", "Members: ● Hana (host)")
                try await host.keys("q")
                // The way back names the server and name it was opened with: another name would
                // be another member.
                // Compared without spaces: the pane wraps the line at one.
                let left = try await host.waitFor("HOST-EXITED 0").filter { !$0.isWhitespace }
                #expect(left.contains("`jam join \(code) --server \(url) --name Hana` opens it again".filter { !$0.isWhitespace }), "\(left)")
                // The sign-in is kept for its owner's eyes only: a token is a credential.
                let file = state.appendingPathComponent("openjam/identities.json")
                let permissions = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? NSNumber
                #expect(permissions?.intValue == 0o600)
                let back = try await Pane("back-\(suffix)", command: "\(jam) join \(code) --server \(url) --name Hana; echo JOIN-EXITED $?; sleep 30", stateHome: state)
                try await Self.closing(back) {
                    // The same member, host again and connected; not a second Hana beside an absent host.
                    let screen = try await back.waitFor("Queue (0)", "Members: ")
                    let members = try #require(screen.split(separator: "\n").first { $0.contains("Members: ") })
                    #expect(members.contains("● Hana (host)") && members.components(separatedBy: "Hana").count == 2, "\(members)")
                }
            }
        }
    }

    @Test func aMemberTheHostRemovesSeesWhyAndTheProcessEndsWithOne() async throws {
        try await Self.withServerInTmux { server, suffix in
            let (api, host, view, guest) = try await Self.gilJoinsHanasSession(server, pane: "kicked-\(suffix)")
            try await Self.closing(guest) {
                try await guest.waitFor("● Gil")
                // Removed while typing a song: the prompt must not take the q that quits.
                try await guest.keys("a")
                try await guest.type("Hal")
                try await guest.waitFor("Add (title - artist): Hal")
                let gil = try #require(try await api.view(host.token, view.session.id).members.first { $0.displayName == "Gil" })
                let kicked = try await api.request("DELETE", "/api/v1/sessions/\(view.session.id)/members/\(gil.userId)", token: host.token)
                #expect(kicked.status == 204)
                try await guest.waitFor("Connection closed:")
                try await guest.keys("q")
                try await guest.waitFor("GUEST-EXITED 1")
            }
        }
    }

    @Test func aSessionTheHostEndsSaysSoAndOffersNoWayBack() async throws {
        try await Self.withServerInTmux { server, suffix in
            let (api, host, view, guest) = try await Self.gilJoinsHanasSession(server, pane: "ended-\(suffix)")
            try await Self.closing(guest) {
                try await guest.waitFor("● Gil")
                let ended = try await api.request("DELETE", "/api/v1/sessions/\(view.session.id)", token: host.token)
                #expect(ended.status == 204)
                try await guest.waitFor("Connection closed:")
                try await guest.keys("q")
                let screen = try await guest.waitFor("GUEST-EXITED 0", "has ended")
                #expect(!screen.contains("opens it again"), "\(screen)")
            }
        }
    }

    @Test func theInviteLinkJoinsOnItsOwnAndALinkForAnotherServerIsRefused() async throws {
        try await Self.withServerInTmux { server, suffix in
            let url = "http://127.0.0.1:\(server.port)"
            let api = RestClient(baseURL: url)
            let host = try await api.guest("Hana")
            let view = try await api.create(host.token)
            let link = "\(url)/j/\(view.session.joinCode)"
            let jam = try ServerProcess.executable.path
            // The link names the server: no --server, and the default server is not this one.
            let guest = try await Pane("link-\(suffix)", command: "\(jam) join \(link) --name Gil; echo GUEST-EXITED $?; sleep 30")
            try await Self.closing(guest) {
                try await guest.waitFor("● Gil")
                try await guest.keys("q")
                let left = try await guest.waitFor("GUEST-EXITED 0").filter { !$0.isWhitespace }
                #expect(left.contains("jam join \(view.session.joinCode) --server \(url) --name Gil".filter { !$0.isWhitespace }), "\(left)")
            }
            let other = try await Pane("other-\(suffix)", command: "\(jam) join \(link) --server http://127.0.0.1:9 --name Gil; echo OTHER-EXITED $?; sleep 30")
            try await Self.closing(other) {
                let refused = try await other.waitFor("OTHER-EXITED 64")
                #expect(refused.filter { !$0.isWhitespace }.contains("theinvitelinkisfor\(url)".filter { !$0.isWhitespace }), "\(refused)")
            }
        }
    }

    @Test func aWrongCodeIsSaidInWordsAndAnAddWithoutATitleAsksForOne() async throws {
        try await Self.withServerInTmux { server, suffix in
            let url = "http://127.0.0.1:\(server.port)"
            let jam = try ServerProcess.executable.path
            let wrong = try await Pane("wrong-\(suffix)", command: "\(jam) join ZZZZ22 --server \(url) --name Gil; echo WRONG-EXITED $?; sleep 30")
            try await Self.closing(wrong) {
                let said = try await wrong.waitFor("WRONG-EXITED 1")
                #expect(said.contains("jam: no session"), "\(said)")
                #expect(!said.contains("notFound") && !said.contains("Error:"), "\(said)")
            }
            let api = RestClient(baseURL: url)
            let host = try await api.guest("Hana")
            let view = try await api.create(host.token)
            let guest = try await Pane("untitled-\(suffix)", command: "\(jam) join \(view.session.joinCode) --server \(url) --name Gil")
            try await Self.closing(guest) {
                try await guest.waitFor("● Gil")
                try await guest.keys("a")
                try await guest.type(" - Band")
                try await guest.keys("Enter")
                try await guest.waitFor("Type a title first", "Add (title - artist):")
                try await guest.keys("Escape")
                try await guest.keys("a")
                try await guest.type("Harvest Moon")
                try await guest.keys("Enter")
                try await guest.waitFor("Harvest Moon — Unknown artist")  // playing at once: the queue was empty
                // Alt+Backspace takes back a word and leaves the prompt open.
                try await guest.keys("a")
                try await guest.type("Second Song - Band typo")
                try await guest.keys("M-BSpace")
                try await guest.waitFor("Add (title - artist): Second Song - Band ")
                try await guest.keys("Enter")
                try await guest.waitFor("Second Song — Band")
            }
        }
    }

    @Test func aPastedSongIsTextForThePromptAndAPasteElsewhereActsOnNothing() async throws {
        try await Self.withServerInTmux { server, suffix in
            // A long ESC wait (ncurses' ESCDELAY), so that the split below is a split however
            // slowly this machine runs the two tmux commands.
            let guest = try await Self.gilJoinsHanasSession(server, pane: "paste-\(suffix)", environment: "ESCDELAY=4000 ").guest
            try await Self.closing(guest) {
                try await guest.waitFor("● Gil")
                // On the main screen a paste's letters are not keys: no leave question, no quit.
                try await guest.paste("Lq")
                let said = try await guest.waitFor("To paste a song, press a")
                #expect(!said.contains("Leave") && !said.contains("GUEST-EXITED"), "\(said)")
                // A title and artist copied on two lines, with the line break after them.
                try await guest.keys("a")
                try await guest.paste("Pasted Song\n- The Band\n")
                try await guest.waitFor("Add (title - artist): Pasted Song - The Band")
                try await guest.keys("Enter")
                try await guest.waitFor("Pasted Song — The Band")  // playing at once: the queue was empty
                // An arrow key whose ESC came on its own (a slow link) is still the arrow.
                try await guest.keys("a")
                try await guest.keys("Escape")
                try await Task.sleep(for: .milliseconds(300))
                try await guest.type("[B")
                try await guest.type("x")
                // The arrow did nothing in the prompt, and the prompt still takes letters.
                try await guest.waitFor("Add (title - artist): x")
                // Escape alone still closes the prompt, once its wait ends.
                try await guest.keys("Escape")
                try await guest.waitUntil("the prompt closed") { !$0.contains("Add (title - artist):") }
            }
        }
    }

    @Test func aNewJoinCodeShowsInTheInviteAndTheWayBack() async throws {
        try await Self.withServerInTmux { server, suffix in
            let url = "http://127.0.0.1:\(server.port)"
            let api = RestClient(baseURL: url)
            let host = try await api.guest("Hana")
            let view = try await api.create(host.token)
            let jam = try ServerProcess.executable.path
            let guest = try await Pane("newcode-\(suffix)", command: "\(jam) join \(view.session.joinCode) --server \(url) --name Gil; echo GUEST-EXITED $?; sleep 30")
            try await Self.closing(guest) {
                try await guest.waitFor("● Gil")
                let changed = try await api.send("PATCH", "/api/v1/sessions/\(view.session.id)", token: host.token, json: UpdateSessionRequest(regenerateJoinCode: true))
                let code = try changed.decode(SessionView.self).session.joinCode
                #expect(code != view.session.joinCode)
                try await guest.waitFor("code \(code)")
                try await guest.keys("i")
                try await guest.waitFor("Join code:  \(code)", "/j/\(code)")
                try await guest.keys("Enter")
                try await guest.keys("q")
                let left = try await guest.waitFor("GUEST-EXITED 0").filter { !$0.isWhitespace }
                #expect(left.contains("jamjoin\(code)"), "\(left)")
            }
        }
    }

    @Test func aServerThatGoesAwayShowsAsOfflineWithoutLogLinesOnTheScreen() async throws {
        try await Self.withServerInTmux { server, suffix in
            let api = RestClient(baseURL: "http://127.0.0.1:\(server.port)")
            let host = try await api.guest("Hana")
            let view = try await api.create(host.token)
            // What the process writes besides its screen: a log line there would be drawn over
            // the screen (the next redraw hides it again), with text from the server in it.
            let errors = FileManager.default.temporaryDirectory.appendingPathComponent("jam-join-errors-\(suffix)")
            defer { try? FileManager.default.removeItem(at: errors) }
            let guest = try await Pane(
                "offline-\(suffix)",
                command: "\(try ServerProcess.executable.path) join \(view.session.joinCode) --server http://127.0.0.1:\(server.port) --name Gil 2>\(errors.path); sleep 30")
            try await Self.closing(guest) {
                try await guest.waitFor("● Gil")
                try await server.kill()
                try await guest.waitFor("offline, retry", timeout: .seconds(20))
                let written = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
                #expect(written.isEmpty, "log lines beside the screen: \(written)")
            }
        }
    }

    @Test func aMemberLeavesForGoodWithLAfterSayingYesAndAnyOtherKeyStays() async throws {
        try await Self.withServerInTmux { server, suffix in
            let (api, host, view, guest) = try await Self.gilJoinsHanasSession(server, pane: "leaver-\(suffix)")
            let code = view.session.joinCode
            try await Self.closing(guest) {
                try await guest.waitFor("● Gil")
                try await guest.keys("L")
                try await guest.waitFor("Leave the session? Code \(code) lets you join again.", "y: leave")
                // Any other key stays.
                try await guest.keys("n")
                try await guest.waitFor("L leave  q quit")
                #expect(try await api.view(host.token, view.session.id).members.contains { $0.displayName == "Gil" })
                try await guest.keys("L")
                try await guest.waitFor("y: leave")
                try await guest.keys("y")
                try await guest.waitFor("You left", "GUEST-EXITED 0")
                #expect(try await !api.view(host.token, view.session.id).members.contains { $0.displayName == "Gil" })
            }
        }
    }

    @Test func aRemovedMemberWhoThenLeavesStillEndsWithOne() async throws {
        try await Self.withServerInTmux { server, suffix in
            let (api, host, view, guest) = try await Self.gilJoinsHanasSession(server, pane: "removed-leaver-\(suffix)")
            try await Self.closing(guest) {
                try await guest.waitFor("● Gil")
                let gil = try #require(try await api.view(host.token, view.session.id).members.first { $0.displayName == "Gil" })
                #expect(try await api.request("DELETE", "/api/v1/sessions/\(view.session.id)/members/\(gil.userId)", token: host.token).status == 204)
                try await guest.waitFor("Connection closed:")
                // Keys that would act say again that nothing can, rather than nothing at all.
                try await guest.keys("a")
                try await guest.type("Too late - Band")
                try await guest.keys("Enter")
                try await Task.sleep(for: .milliseconds(300))
                let after = try await guest.waitFor("Connection closed:", "Press q to quit")
                #expect(!after.contains("Add (title - artist)") && !after.contains("Too late"), "\(after)")
                try await guest.keys("L")
                try await guest.waitFor("y: leave")
                try await guest.keys("y")
                // Nothing was left to leave: the removal is how the process ends.
                try await guest.waitFor("GUEST-EXITED 1")
            }
        }
    }

    @Test func wideCharactersAreMeasuredInColumnsSoLinesFitTheTerminal() async throws {
        try await Self.withServerInTmux { server, suffix in
            let api = RestClient(baseURL: "http://127.0.0.1:\(server.port)")
            let host = try await api.guest("Hana")
            let view = try await api.create(host.token)
            // 52 characters on the left, 99 columns: counted by characters it would be padded
            // to 157 columns and wrap.
            let song = Track(id: "wide", name: String(repeating: "山", count: 45), artist: "歌手", durationMs: 180_000, source: .external)
            #expect(try await api.add(host.token, view.session.id, song).status == 201)
            let guest = try await Pane(
                "wide-\(suffix)",
                command: "\(try ServerProcess.executable.path) join \(view.session.joinCode) --server http://127.0.0.1:\(server.port) --name 山田太郎")
            try await Self.closing(guest) {
                let screen = try await guest.waitFor("● 山田太郎", "▶ 山山")
                let rows = screen.split(separator: "\n", omittingEmptySubsequences: false)
                let playing = try #require(rows.firstIndex { $0.contains("▶ 山山") })
                // The title gives way; the song's state and who added it stay whole.
                #expect(rows[playing].contains("山…"), "cut to the width: \(rows[playing])")
                #expect(rows[playing].hasSuffix(" · added by Hana"), "the state kept: \(rows[playing])")
                #expect(rows[playing + 1].hasPrefix("["), "the progress bar follows on the next row, nothing wrapped: \(rows[playing + 1])")
            }
        }
    }

    @Test func withoutATerminalNothingIsJoined() async throws {
        let server = try await ServerProcess.with(dataDirectory: TestServer.makeDataDirectory()) { server in
            let api = RestClient(baseURL: "http://127.0.0.1:\(server.port)")
            let host = try await api.guest("Hana")
            let view = try await api.create(host.token)
            let (status, text) = try await ChildProcess.run(
                try ServerProcess.executable, arguments: ["join", view.session.joinCode, "--server", "http://127.0.0.1:\(server.port)", "--name", "Gil"])
            #expect(!status.isSuccess)
            #expect(text.contains("jam join shows the session live and needs a terminal"), "\(text)")
            return try await api.view(host.token, view.session.id).members.map(\.displayName)
        }
        #expect(server == ["Hana"], "no member without a screen")
    }

    @Test func aMembersSyncReportShowsInTheHostsTerminalWhoseKeysActOnThatDevice() async throws {
        try await Self.withServerInTmux { server, suffix in
            let host = try await Pane("sync-\(suffix)", command: "\(try ServerProcess.executable.path) host --server http://127.0.0.1:\(server.port) --name Hana")
            try await Self.closing(host) {
                let invite = try await host.waitFor("Join code:")
                let code = try #require(invite.split(separator: "\n").first { $0.contains("Join code:") }?.split(separator: " ").last.map(String.init))
                try await host.keys("x")
                // A phone that plays: a raw socket reporting its sync as the web client does.
                let api = RestClient(baseURL: "http://127.0.0.1:\(server.port)")
                let gil = try await api.guest("Gil")
                let joined = try await api.join(gil.token, code: code)
                let phone = TestSocket(wsBaseURL: "ws://127.0.0.1:\(server.port)", session: joined.session.id, token: gil.token)
                try await phone.next(.stateSync)
                phone.send(.syncReport(SyncReport(
                    epoch: 0, offsetMs: 3, errorMs: 0.8, driftMs: 14, deviceId: "gil-phone", outputLatencyMs: 42, delayMs: 0,
                    clockDriftPpm: 2, playing: true)))
                try await host.waitFor("Gil · gil-phone", "fair", "clock ±0.8 ms", "playback +14 ms", "output 42 ms")
                // The host raises that device's delay by 5 ms and asks it to re-sync.
                try await host.keys(">")
                #expect(try await phone.next(.deviceDelay).deviceDelay == DeviceDelay(userId: gil.userId, deviceId: "gil-phone", delayMs: 5))
                // Two quick presses more are two steps more, though the device has not reported
                // the new delay yet: they step from the delay last sent.
                try await host.keys(">")
                try await host.keys(">")
                #expect(try await phone.next(.deviceDelay).deviceDelay?.delayMs == 10)
                #expect(try await phone.next(.deviceDelay).deviceDelay?.delayMs == 15)
                try await host.keys("r")
                #expect(try await phone.next(.resync).resync == Resync(userId: gil.userId, deviceId: "gil-phone"))
                // A device that cannot record says so, and the host's key does not make it listen.
                phone.send(.syncReport(SyncReport(
                    epoch: 0, offsetMs: 3, errorMs: 0.8, driftMs: 14, deviceId: "gil-phone", outputLatencyMs: 42, delayMs: 15,
                    clockDriftPpm: 2, playing: true, canListen: false)))
                try await host.waitFor("cannot listen")
                try await host.keys("c")
                try await host.waitFor("That device cannot record the room")
                await phone.close()
            }
        }
    }

    @Test func aHostStartsTheMusicWithPWhenNothingPlays() async throws {
        try await Self.withServerInTmux { server, suffix in
            let host = try await Pane("play-host-\(suffix)", command: "\(try ServerProcess.executable.path) host --server http://127.0.0.1:\(server.port) --name Hana")
            try await Self.closing(host) {
                try await host.waitFor("Join code:")
                try await host.keys("x")
                try await host.waitFor("Queue (0)", "Nothing playing", "p play/pause")
                // The music kept going: with nothing queued, p shuffles the library.
                try await host.keys("o")
                try await host.waitFor("Keep the music going: off")
                try await host.keys("Down")
                try await host.keys("Right")
                try await host.waitFor("Keep the music going: on")
                try await host.keys("Escape")
                try await host.waitFor("Queue (0)")
                try await host.keys("p")
                let playing = try await host.waitUntil("a song playing") { $0.contains("▶ ") && $0.contains("playing") }
                #expect(!playing.contains("refused"), "\(playing)")
            }
        }
    }

    @Test func theHostsSettingsFromTheKeyboardReachTheGuestsScreen() async throws {
        try await Self.withServerInTmux { server, suffix in
            let jam = try ServerProcess.executable.path
            let url = "http://127.0.0.1:\(server.port)"
            let host = try await Pane("settings-host-\(suffix)", command: "\(jam) host --server \(url) --name Hana")
            try await Self.closing(host) {
                let invite = try await host.waitFor("Join code:")
                let code = try #require(invite.split(separator: "\n").first { $0.contains("Join code:") }?.split(separator: " ").last.map(String.init))
                try await host.keys("x")
                let guest = try await Pane("settings-guest-\(suffix)", command: "\(jam) join \(code) --server \(url) --name Gil")
                try await Self.closing(guest) {
                    try await guest.waitFor("Queue (0)", "● Gil")

                    // Every setting is a row: the cooldown and the member limit, changed with ← →.
                    try await host.keys("o")
                    try await host.waitFor("Session settings", "› Lock the queue: off", "Skip a song when: more than half ask", "Members add: whenever they like")
                    for _ in 0..<5 { try await host.keys("Down") }
                    try await host.keys("Right")
                    try await host.waitFor("› Members add: one a minute")
                    try await host.keys("Down")
                    try await host.keys("Left")
                    try await host.waitFor("› Songs waiting per member: 19")
                    try await host.keys("Down")
                    try await host.keys("Left")
                    try await host.waitFor("› Most people: 49")
                    for _ in 0..<3 { try await host.keys("Up") }
                    try await host.keys("Left")
                    try await host.waitFor("Skip a song when: more than a third ask")
                    try await host.keys("Escape")
                    try await host.waitFor("Queue (0)")

                    // Gil adds once, is told when he may add again, and a second add is refused in words.
                    try await guest.keys("a")
                    try await guest.type("First Song - Band")
                    try await guest.keys("Enter")
                    try await guest.waitFor("▶ First Song — Band", "your next add in 0:")
                    try await guest.keys("a")
                    try await guest.type("Second Song - Band")
                    try await guest.keys("Enter")
                    try await guest.waitFor("refused: you can add again in 0:")
                    // The host is not held to it.
                    try await host.keys("a")
                    try await host.type("Host Song - Band")
                    try await host.keys("Enter")
                    try await guest.waitFor("Host Song — Band")
                }
            }
        }
    }

    /// Host and guest at their terminals: invite, join, add, vote, skip, resize, search, quit.
    private func play(server: ServerProcess, host: Pane, guest guestPane: Pane) async throws {
        let jam = try ServerProcess.executable.path
        let url = "http://127.0.0.1:\(server.port)"
        // The host starts on the invite: code, link and a QR code of the link.
        let invite = try await host.waitFor("Join code:", "/j/", "█▀▀▀▀▀█", "only this computer opens it")
        let code = try #require(invite.split(separator: "\n").first { $0.contains("Join code:") }?.split(separator: " ").last.map(String.init))
        try await host.keys("x")
        try await host.waitFor("Queue (0)", "Members: ● Hana (host)")

        let guest = try await Pane(guestPane.name, command: "\(jam) join \(code) --server \(url) --name Gil; echo GUEST-EXITED $?; sleep 30")
        try await guest.waitFor("Queue (0)", "Hana (host)", "● Gil")
        try await host.waitFor("● Gil")

        // Gil adds a song: it starts playing on both screens.
        try await guest.keys("a")
        try await guest.type("Harvest Moon - Neil Young")
        try await guest.keys("Enter")
        try await host.waitFor("▶ Harvest Moon — Neil Young", "added by Gil")
        try await guest.waitFor("▶ Harvest Moon — Neil Young")

        // Hana adds two more; Gil votes the second one up: it leads on both screens.
        try await host.keys("a")
        try await host.type("Second Song - Band")
        try await host.keys("Enter")
        try await host.waitFor("Second Song — Band")
        try await host.keys("a")
        try await host.type("Third Song - Band")
        try await host.keys("Enter")
        try await guest.waitFor("Second Song — Band", "Third Song — Band")
        try await guest.keys("Down")
        try await guest.keys("+")
        // The score and the new order are two events of one command: wait for both.
        try await host.waitUntil("Third Song leading with 1 vote") { screen in
            let first = screen.split(separator: "\n").first { $0.contains("Song — Band") }
            return first?.contains("Third Song") == true && first?.contains("1 vote") == true
        }
        try await guest.waitFor("▲+1")

        // Gil asks to skip; Hana skips: the voted song plays everywhere.
        try await guest.keys("s")
        try await host.waitFor("Skip requests 1/2")
        try await host.keys("n")
        try await host.waitFor("▶ Third Song — Band")
        try await guest.waitFor("▶ Third Song — Band")
        // What played, and who skipped it, on both screens.
        try await guest.waitFor("Played: Harvest Moon (skipped by Hana)")
        try await host.waitFor("Played: Harvest Moon (skipped by you)")

        // Hana seeks ten seconds ahead, twice: Gil's bar follows.
        try await host.keys(".")
        try await guest.waitFor("] 0:1")
        try await host.keys(".")
        try await guest.waitFor("] 0:2")
        try await host.keys(",")
        try await guest.waitFor("] 0:1")

        // A resized terminal is redrawn to its new width.
        try await Pane.tmux(["resize-window", "-t", host.name, "-x", "72", "-y", "30"])
        let narrow = try await host.waitFor(String(repeating: "─", count: 72))
        #expect(!narrow.contains(String(repeating: "─", count: 73)))

        // Seeking is the host's: Gil's "," sends nothing (the search below would show a refusal).
        try await guest.keys(",")

        // Gil searches the library: a miss says so, and Delete is no text.
        try await guest.keys("/")
        try await guest.type("zzzz")
        try await guest.keys("Enter")
        try await guest.waitFor("Nothing in the library matches \"zzzz\".")
        try await guest.keys("Escape")
        try await guest.keys("/")
        try await guest.type("caf")
        try await guest.keys("DC")
        try await guest.type("e")
        try await guest.keys("Enter")
        try await guest.waitFor("› Café au Lait — The OpenJam Demo Band")
        try await guest.keys("Enter")
        try await host.waitFor("Café au Lait — The OpenJam Demo Band")
        #expect(!(try await guest.screen).contains("refused"))

        // " - " parts title from artist; the hyphen in the title stays.
        try await guest.keys("a")
        try await guest.type("Anti-Hero - Taylor Swift")
        try await guest.keys("Enter")
        try await host.waitFor("Anti-Hero — Taylor Swift")

        // Quitting leaves the terminal as it was: the shell's line shows, not the live screen.
        try await guest.keys("q")
        let after = try await guest.waitFor("GUEST-EXITED 0")
        #expect(!after.contains("Members:"))
    }
}

extension TerminalClientTests.Pane {
    /// A handle on an existing tmux session (for cleanup).
    init(nameOnly: String) {
        self.name = nameOnly
    }
}
