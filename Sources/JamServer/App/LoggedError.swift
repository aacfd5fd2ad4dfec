import Logging
import PostgresNIO

extension Logger.MetadataValue {
    /// `error` as the server's log shows it.
    ///
    /// PostgresNIO's `PSQLError` describes itself in one generic line, lest its details reach
    /// users through a careless response; the operator's log needs the database's own words
    /// (its SQLSTATE, message and hint), and never the statement or the data: the detail
    /// line is left out, as it quotes rows and keys ("Failing row contains …"), and so is a
    /// data exception's message (class 22: "invalid input syntax for type uuid: …").
    package static func loggable(_ error: any Error) -> Self {
        guard let failure = error as? PSQLError else { return .string("\(error)") }
        var parts = ["PostgreSQL \(failure.code)"]
        if let info = failure.serverInfo {
            let state = info[.sqlState]
            if let state { parts.append("SQLSTATE \(state)") }
            // A data exception's message quotes the value it could not take.
            if let message = info[.message], state?.hasPrefix("22") != true { parts.append(message) }
            if let hint = info[.hint] { parts.append("hint: \(hint)") }
        }
        if let underlying = failure.underlying { parts.append("\(underlying)") }
        return .string(parts.joined(separator: "; "))
    }
}
