import ArgumentParser
import Foundation
import JamClient
import JamClientNIO
import JamProtocol
import Logging

/// Options shared by `jam host` and `jam join`.
struct ClientOptions: ParsableArguments {
    @Option(help: "The OpenJam server's address, http(s)://host:port (JAM_SERVER).")
    var server: String?

    @Option(help: "Your display name (JAM_NAME; default: your user name).")
    var name: String?

    /// The server and the display name; `linked` is the server an invite link named.
    func resolve(linked: URL? = nil, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> (URL, String) {
        let (text, source) = linked.map { ($0.absoluteString, "the invite link's server") }
            ?? server.map { ($0, "--server") }
            ?? environment["JAM_SERVER"].map { ($0, "JAM_SERVER") }
            ?? ("http://127.0.0.1:8080", "the default server")
        guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw ValidationError("\(source) must be an http(s) URL, got \"\(text)\"")
        }
        // Requests go to /api/v1/… and /j/… of the server itself: a path, query or name in the
        // address would be dropped without a word, and another server than meant reached.
        guard url.path.isEmpty || url.path == "/", url.query == nil, url.fragment == nil, url.user == nil else {
            throw ValidationError("\(source) must be an address only (http://host:port), got \"\(text)\"")
        }
        let (given, field) =
            name.map { ($0, "--name") } ?? environment["JAM_NAME"].map { ($0, "JAM_NAME") } ?? environment["USER"].map { ($0, "USER (the default name)") }
            ?? ("Guest", "--name")
        // As the server will take it (trimmed), so the saved sign-in under it is found again.
        do throws(JamError) {
            return (url, try Validate.displayName(given, field: field))
        } catch {
            throw ValidationError(error.message)
        }
    }

    /// The command that opens session `code` again as this member: with the flags given here,
    /// since another server or name would be another member.
    func joinCommand(code: String, linked: URL? = nil) -> String {
        var words = ["jam", "join", code]
        if let server = linked?.absoluteString ?? server { words += ["--server", Self.quoted(server)] }
        if let name { words += ["--name", Self.quoted(name)] }
        return words.joined(separator: " ")
    }

    /// `text` as a POSIX shell reads it back: as is when plain, else in single quotes.
    static func quoted(_ text: String) -> String {
        let plain = !text.isEmpty && text.unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) || "-_./:@%+=,".unicodeScalars.contains($0) }
        return plain ? text : "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

/// `jam host`: opens a session and shows it live, with the invite first.
struct Host: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Open a session and show it live (join code, link and QR code first).")

    @OptionGroup var options: ClientOptions

    func run() async throws {
        let (server, name) = try options.resolve()
        // Before anything is created: a session nobody could ever host would be left behind.
        try LiveSession.requireTerminal("jam host")
        let signIn = TerminalSignIn(server: server, name: name)
        let (api, me, view) = try await signIn.runSaying { api throws(JamError) in
            try await api.createSession(CreateSessionRequest(name: "\(name)'s session"))
        }
        try await LiveSession.show(
            api: api, view: view, me: me, invite: ScreenModel.Invite(code: view.session.joinCode, api: api), startWithInvite: true, signIn: signIn,
            again: { options.joinCommand(code: $0) })
    }
}

