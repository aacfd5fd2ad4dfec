import Foundation
import JamTestSupport
import Testing

/// `jam serve` refuses settings it would otherwise use wrongly or ignore, naming the option
/// or variable it read, before it opens or listens on anything.
@Suite struct ServeOptionTests {
    static let goodSecret = "serve-option-secret-0123456789abcdef0123"

    @Test(arguments: [
        // A secret anybody can guess signs tokens for anybody.
        ([], ["JAM_SECRET": ""], "JAM_SECRET holds 0 characters; a token secret needs at least 32"),
        (["--secret", "short"], [:], "--secret holds 5 characters; a token secret needs at least 32"),
        (["--profile", "pirate-radio"], ["JWT_SECRET": "change-me"], "JWT_SECRET holds 9 characters; a token secret needs at least 32"),
        // Options another profile reads would be ignored without a word.
        (["--idle-timeout-ms=-5"], [:], "--idle-timeout-ms has no effect with the openjam profile: a PirateRadio setting"),
        (["--profile", "queueit", "--web-root", "/tmp"], [:], "--web-root has no effect with the queueit profile"),
        (["--profile", "pirate-radio", "--token-hours", "1"], ["JWT_SECRET": goodSecret], "--token-hours has no effect with the pirate-radio profile"),
        (["--profile", "pirate-radio", "--music", "/tmp"], ["JWT_SECRET": goodSecret], "--music has no effect with the pirate-radio profile: PirateRadio plays no library"),
        (["--profile", "pirate-radio", "--idle-timeout-ms", "0"], ["JWT_SECRET": goodSecret], "--idle-timeout-ms must be 1 to 31536000000 milliseconds (a year), got 0"),
        (["--ping-interval-ms", "1000"], [:], "--ping-interval-ms has no effect with the openjam profile: a PirateRadio setting"),
        (["--profile", "pirate-radio"], ["JWT_SECRET": goodSecret, "JAM_PR_PING_INTERVAL_MS": "0"],
         "JAM_PR_PING_INTERVAL_MS must be 1 to 31536000000 milliseconds (a year), got \"0\""),
        (["--profile", "pirate-radio", "--ping-interval-ms", "100"], ["JWT_SECRET": goodSecret],
         "--ping-interval-ms must be at least 250 milliseconds (a ping and its answer must fit in one), got 100"),
        // The variable that was read is the one named.
        ([], ["JAM_TOKEN_HOURS": "0"], "JAM_TOKEN_HOURS must be 1 to 8760, got 0"),
        ([], ["JAM_END_ABANDONED_HOURS": "9000"], "JAM_END_ABANDONED_HOURS must be 0 (never) to 8760, got 9000"),
        // Minutes go up to a year's worth of minutes, not of hours.
        (["--pause-unattended-minutes", "600000"], [:], "--pause-unattended-minutes must be 0 (never) to 525600, got 600000"),
        (["--port", "70000"], [:], "--port must be between 0 and 65535, got 70000"),
        // A folder for another profile is not this one's to check.
        (["--profile", "pirate-radio", "--port", "70000"], ["JWT_SECRET": goodSecret, "JAM_MUSIC": "/no/such/folder"], "--port must be between 0 and 65535, got 70000"),
        (["--host", ""], [:], "the address to listen on (--host, JAM_HOST) is empty"),
        // A session keeps its grace period in its stored rules, where a larger one overflowed.
        (["--profile", "pirate-radio", "--grace-period-ms", "9223372036854775807"], ["JWT_SECRET": goodSecret],
         "--grace-period-ms must be 1 to 31536000000 milliseconds (a year), got 9223372036854775807"),
        (["--profile", "pirate-radio"], ["JWT_SECRET": goodSecret, "JAM_PR_CODE_LIFETIME_MS": "31536000001"],
         "JAM_PR_CODE_LIFETIME_MS must be 1 to 31536000000 milliseconds (a year), got \"31536000001\""),
        // Only music folders are rescanned.
        (["--rescan-seconds", "60"], [:], "--rescan-seconds has no effect without music folders (--music, JAM_MUSIC)"),
        (["--music", "/tmp", "--rescan-seconds", "99999999999"], [:], "--rescan-seconds must be 0 (never) to 31536000 seconds, got \"99999999999\""),
        ([], ["JAM_RESCAN_SECONDS": "soon"], "JAM_RESCAN_SECONDS must be 0 (never) to 31536000 seconds, got \"soon\""),
        // Every realtime socket is a connection, so the connection cap holds the socket cap.
        (["--max-sockets-per-address", "2000", "--max-connections-per-address", "1024"], [:],
         "the connection cap per address (1024) is below the socket cap (2000), and every realtime socket is a connection"),
        ([], ["JAM_MAX_CONNECTIONS_PER_ADDRESS": "many"], "the connection cap per address must be 0 (no cap) to 1000000, got \"many\""),
        // The data folder is checked before anything is written to it.
        (["--data-dir", ""], [:], "the data folder (--data-dir) is empty"),
        (["--data-dir", "/etc/hostname"], [:], "data folder \"/etc/hostname\" (--data-dir) is a file, not a folder"),
    ] as [([String], [String: String], String)])
    func aBadSettingStopsTheServerNamingIt(arguments: [String], environment: [String: String], message: String) async throws {
        let refusal = try await ServerProcess.refusal(arguments, environment: environment)
        #expect(refusal.status.map { $0 != 0 } == true, "stderr: \(refusal.errors)")
        #expect(refusal.errors.contains(message), "stderr: \(refusal.errors)")
    }

