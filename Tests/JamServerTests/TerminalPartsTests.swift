import ArgumentParser
import Foundation
import JamProtocol
import JamTestSupport
import Testing

@testable import jam

/// The terminal client's parts that need no terminal: what may reach the screen, and the
/// sign-ins it keeps.
@Suite struct TerminalPartsTests {
    @Test func textFromAServerCannotSteerTheTerminalWhileTheScreensColoursStay() {
        // A clipboard write (OSC 52), a screen clear, a C1 control sequence, a tab.
        let hostile = "Song\u{1B}]52;c;ZXZpbA==\u{07} by \u{1B}[2J\u{1B}[HBand\u{9B}31m\tend"
        #expect(TerminalText.safe(hostile) == "Song]52;c;ZXZpbA== by [2J[HBand31m end")
        let coloured = "\u{1B}[32m●\u{1B}[0m Hana \u{1B}[30;107m▀▄\u{1B}[0m"
        #expect(TerminalText.safe(coloured) == coloured)
        // Colours the screen never writes come from a server: hidden text, black on black, blinking.
        let hiding = "Song\u{1B}[8m secret\u{1B}[0m \u{1B}[30;40mdark \u{1B}[5mblink"
        #expect(TerminalText.safe(hiding) == "Song[8m secret\u{1B}[0m [30;40mdark [5mblink")
        #expect(TerminalText.safe("cut short \u{1B}[32") == "cut short [32")
    }

