import Foundation
import JamTestSupport
import Testing

/// `jam serve` refuses a bad option or environment variable at start, naming it and the value,
/// instead of running with something else than was asked for.
@Suite struct ServeOptionsTests {
    /// What `jam serve` printed when it refused to start with `environment` and `arguments`.
    static func refusal(environment: [String: String] = [:], arguments: [String] = []) async throws -> String {
        do {
            let server = try await ServerProcess(dataDirectory: TestServer.makeDataDirectory(), extraArguments: arguments, environment: environment)
            try await server.terminate()
            Issue.record("jam serve started with \(environment) \(arguments)")
            return ""
        } catch {
            return "\(error)"
        }
    }

    @Test(arguments: [
        ("JAM_PROFILE", "pirate_radio", #"unknown profile "pirate_radio"; use openjam, pirate-radio or queueit"#),
        ("JAM_DATABASE_URL", "postgres://u@localhost/x?ssl=true", #"the database URL's setting "ssl" is not one OpenJam reads (it reads sslmode and host)"#),
        ("JAM_SOCKET_LIMITS", "maybe", #"JAM_SOCKET_LIMITS must be on or off, got "maybe""#),
        ("JAM_COMMIT_LINGER_US", "-1", #"JAM_COMMIT_LINGER_US must be a number of microseconds, got "-1""#),
        ("JAM_FORWARD_WAIT_MS", "0", #"JAM_FORWARD_WAIT_MS must be a positive number of milliseconds, got "0""#),
        ("JAM_FORWARD_WAIT_MS", "1s", #"JAM_FORWARD_WAIT_MS must be a positive number of milliseconds, got "1s""#),
    ])
    func aBadVariableStopsTheStartAndSaysWhy(name: String, value: String, message: String) async throws {
        let printed = try await Self.refusal(environment: [name: value])
        #expect(printed.contains(message), "\(printed)")
    }

    @Test func anUnknownProfileOnTheCommandLineListsTheOnesThereAre() async throws {
        let printed = try await Self.refusal(arguments: ["--profile", "queue-it"])
        #expect(printed.contains("'queue-it' is invalid for '--profile"), "\(printed)")
        #expect(printed.contains("'openjam', 'pirate-radio' or 'queueit'"), "\(printed)")
    }
}
