import ArgumentParser
import Foundation
import JamClient
import JamProtocol

/// Signs a terminal in: as the member it was on that server under the same name (its saved
/// token, refreshed when due), else as a new guest, whose sign-in is then saved.
struct TerminalSignIn {
    let server: URL
    let name: String
    /// Where sign-ins are kept; none without a state or home folder.
    var saved = SavedIdentities.standard()

    /// The API with a token, and who it names.
    func signIn() async throws -> (JamAPI, UserID) {
        if let entry = savedEntry() {
            var api = JamAPI(server: server, token: entry.token, tokenRefreshAt: entry.tokenRefreshAt)
            guard api.tokenRefreshIsDue else { return (api, entry.userId) }
            // A Result rather than `catch let error as JamError where …`: Swift 6.3.1's SIL
            // ownership check crashes the compiler on that pattern here.
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

    /// The sign-in saved for this name on this server. A file that cannot be read stops nothing: it is
    /// said, left as it is for its owner to look at, and the terminal signs in anew.
    private func savedEntry() -> SavedIdentities.Entry? {
        guard let saved else { return nil }
        do {
            return try saved.entry(for: server, name: name)
        } catch {
            FileHandle.standardError.write(Data("jam: \(error); signing in as a new guest\n".utf8))
            return nil
        }
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
        let first: Result<T, JamError>  // A Result for the same compiler crash as in `signIn`.
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

extension TerminalSignIn {
    /// `run`, saying a refusal or an unreachable server in its own words ("jam: no session
    /// with code XYZ") and ending with exit code 1, rather than as the value ArgumentParser
    /// prints ("Error: notFound: …").
    func runSaying<T>(_ call: (JamAPI) async throws(JamError) -> T) async throws -> (JamAPI, UserID, T) {
        do {
            return try await run(call)
        } catch let error as JamError {
            FileHandle.standardError.write(Data("jam: \(TerminalText.safe(error.message))\n".utf8))
            throw ExitCode.failure
        }
    }
}