/// `jam join CODE|LINK`: joins a session and shows it live.
struct Join: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Join a session by its code or invite link and show it live.")

    @Argument(help: "The join code, or the invite link (http://server/j/CODE), which names the server too.")
    var code: String

    @OptionGroup var options: ClientOptions

    func run() async throws {
        let (linked, code) = try Self.invite(code, server: options.server)
        let (server, name) = try options.resolve(linked: linked)
        // Before joining: a member who can never see the session would be counted in it.
        try LiveSession.requireTerminal("jam join")
        let signIn = TerminalSignIn(server: server, name: name)
        let (api, me, view) = try await signIn.runSaying { api throws(JamError) in try await api.join(code: code) }
        try await LiveSession.show(
            api: api, view: view, me: me, invite: ScreenModel.Invite(code: view.session.joinCode, api: api), startWithInvite: false, signIn: signIn,
            again: { options.joinCommand(code: $0, linked: linked) })
    }

    /// The server and code of an invite link (`http(s)://server/j/CODE`, as `jam host` and the
    /// web page show it), or `text` as a code. A link for another server than `--server` is
    /// refused rather than half followed.
    static func invite(_ text: String, server: String?) throws -> (server: URL?, code: String) {
        guard text.hasPrefix("http://") || text.hasPrefix("https://") else { return (nil, text) }
        guard let link = URLComponents(string: text), let host = link.host, !host.isEmpty else {
            throw ValidationError("\"\(text)\" is not an invite link (http://server/j/CODE)")
        }
        let parts = link.path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= 3, parts[parts.count - 2] == "j", !parts[parts.count - 1].isEmpty else {
            throw ValidationError("\"\(text)\" is not an invite link: its path must end in /j/CODE")
        }
        var base = URLComponents()
        base.scheme = link.scheme
        base.host = link.host
        base.port = link.port
        base.path = parts.dropLast(2).joined(separator: "/")
        guard let url = base.url else { throw ValidationError("\"\(text)\" is not an invite link (http://server/j/CODE)") }
        if let server, URL(string: server)?.absoluteString.trimmingSuffix("/") != url.absoluteString.trimmingSuffix("/") {
            throw ValidationError("the invite link is for \(url.absoluteString), but --server says \(server)")
        }
        return (url, String(parts[parts.count - 1]))
    }
}

extension String {
    /// The string without `suffix` at its end, if it ends so.
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}

/// Starts the live screen for a member.
enum LiveSession {
    /// Refuses to go on without a terminal to show the session on.
    static func requireTerminal(_ command: String) throws {
        guard Terminal.isInteractive else { throw ValidationError("\(command) shows the session live and needs a terminal") }
    }

    /// Shows the live screen; after a connection that failed, the process exits with 1.
    /// `again` makes the command that opens the session by a join code again, for the line
    /// left behind.
    static func show(
        api: JamAPI, view: SessionView, me: UserID, invite: ScreenModel.Invite, startWithInvite: Bool, signIn: TerminalSignIn, again: (String) -> String
    ) async throws {
        // The connection's log lines would land on the live screen, which shows its state itself.
        LoggingSystem.bootstrap { _ in SwiftLogNoOpLogHandler() }
        let participant = Participant(api: api, sessionId: view.session.id, me: me, transport: NIOWebSocketTransport())
        let screen = LiveScreen(
            participant: participant, api: api, sessionId: view.session.id, me: me, invite: invite, startWithInvite: startWithInvite,
            // A token the connection refreshed is the one the next run signs in with; the
            // screen has no room to say that it could not be kept (the old one still works
            // until it expires).
            keepToken: { answer, refreshAt in try? signIn.keep(answer, refreshAt: refreshAt) })
        let (ending, lastCode) = try await screen.run()
        let code = lastCode ?? view.session.joinCode
        // A closed terminal refuses every write (EIO): FileHandle's write would trap on it,
        // and the crash report then kept the process alive for seconds.
        switch ending {
        case .hungUp:
            return
        case .quit:
            Terminal().write(TerminalText.safe("Left the live screen of \(view.session.name) (code \(code)); `\(again(code))` opens it again.") + "\n")
        case .sessionEnded(let reason):
            Terminal().write(TerminalText.safe("\(view.session.name) has ended: \(reason).") + "\n")
        case .left:
            Terminal().write(TerminalText.safe("You left \(view.session.name).") + "\n")
        case .failed(let reason):
            Terminal().write(TerminalText.safe("Left the live screen of \(view.session.name) (code \(code)): \(reason).") + "\n")
            throw ExitCode.failure
        }
    }
}