    @Test func aRaisedSocketCapAloneRaisesTheConnectionCapWithIt() async throws {
        // Set before the connection cap existed: a server started with it keeps starting.
        let started = try await ServerProcess.refusal([], environment: ["JAM_MAX_SOCKETS_PER_ADDRESS": "5000"])
        #expect(started.status == nil, "the server started: \(started.errors)")
    }

    @Test func aMusicFolderThatIsAFileOrMissingStopsTheServer() async throws {
        let folder = TestServer.makeDataDirectory()
        let file = folder.appendingPathComponent("song.mp3")
        try Data("not a folder".utf8).write(to: file)
        let asFile = try await ServerProcess.refusal(["--music", file.path])
        #expect(asFile.errors.contains("music folder \"\(file.path)\" is a file, not a folder"), "stderr: \(asFile.errors)")
        let missing = try await ServerProcess.refusal(["--music", folder.appendingPathComponent("gone").path])
        #expect(missing.errors.contains("does not exist"), "stderr: \(missing.errors)")
    }

    @Test func aRescanIntervalFromTheEnvironmentWithoutMusicFoldersIsNoReasonToStop() async throws {
        // Set for the machine, as JAM_MUSIC may be: only its form is checked.
        let started = try await ServerProcess.refusal([], environment: ["JAM_RESCAN_SECONDS": "60"])
        #expect(started.status == nil, "the server started: \(started.errors)")
        let never = try await ServerProcess.refusal(["--rescan-seconds", "0"])
        #expect(never.status == nil, "0 (never) needs no folders: \(never.errors)")
    }

    @Test func aDataFolderThatCannotBeWrittenStopsTheServer() async throws {
        // Root writes any folder whatever its mode, so the server runs as nobody here.
        let folder = TestServer.makeDataDirectory().appendingPathComponent("readonly")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.path)
        let refusal = try await ServerProcess.refusal(["--data-dir", folder.path], asNobody: true)
        #expect(refusal.status.map { $0 != 0 } == true, "stderr: \(refusal.errors)")
        #expect(refusal.errors.contains("data folder \"\(folder.path)\" (--data-dir) cannot be written by this user"), "stderr: \(refusal.errors)")
    }

    @Test func aMusicFolderThatCannotBeListedStopsTheServer() async throws {
        // Root lists any folder whatever its mode, so the server runs as nobody here.
        let folder = TestServer.makeDataDirectory().appendingPathComponent("locked")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: folder.path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: folder.path) }
        let refusal = try await ServerProcess.refusal(["--music", folder.path], asNobody: true)
        #expect(refusal.status.map { $0 != 0 } == true, "stderr: \(refusal.errors)")
        #expect(refusal.errors.contains("music folder \"\(folder.path)\" cannot be read"), "stderr: \(refusal.errors)")
    }

    @Test func aLongEnoughSecretFromTheEnvironmentSignsTokens() async throws {
        // Only short secrets are refused: this one is used, and the server starts.
        let started = try await ServerProcess.refusal([], environment: ["JAM_SECRET": Self.goodSecret])
        #expect(started.status == nil, "stderr: \(started.errors)")
    }
}
