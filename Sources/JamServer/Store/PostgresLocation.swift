import Foundation
import JamProtocol
import NIOSSL
import PostgresNIO

/// Where a PostgreSQL store lives, read from a `postgres://user:password@host:port/database`
/// URL (`jam serve --database`, `JAM_DATABASE_URL`).
///
/// `?sslmode=` takes libpq's values with libpq's meaning: `disable` (the default: the usual
/// set-up is a database on the same host or a private network), `allow`/`prefer` (TLS when the
/// server offers it), `require` (TLS, certificate not checked), `verify-ca` (its chain checked
/// against the system's trust roots) or `verify-full` (chain and host name).
/// `?host=/run/postgresql` connects through a Unix socket folder, as libpq does. Any other
/// setting is refused.
public struct PostgresLocation: Sendable, Equatable {
    /// The URL as given, password hidden (for logs).
    public let redacted: String
    let host: String?
    let socketFolder: String?
    let port: Int
    let username: String
    let password: String?
    var database: String?
    let tlsMode: TLSMode

    /// libpq's modes, as far as they differ here: `prefer` and `require` encrypt without
    /// checking the certificate (so a self-signed one works, as with psql), `verifyCA` checks
    /// its chain and `verifyFull` its chain and host name.
    enum TLSMode: String, Sendable {
        case disable, prefer, require, verifyCA = "verify-ca", verifyFull = "verify-full"
    }

    /// Reads `url`; throws a clear error naming what is wrong.
    public init(url: String) throws(JamError) {
        guard let components = URLComponents(string: url),
            let scheme = components.scheme, scheme == "postgres" || scheme == "postgresql"
        else {
            throw JamError(.invalidField, "the database URL must look like postgres://user:password@host:5432/database")
        }
        let settings = try Self.settings(components.queryItems ?? [])
        let socketFolder = settings["host"]
        let host = components.host.flatMap { $0.isEmpty ? nil : $0 }
        guard host != nil || socketFolder != nil else { throw JamError(.invalidField, "the database URL names no host") }
        let port = components.port ?? 5432
        guard (1...65_535).contains(port) else { throw JamError(.invalidField, "the database URL's port \(port) is not a port") }
        guard let user = components.user, !user.isEmpty else { throw JamError(.invalidField, "the database URL names no user") }
        let mode = settings["sslmode"] ?? "disable"
        switch mode {
        case "disable": tlsMode = .disable
        case "allow", "prefer": tlsMode = .prefer
        case "require": tlsMode = .require
        case "verify-ca": tlsMode = .verifyCA
        case "verify-full": tlsMode = .verifyFull
        default: throw JamError(.invalidField, "sslmode \(mode) is not one of \(Self.sslModes.joined(separator: ", "))")
        }
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        self.host = host
        self.socketFolder = socketFolder
        self.port = port
        self.username = user.removingPercentEncoding ?? user
        self.password = components.password.map { $0.removingPercentEncoding ?? $0 }
        self.database = path.isEmpty ? nil : path
        var shown = components
        if shown.password != nil { shown.password = "***" }
        redacted = shown.string ?? "postgres://…"
    }

    /// The `sslmode` values the URL takes, as libpq spells them.
    static let sslModes = ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"]

    /// The URL's settings by name. A setting OpenJam does not read is refused rather than
    /// ignored: a misspelt `sslmode` (or another client's `ssl=true`) would otherwise leave the
    /// password on an unencrypted connection without a word.
    private static func settings(_ items: [URLQueryItem]) throws(JamError) -> [String: String] {
        var settings: [String: String] = [:]
        for item in items {
            guard item.name == "sslmode" || item.name == "host" else {
                throw JamError(.invalidField, "the database URL's setting \"\(item.name)\" is not one OpenJam reads (it reads sslmode and host)")
            }
            guard let value = item.value, !value.isEmpty else {
                throw JamError(.invalidField, "the database URL's setting \(item.name) has no value")
            }
            guard settings.updateValue(value, forKey: item.name) == nil else {
                throw JamError(.invalidField, "the database URL gives \(item.name) more than once")
            }
        }
        return settings
    }

