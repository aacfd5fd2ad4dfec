import Foundation

// Writes a Swift source file that holds the given files' bytes, for the EmbedWebClient
// build plugin. Usage: jam-embed OUTPUT ROOT FILE...; each file is named by its path
// below ROOT. Bytes go in as base64 string literals: a few hundred KiB of them compile
// in well under a second, where an array literal of the same bytes would not.

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count >= 3 else {
    FileHandle.standardError.write(Data("usage: jam-embed OUTPUT ROOT FILE...\n".utf8))
    exit(2)
}
let output = URL(fileURLWithPath: arguments[arguments.startIndex])
let root = URL(fileURLWithPath: arguments[arguments.startIndex + 1]).standardizedFileURL.path + "/"

var source = """
    // Generated at build time by jam-embed (the EmbedWebClient plugin) from the files
    // under Web/. Not kept in git: edit the files themselves.

    extension WebClient {
        static let embedded: [EmbeddedWebFile] = [

    """
for argument in arguments.dropFirst(2) {
    let path = URL(fileURLWithPath: argument).standardizedFileURL.path
    guard path.hasPrefix(root) else {
        FileHandle.standardError.write(Data("jam-embed: \(path) is not below \(root)\n".utf8))
        exit(1)
    }
    let bytes: Data
    let modified: Date
    do {
        bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        // Served as Last-Modified and in the entity tag, as a file on disk would be.
        modified = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date ?? Date(timeIntervalSince1970: 0)
    } catch {
        FileHandle.standardError.write(Data("jam-embed: cannot read \(path): \(error)\n".utf8))
        exit(1)
    }
    let name = String(path.dropFirst(root.count))
    source += "        EmbeddedWebFile(path: \"\(name)\", modified: \(Int(modified.timeIntervalSince1970)), base64: \"\(bytes.base64EncodedString())\"),\n"
}
source += "    ]\n}\n"
do {
    try Data(source.utf8).write(to: output, options: .atomic)
} catch {
    FileHandle.standardError.write(Data("jam-embed: cannot write \(output.path): \(error)\n".utf8))
    exit(1)
}
