import Foundation
import JamTestSupport
import Synchronization
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

    @Test func processesStartingTogetherAllUseTheOneSecretThatWasMade() throws {
        for _ in 0..<20 {
            let folder = try Self.folder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let results = Mutex<[Result<String, any Error>]>([])
            DispatchQueue.concurrentPerform(iterations: 8) { _ in
                let result = Result { try SecretStore.loadOrCreate(in: folder) }
                results.withLock { $0.append(result) }
            }
            let secrets = try results.withLock { try $0.map { try $0.get() } }
            #expect(Set(secrets).count == 1 && secrets.count == 8)
            #expect(try String(contentsOf: folder.appendingPathComponent("secret"), encoding: .utf8) == secrets.first)
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["secret"], "no drafts left behind")
        }
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
