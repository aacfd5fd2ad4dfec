import Foundation
import JamTestSupport
import Testing

@testable import JamServer

/// The token secret kept in the data folder.
@Suite struct SecretStoreTests {
    static func folder() throws -> URL {
        try TestFolders.make("secret")
    }

    static func mode(_ file: URL) throws -> Int {
        try (FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    @Test func aNewSecretIsMadeReadableByTheOwnerOnlyAndKept() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let made = try SecretStore.loadOrCreate(in: folder)
        #expect(made.count == 64)
        #expect(try Self.mode(folder.appendingPathComponent("secret")) == 0o600)
        #expect(try SecretStore.loadOrCreate(in: folder) == made)
    }

    @Test func aSecretReadableByOthersIsTightened() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("secret")
        let secret = String(repeating: "s", count: 40)
        try Data("\(secret)\n".utf8).write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)
        #expect(try SecretStore.loadOrCreate(in: folder) == secret)
        #expect(try Self.mode(file) == 0o600)
    }

    @Test func aShortSecretStopsTheServerAndIsLeftAlone() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("secret")
        try Data("short".utf8).write(to: file)
        #expect {
            try SecretStore.loadOrCreate(in: folder)
        } throws: { error in
            "\(error)".contains("holds 5 characters, fewer than 32")
        }
        #expect(try String(contentsOf: file, encoding: .utf8) == "short")
    }
}
