import ArgumentParser
import Foundation
import JamClient
import JamClientNIO
import JamProtocol

/// Options shared by `jam host` and `jam join`.
struct ClientOptions: ParsableArguments {
    @Option(help: "The OpenJam server (JAM_SERVER).")
    var server: String?

    @Option(help: "Your display name (JAM_NAME; default: your user name).")
    var name: String?

    func resolve() throws -> (URL, String) {
        let environment = ProcessInfo.processInfo.environment
        let text = server ?? environment["JAM_SERVER"] ?? "http://127.0.0.1:8080"
        guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw ValidationError("--server must be an http(s) URL, got \"\(text)\"")
        }
        let display = name ?? environment["JAM_NAME"] ?? environment["USER"] ?? "Guest"
        return (url, display)
    }
}

/// Signs a terminal in: as the member it was on that server under the same name (its saved
/// token, refreshed when due), else as a new guest, whose sign-in is then saved.
struct TerminalSignIn {
    let server: URL
    let name: String
    let saved = SavedIdentities.standard()

    /// The API with a token, and who it names.
    func signIn() async throws -> (JamAPI, UserID) {
        if let saved, let entry = try saved.load()[SavedIdentities.key(server)], entry.displayName == name {
            var api = JamAPI(server: server, token: entry.token, tokenRefreshAt: entry.tokenRefreshAt)
            guard api.tokenRefreshIsDue else { return (api, entry.userId) }
            let refreshed: Result<GuestAuthResponse, JamError>
            do throws(JamError) {
                refreshed = .success(try await api.refreshToken())
            } catch {
                refreshed = .failure(error)
            }
            switch refreshed {
            case .success(let fresh):
                keepOrSay(fresh, refreshAt: api.tokenRefreshAt)
                return (api, entry.userId)
            case .failure(let error) where error.code == .unauthorized:
                break  // Expired, or signed by another server: a new guest it is.
            case .failure(let error) where [.unavailable, .rateLimited, .internal].contains(error.code):
                return (api, entry.userId)  // Unreachable or busy now: the saved token may well still be valid.
            case .failure(let error):
                throw error
            }
        }
        return try await signInAnew()
    }

    /// A new guest identity, saved for next time.
    func signInAnew() async throws -> (JamAPI, UserID) {
        var api = JamAPI(server: server)
        let identity = try await api.signIn(displayName: name)
        keepOrSay(identity, refreshAt: api.tokenRefreshAt)
        return (api, identity.userId)
    }

    /// Saves a token the server gave, so the next `jam host` or `jam join` is this member.
    func keep(_ answer: GuestAuthResponse, refreshAt: Millis?) throws {
        try saved?.save(
            SavedIdentities.Entry(userId: answer.userId, displayName: answer.displayName, token: answer.token, tokenRefreshAt: refreshAt),
            for: server)
    }

    /// Saves it before the screen starts; a folder that takes no files (read-only, full)
    /// costs only the coming back, so it is said and the session goes on.
    private func keepOrSay(_ answer: GuestAuthResponse, refreshAt: Millis?) {
        do {
            try keep(answer, refreshAt: refreshAt)
        } catch {
            FileHandle.standardError.write(Data("jam: the sign-in is not kept for next time: \(error)\n".utf8))
        }
    }

    /// Runs `call` signed in; a saved token the server refuses (another secret, say) is
    /// replaced by a new guest once.
    func run<T>(_ call: (JamAPI) async throws(JamError) -> T) async throws -> (JamAPI, UserID, T) {
        var (api, me) = try await signIn()
        let first: Result<T, JamError>
        do throws(JamError) {
            first = .success(try await call(api))
        } catch {
            first = .failure(error)
        }
        switch first {
        case .success(let value):
            return (api, me, value)
        case .failure(let error) where error.code == .unauthorized:
            (api, me) = try await signInAnew()
            return (api, me, try await call(api))
        case .failure(let error):
            throw error
        }
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
        let (api, me, view) = try await signIn.run { api throws(JamError) in
            try await api.createSession(CreateSessionRequest(name: "\(name)'s session"))
        }
        let link = api.joinLink(code: view.session.joinCode).absoluteString
        let invite = ScreenModel.Invite(code: view.session.joinCode, link: link, qrLines: InviteCode.lines(for: link))
        try await LiveSession.show(api: api, view: view, me: me, invite: invite, startWithInvite: true, signIn: signIn)
    }
}

/// `jam join CODE`: joins a session and shows it live.
struct Join: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Join a session by its code and show it live.")

    @Argument(help: "The join code.")
    var code: String

    @OptionGroup var options: ClientOptions

    func run() async throws {
        let (server, name) = try options.resolve()
        // Before joining: a member who can never see the session would be counted in it.
        try LiveSession.requireTerminal("jam join")
        let signIn = TerminalSignIn(server: server, name: name)
        let (api, me, view) = try await signIn.run { api throws(JamError) in try await api.join(code: code) }
        let link = api.joinLink(code: view.session.joinCode).absoluteString
        let invite = ScreenModel.Invite(code: view.session.joinCode, link: link, qrLines: InviteCode.lines(for: link))
        try await LiveSession.show(api: api, view: view, me: me, invite: invite, startWithInvite: false, signIn: signIn)
    }
}

/// Starts the live screen for a member.
enum LiveSession {
    /// Refuses to go on without a terminal to show the session on.
    static func requireTerminal(_ command: String) throws {
        guard Terminal.isInteractive else { throw ValidationError("\(command) shows the session live and needs a terminal") }
    }

    /// Shows the live screen; after a connection that failed, the process exits with 1.
    static func show(api: JamAPI, view: SessionView, me: UserID, invite: ScreenModel.Invite, startWithInvite: Bool, signIn: TerminalSignIn) async throws {
        let participant = Participant(api: api, sessionId: view.session.id, me: me, transport: NIOWebSocketTransport())
        let screen = LiveScreen(
            participant: participant, api: api, me: me, invite: invite, startWithInvite: startWithInvite,
            // A token the connection refreshed is the one the next run signs in with; the
            // screen has no room to say that it could not be kept (the old one still works
            // until it expires).
            keepToken: { answer, refreshAt in try? signIn.keep(answer, refreshAt: refreshAt) })
        let ending = try await screen.run()
        // A closed terminal refuses every write (EIO): FileHandle's write would trap on it,
        // and the crash report then kept the process alive for seconds.
        switch ending {
        case .hungUp:
            return
        case .quit:
            Terminal().write(TerminalText.safe("Left the live screen of \(view.session.name) (code \(view.session.joinCode)); `jam join \(view.session.joinCode)` opens it again.") + "\n")
        case .failed(let reason):
            Terminal().write(TerminalText.safe("Left the live screen of \(view.session.name) (code \(view.session.joinCode)): \(reason).") + "\n")
            throw ExitCode.failure
        }
    }
}
