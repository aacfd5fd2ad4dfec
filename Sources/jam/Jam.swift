import ArgumentParser

/// The `jam` command line.
@main
struct Jam: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jam",
        abstract: "OpenJam: listen together — a session server, and clients for it.",
        subcommands: [Serve.self, Host.self, Join.self, Library.self]
    )
}