    @Test func aNameIsTakenAsTheServerWillTakeItOrRefusedBeforeAnythingHappens() throws {
        // Trimmed, so the sign-in saved under it is found again next time.
        let spaced = try ClientOptions.parse(["--server", "http://127.0.0.1:9", "--name", "  Ann "])
        #expect(try spaced.resolve().1 == "Ann")
        for bad in ["   ", "a\tb"] {
            let options = try ClientOptions.parse(["--server", "http://127.0.0.1:9", "--name", bad])
            #expect(throws: ValidationError.self) { try options.resolve() }
        }
        // A name from the environment is refused under the name it came by.
        let unnamed = try ClientOptions.parse(["--server", "http://127.0.0.1:9"])
        for (environment, said) in [(["JAM_NAME": "a\tb"], "JAM_NAME"), (["USER": "a\tb"], "USER")] {
            #expect {
                try unnamed.resolve(environment: environment)
            } throws: { error in
                "\(error)".contains(said) && !"\(error)".contains("--name")
            }
        }
    }

    @Test func aServerAddressWithAPathOrQueryIsRefusedRatherThanDropped() throws {
        for good in ["http://127.0.0.1:9", "https://jam.example/", "http://[::1]:8080"] {
            #expect(try ClientOptions.parse(["--server", good, "--name", "Ann"]).resolve().0.absoluteString == good)
        }
        for bad in ["http://127.0.0.1:9/openjam", "http://127.0.0.1:9/?x=1", "http://127.0.0.1:9#top", "http://me@127.0.0.1:9", "ftp://127.0.0.1"] {
            let options = try ClientOptions.parse(["--server", bad, "--name", "Ann"])
            #expect {
                try options.resolve()
            } throws: { error in
                "\(error)".contains("--server must be") && "\(error)".contains(bad)
            }
        }
        // An invite link's own path is its code's; the server it names is refused the same way.
        let (linked, code) = try Join.invite("http://127.0.0.1:9/openjam/j/ABC123", server: nil)
        #expect(code == "ABC123")
        #expect(throws: ValidationError.self) { try ClientOptions.parse([]).resolve(linked: linked) }
    }

    @Test func aServerOnEveryInterfaceSaysWhereOtherDevicesOpenIt() {
        let addresses = ["127.0.0.1", "192.168.1.20", "169.254.3.4", "10.0.0.5", "192.168.1.20", "::1", "fe80::1", "2001:db8::7"]
        #expect(Serve.linksForOtherDevices(host: "0.0.0.0", port: 8080, addresses: addresses) == [
            "http://192.168.1.20:8080", "http://10.0.0.5:8080",
        ])
        #expect(Serve.linksForOtherDevices(host: "::", port: 9000, addresses: addresses) == [
            "http://192.168.1.20:9000", "http://10.0.0.5:9000", "http://[2001:db8::7]:9000",
        ])
        // Bound to one address, the listening line is the link already.
        #expect(Serve.linksForOtherDevices(host: "127.0.0.1", port: 8080, addresses: addresses).isEmpty)
        #expect(Serve.linksForOtherDevices(host: "192.168.1.20", port: 8080, addresses: addresses).isEmpty)
    }

    /// Tests/Fixtures/ClientParity/invite-links.json, which the web page's invite panel passes too.
    struct InviteLinkFixture: Decodable {
        struct Case: Decodable {
            let link: String
            let onlyHere: Bool
        }
        let cases: [Case]
    }

    @Test func anInviteToThisComputerOnlySaysSoAsTheWebPageDoes() throws {
        // #filePath, not bundle resources: the same file the browser test reads.
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/ClientParity/invite-links.json")
        let fixture = try JSONDecoder().decode(InviteLinkFixture.self, from: Data(contentsOf: url))
        #expect(fixture.cases.count >= 9)
        for c in fixture.cases {
            #expect(ScreenModel.Invite(code: "ABC234", link: c.link, qrLines: []).linksOnlyHere == c.onlyHere, "\(c.link)")
        }
    }

    @Test func signInsAreKeptPerServerAndNameForTheirOwnerOnly() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("jam-identities-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        let saved = try #require(SavedIdentities.standard(["XDG_STATE_HOME": folder.path, "HOME": "/home/ann"]))
        #expect(saved.file.path == folder.appendingPathComponent("openjam/identities.json").path)
        #expect(SavedIdentities.standard(["HOME": "/home/ann"])?.file.path == "/home/ann/.local/state/openjam/identities.json")
        #expect(SavedIdentities.standard(["XDG_STATE_HOME": "relative"]).map(\.file) == nil, "a relative state folder is not one")
        #expect(try saved.load().isEmpty, "no file yet: nothing saved")

        let ann = SavedIdentities.Entry(userId: "user-ann", displayName: "Ann", token: "token-1", tokenRefreshAt: 5_000)
        try saved.save(ann, for: try #require(URL(string: "http://127.0.0.1:8080/")))
        try saved.save(
            SavedIdentities.Entry(userId: "user-bo", displayName: "Bo", token: "token-2", tokenRefreshAt: nil),
            for: try #require(URL(string: "https://jam.example")))
        let loaded = try saved.load()
        #expect(loaded.count == 2)
        #expect(loaded["http://127.0.0.1:8080 Ann"] == ann, "the address without its trailing slash, and the name, are the key")
        let local = try #require(URL(string: "http://127.0.0.1:8080"))
        #expect(try saved.entry(for: local, name: "Ann") == ann)
        #expect(try saved.entry(for: local, name: "Bo") == nil)
        // Joining the same server as someone else keeps Ann's sign-in beside the new one.
        let otherBo = SavedIdentities.Entry(userId: "user-bo-2", displayName: "Bo", token: "token-3", tokenRefreshAt: nil)
        try saved.save(otherBo, for: local)
        #expect(try saved.entry(for: local, name: "Ann") == ann)
        #expect(try saved.entry(for: local, name: "Bo") == otherBo)
        #expect(try saved.load().count == 3)
        let permissions = try FileManager.default.attributesOfItem(atPath: saved.file.path)[.posixPermissions] as? NSNumber
        #expect(permissions?.intValue == 0o600, "a token is a credential")

        try Data("not json".utf8).write(to: saved.file)
        let error = #expect(throws: SavedIdentitiesError.self) { try saved.load() }
        #expect(error?.description.contains("delete it to sign in anew") == true, "\(String(describing: error))")
    }

    @Test func aSignInSavedBeforeNamesHadKeysIsStillFoundAndThenTakenOver() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("jam-identities-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        let saved = try #require(SavedIdentities.standard(["XDG_STATE_HOME": folder.path]))
        try FileManager.default.createDirectory(at: saved.file.deletingLastPathComponent(), withIntermediateDirectories: true)
        // As an earlier jam wrote it: one entry per server.
        let old = #"{"http://127.0.0.1:8080": {"userId": "user-ann", "displayName": "Ann", "token": "token-1"}}"#
        try Data(old.utf8).write(to: saved.file)
        let local = try #require(URL(string: "http://127.0.0.1:8080/"))
        #expect(try saved.entry(for: local, name: "Ann")?.token == "token-1")
        #expect(try saved.entry(for: local, name: "Bo") == nil, "another name is another member")
        try saved.save(SavedIdentities.Entry(userId: "user-bo", displayName: "Bo", token: "token-2", tokenRefreshAt: nil), for: local)
        #expect(try saved.entry(for: local, name: "Ann")?.token == "token-1", "Bo's sign-in leaves Ann's")
        try saved.save(SavedIdentities.Entry(userId: "user-ann", displayName: "Ann", token: "token-3", tokenRefreshAt: nil), for: local)
        #expect(try saved.load().keys.sorted() == ["http://127.0.0.1:8080 Ann", "http://127.0.0.1:8080 Bo"])
        #expect(try saved.entry(for: local, name: "Ann")?.token == "token-3")
    }

    @Test func jamProcessesSavingAtOnceKeepEveryServersSignIn() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("jam-identities-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        let saved = try #require(SavedIdentities.standard(["XDG_STATE_HOME": folder.path]))
        // Each save reads the file, adds its entry and writes the file back: without taking
        // turns, a write made from an older read drops the entries saved since.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for n in 0..<24 {
                group.addTask {
                    let entry = SavedIdentities.Entry(userId: JamID("user-\(n)"), displayName: "Member \(n)", token: "token-\(n)", tokenRefreshAt: nil)
                    try saved.save(entry, for: try #require(URL(string: "http://127.0.0.\(n + 1):8080")))
                }
            }
            try await group.waitForAll()
        }
        let loaded = try saved.load()
        #expect(loaded.count == 24, "\(loaded.keys.sorted())")
        #expect(loaded["http://127.0.0.7:8080 Member 6"]?.token == "token-6")
    }

    @Test func anUnreadableSignInFileIsLeftAloneAndTheTerminalSignsInAnew() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("jam-identities-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        let saved = try #require(SavedIdentities.standard(["XDG_STATE_HOME": folder.path]))
        try FileManager.default.createDirectory(at: saved.file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("not json".utf8).write(to: saved.file)
        try await TestServer.with { server in
            var signIn = TerminalSignIn(server: try #require(URL(string: server.baseURL)), name: "Ann")
            signIn.saved = saved
            let (api, me) = try await signIn.signIn()
            #expect(api.token != nil)
            #expect(try await api.createSession().members.map(\.userId) == [me], "a working sign-in")
        }
        #expect(try Data(contentsOf: saved.file) == Data("not json".utf8), "the file is its owner's to look at")
        // Said in words, not as the decoder's account of coding paths.
        #expect(throws: SavedIdentitiesError.self) { try saved.load() }
        do {
            _ = try saved.load()
        } catch {
            let said = "\(error)"
            #expect(said.contains("is not a sign-in file OpenJam can read") && !said.contains("DecodingError") && !said.contains("dataCorrupted"), "\(said)")
        }
    }

    @Test func anArrowKeyWhoseEscapeCameAloneIsStillTheArrow() throws {
        let decoder = KeyDecoder(environment: [:])
        #expect(decoder.feed([0x1B]) == [])
        let (read, wait) = try #require(decoder.waiting, "the ESC waits for its rest")
        #expect(wait == .milliseconds(200))
        #expect(decoder.feed(Array("[".utf8)[...]) == [])
        #expect(decoder.waiting == nil, "a sequence begun waits for its end however long it takes")
        #expect(decoder.timedOut(read) == [], "the wait was answered")
        #expect(decoder.feed(Array("A".utf8)[...]) == [.up])
    }

    @Test func anEscapeNothingFollowsIsEscapeOnceTheWaitEnds() throws {
        let decoder = KeyDecoder(environment: ["ESCDELAY": "1000"])
        #expect(decoder.feed([0x1B]) == [])
        let (read, wait) = try #require(decoder.waiting)
        #expect(wait == .milliseconds(1000), "ESCDELAY sets the wait, as for ncurses programs")
        #expect(decoder.timedOut(read) == [.escape])
        #expect(decoder.timedOut(read) == [], "one Escape for one ESC")
        #expect(decoder.feed([0x1B, 0x0D]) == [.escape, .enter], "Escape, then a key Alt does not send")
    }

    @Test func altWithAKeyIsNeitherEscapeNorTheKeyAndAltBackspaceDeletesAWord() {
        let decoder = KeyDecoder(environment: [:])
        // Alt+d: not Escape (closing a prompt), then d (removing the selected song).
        #expect(decoder.feed([0x1B, UInt8(ascii: "d")]) == [.alt("d")])
        #expect(decoder.feed([0x1B, 0x7F, 0x1B, 0x08, 0x17]) == [.deleteWord, .deleteWord, .deleteWord])
        #expect(decoder.feed([0x1B, 0x1B, UInt8(ascii: "[")]) == [.escape])
        #expect(decoder.feed(Array("A".utf8)[...]) == [.up], "Escape, then an arrow")
        // Escape pressed, then a key: two writes, so two reads, even within the wait.
        #expect(decoder.feed([0x1B]) == [])
        #expect(decoder.feed([UInt8(ascii: "a"), 0x1B]) == [.escape, .character("a")])
        #expect(decoder.feed([0x7F]) == [.escape, .backspace])
        // F1 and an arrow in application mode are keys of their own, no Alt+O and a letter.
        #expect(decoder.feed(Array("\u{1B}OP\u{1B}OAk".utf8)[...]) == [.up, .character("k")])
        // A full read may cut Alt+d in two: still Alt+d, not Escape and then d (remove).
        let full = [UInt8](repeating: UInt8(ascii: "x"), count: 255) + [0x1B]
        #expect(decoder.feed(full[...], filledTheRead: true).count == 255)
        #expect(decoder.feed([UInt8(ascii: "d")]) == [.alt("d")])
    }

    @Test func deletingAWordTakesItAndTheSpacesAfterItAsAShellDoes() {
        #expect(TerminalText.droppingLastWord("Song - Band") == "Song - ")
        #expect(TerminalText.droppingLastWord("Song - ") == "Song ")
        #expect(TerminalText.droppingLastWord("Café  ") == "")
        #expect(TerminalText.droppingLastWord("") == "")
    }

    @Test func anEscapeAndABracketThatStartNoSequenceAreEscapeAndABracket() {
        let decoder = KeyDecoder(environment: [:])
        #expect(decoder.feed(Array("\u{1B}[\u{1B}[A".utf8)[...]) == [.escape, .character("["), .up])
        #expect(decoder.feed(Array("\u{1B}[1\r".utf8)[...]) == [.escape, .character("["), .character("1"), .enter])
    }

    @Test func aLeadByteWithoutItsContinuationCannotSwallowTheEscapeAfterIt() {
        let decoder = KeyDecoder(environment: [:])
        // An 8-bit Alt+a, then a paste: the paste is still a paste.
        #expect(decoder.feed(Array([0xE1] + Array("\u{1B}[200~qL\u{1B}[201~".utf8))[...]) == [.paste("qL")])
        #expect(decoder.feed(Array("é".utf8).prefix(1)) == [])
        #expect(decoder.feed(Array("é".utf8).suffix(1)) == [.character("é")])
    }

    @Test func aPasteWhoseEndNeverComesEndsAfterAQuietWait() throws {
        let decoder = KeyDecoder(environment: [:])
        #expect(decoder.feed(Array("\u{1B}[200~Song\u{1B}[2".utf8)[...]) == [])
        let (read, wait) = try #require(decoder.waiting)
        #expect(wait == KeyDecoder.pasteWait)
        #expect(decoder.timedOut(read) == [.paste("Song\u{1B}[2")])
        #expect(decoder.feed(Array("q".utf8)[...]) == [.character("q")], "keys are keys again")
    }

    @Test func aBracketedPasteIsOneTextWhateverTheReadsItCameIn() {
        let decoder = KeyDecoder(environment: [:])
        #expect(decoder.feed(Array("j\u{1B}[200~Song - Art".utf8)[...]) == [.character("j")])
        #expect(decoder.feed(Array("ist\rq\u{1B}[2".utf8)[...]) == [])
        #expect(decoder.feed(Array("01~k".utf8)[...]) == [.paste("Song - Artist\rq"), .character("k")])
    }

    @Test func aRunawayPasteIsCutAtTheLimitAndWhatFollowsIsRead() {
        let decoder = KeyDecoder(environment: [:])
        let long = [UInt8](repeating: UInt8(ascii: "x"), count: KeyDecoder.pasteLimit + 5_000)
        #expect(decoder.feed(Array("\u{1B}[200~".utf8)[...]) == [])
        #expect(decoder.feed(long[...]) == [])
        let keys = decoder.feed(Array("\u{1B}[201~q".utf8)[...])
        #expect(keys == [.paste(String(repeating: "x", count: KeyDecoder.pasteLimit)), .character("q")])

        // Cut inside a character, the paste ends at the last whole one.
        let accents = Array(String(repeating: "é", count: KeyDecoder.pasteLimit).utf8)
        #expect(decoder.feed(Array("\u{1B}[200~x".utf8)[...] ) == [])
        #expect(decoder.feed(accents[...]) == [])
        let cut = decoder.feed(Array("\u{1B}[201~".utf8)[...])
        #expect(cut == [.paste("x" + String(repeating: "é", count: (KeyDecoder.pasteLimit - 1) / 2))])
    }

    @Test func pastedLinesBecomeOnePromptLineWithoutControlCharacters() {
        #expect(TerminalText.pastedLine("Pasted Song  \r\n  - The Band\n\n") == "Pasted Song - The Band")
        // Spaces at its two ends stay: " - Band" pasted after "Song" is "Song - Band".
        #expect(TerminalText.pastedLine(" - Band") == " - Band")
        #expect(TerminalText.pastedLine("Song \n") == "Song")
        #expect(TerminalText.pastedLine("Tab\there\u{1B}[2J\u{7}") == "Tab here[2J")
        #expect(TerminalText.pastedLine("\n\r\n") == "")
    }
}
