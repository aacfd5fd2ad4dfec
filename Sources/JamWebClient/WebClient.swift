import Foundation

/// The browser client as built into the binary: its files, read from `Web/` when the
/// package was built (by the EmbedWebClient plugin), so a server needs no files beside it.
public enum WebClient {
    /// The client's files by their path below `Web/` (`index.html`, `js/main.js`, …).
    public static let files: [String: WebFile] = {
        var files: [String: WebFile] = [:]
        for file in embedded {
            // The generator wrote the base64 itself; a failure here is a build defect.
            guard let bytes = Data(base64Encoded: file.base64) else { preconditionFailure("embedded web file \(file.path) is not base64") }
            files[file.path] = WebFile(
                path: file.path, bytes: [UInt8](bytes), modificationDate: Date(timeIntervalSince1970: TimeInterval(file.modified)))
        }
        return files
    }()
}

/// One file of the browser client.
public struct WebFile: Sendable {
    /// Its path below the client's root, without a leading slash.
    public let path: String
    /// Its content.
    public let bytes: [UInt8]
    /// When the file was last changed before the build.
    public let modificationDate: Date
}

/// A file as the generator writes it into the binary.
struct EmbeddedWebFile {
    let path: String
    /// Seconds since 1970.
    let modified: Int
    let base64: String
}
