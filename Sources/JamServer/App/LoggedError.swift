import Logging
import PostgresNIO

extension Logger.MetadataValue {
    /// `error` as the server's log shows it.
    ///
    /// PostgresNIO's `PSQLError` describes itself in one generic line, lest its details reach
    /// users through a careless response; the operator's log needs the database's own words
    /// (its SQLSTATE, message and hint), and never the statement or the data: the detail
    /// line is left out, as it quotes rows and keys ("Failing row contains …").
    package static func loggable(_ error: any Error) -> Self {
        guard let failure = error as? PSQLError else { return .string("\(error)") }
        var parts = ["PostgreSQL \(failure.code)"]
        if let info = failure.serverInfo {
            if let state = info[.sqlState] { parts.append("SQLSTATE \(state)") }
            if let message = info[.message] { parts.append(message) }
            if let hint = info[.hint] { parts.append("hint: \(hint)") }
        }
        if let underlying = failure.underlying { parts.append("\(underlying)") }
        return .string(parts.joined(separator: "; "))
    }
}
