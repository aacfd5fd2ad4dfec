import Logging
import PostgresNIO
import Testing

@testable import JamServer
import JamTestSupport

/// What the server's log says of a failure: the database's own words, not PostgresNIO's
/// generic line.
@Suite(.enabled(if: TestPostgres.enabled, "needs PostgreSQL (JAM_TEST_DATABASE_URL)"))
struct LoggedErrorTests {
    @Test func aStatementTheDatabaseRefusedIsLoggedByItsStateWithoutTheStatementsValues() async throws {
        let location = try await TestPostgres.freshDatabase()
        var text = ""
        try await location.withTestConnection { connection in
            do {
                try await connection.query("SELECT 1 / \(0) WHERE \("a secret value") <> ''", logger: Logger(label: "test"))
                throw TestFailure("the division by zero was answered")
            } catch let error as PSQLError {
                text = "\(Logger.MetadataValue.loggable(error))"
            }
        }
        #expect(text.contains("SQLSTATE 22012"), "\(text)")
        #expect(!text.contains("a secret value"), "a statement's values stay out of the log: \(text)")
    }

    @Test func aRefusedRowIsLoggedWithoutItsValues() async throws {
        let location = try await TestPostgres.freshDatabase()
        var text = ""
        try await location.withTestConnection { connection in
            let logger = Logger(label: "test")
            try await connection.query("CREATE TABLE codes (code text PRIMARY KEY)", logger: logger)
            try await connection.query("INSERT INTO codes VALUES (\("a secret code"))", logger: logger)
            do {
                try await connection.query("INSERT INTO codes VALUES (\("a secret code"))", logger: logger)
                throw TestFailure("the second row was stored")
            } catch let error as PSQLError {
                text = "\(Logger.MetadataValue.loggable(error))"
            }
        }
        #expect(text.contains("SQLSTATE 23505"), "\(text)")
        #expect(text.contains("duplicate key value violates unique constraint"), "the database's own words: \(text)")
        #expect(!text.contains("a secret code"), "PostgreSQL's detail line quotes the key: \(text)")
    }

    @Test func otherErrorsAreLoggedAsTheyDescribeThemselves() {
        #expect("\(Logger.MetadataValue.loggable(TestFailure("the disk is full")))".contains("the disk is full"))
    }
}