    /// How much of the server's certificate TLS checks, by `sslmode` (the system's trust roots).
    var certificateVerification: CertificateVerification {
        switch tlsMode {
        case .disable, .prefer, .require: .none
        case .verifyCA: .noHostnameVerification
        case .verifyFull: .fullVerification
        }
    }

    private var tlsConfiguration: TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = certificateVerification
        return configuration
    }

    /// Settings every pooled connection starts with, so a node cut off by the network does not
    /// hold row locks for hours. A node cut off in the middle of a commit leaves its backend idle
    /// in the transaction, holding the rows it updated, and the node that takes its sessions over
    /// would wait on them with every commit behind: PostgreSQL ends such a transaction after 8 s
    /// (the lease limit, before any other node can take over), and short keepalives let it
    /// notice the dead peer of an idle connection as the lease connection does. (The pool's own
    /// keep-alive only asks connections that are not in use.)
    static let deadPeerSettings: [(String, String)] = [
        ("idle_in_transaction_session_timeout", "8000"),
        ("tcp_keepalives_idle", "5"), ("tcp_keepalives_interval", "1"), ("tcp_keepalives_count", "5"),
    ]

    /// The client configuration postgres-nio takes.
    var clientConfiguration: PostgresClient.Configuration {
        var configuration: PostgresClient.Configuration
        if let socketFolder {
            configuration = .init(
                unixSocketPath: "\(socketFolder)/.s.PGSQL.\(port)", username: username, password: password, database: database)
        } else {
            let tls: PostgresClient.Configuration.TLS
            switch tlsMode {
            case .disable: tls = .disable
            case .prefer: tls = .prefer(tlsConfiguration)
            case .require, .verifyCA, .verifyFull: tls = .require(tlsConfiguration)
            }
            configuration = .init(host: host ?? "localhost", port: port, username: username, password: password, database: database, tls: tls)
        }
        configuration.options.connectTimeout = .seconds(3)
        configuration.options.keepAliveBehavior = .init(frequency: .seconds(5))
        configuration.options.additionalStartupParameters = Self.deadPeerSettings
        return configuration
    }

    /// The location as a URL again, password included (to hand to another process).
    package var url: String {
        get throws(JamError) {
            var components = URLComponents()
            components.scheme = "postgres"
            components.user = username
            components.password = password
            components.host = host
            components.port = port
            components.path = "/" + (database ?? "")
            var query: [URLQueryItem] = [URLQueryItem(name: "sslmode", value: tlsMode.rawValue)]
            if let socketFolder { query.append(URLQueryItem(name: "host", value: socketFolder)) }
            components.queryItems = query
            guard let url = components.string else { throw JamError(.internal, "the database location does not make a URL") }
            return url
        }
    }

    /// The same server and user with another database (tests create one each).
    package func replacingDatabase(with name: String) throws(JamError) -> PostgresLocation {
        var copy = self
        copy.database = name
        return copy
    }

    /// The settings of a single connection (tests).
    package func testConnectionConfiguration() throws -> PostgresConnection.Configuration { try connectionConfiguration() }

    /// The settings of one dedicated connection (notifications, leases).
    func connectionConfiguration() throws -> PostgresConnection.Configuration {
        if let socketFolder {
            return .init(unixSocketPath: "\(socketFolder)/.s.PGSQL.\(port)", username: username, password: password, database: database)
        }
        let tls: PostgresConnection.Configuration.TLS
        switch tlsMode {
        case .disable: tls = .disable
        case .prefer: tls = .prefer(try .init(configuration: tlsConfiguration))
        case .require, .verifyCA, .verifyFull: tls = .require(try .init(configuration: tlsConfiguration))
        }
        return .init(host: host ?? "localhost", port: port, username: username, password: password, database: database, tls: tls)
    }
}
