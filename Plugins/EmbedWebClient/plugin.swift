import Foundation
import PackagePlugin

/// Builds the browser client into the target that applies it: every file under the
/// target's `Web/` folder becomes bytes in a generated Swift file, so `jam` needs no
/// resource bundle and runs from wherever it is copied.
@main
struct EmbedWebClient: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) async throws -> [Command] {
        guard let module = target as? SourceModuleTarget else { return [] }
        let root = module.directoryURL.appending(path: "Web")
        let files = try filesBelow(root)
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedWebFiles.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(files.count) web client files in \(target.name)",
                executable: try context.tool(named: "jam-embed").url,
                arguments: [output.path, root.path] + files.map(\.path),
                inputFiles: files,
                outputFiles: [output])
        ]
    }

    /// Every regular file below `root`, hidden files left out, in a stable order so the
    /// generated source only changes when a file does.
    private func filesBelow(_ root: URL) throws -> [URL] {
        guard let walker = FileManager.default.enumerator(
            at: root, includingPropertiesForKeys: [.isRegularFileKey], options: [.skipsHiddenFiles])
        else { throw EmbedError.noWebFolder(root.path) }
        var files: [URL] = []
        for case let url as URL in walker where try url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile == true {
            files.append(url)
        }
        guard !files.isEmpty else { throw EmbedError.noWebFolder(root.path) }
        return files.sorted { $0.path < $1.path }
    }
}

enum EmbedError: Error, CustomStringConvertible {
    case noWebFolder(String)

    var description: String {
        switch self {
        case .noWebFolder(let path): "no web client files at \(path)"
        }
    }
}
