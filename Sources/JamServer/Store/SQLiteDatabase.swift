import VaporCSQLite

/// A SQLite connection used from one thread at a time, on the C API of the SQLite that
/// sqlite-nio vendors. Not thread-safe: each connection is confined to one thread, or to a
/// lock (hence `@unchecked Sendable`).
///
/// The store needs what sqlite-nio's asynchronous API does not offer: prepared statements
/// kept across group commits and a whole transaction run in one job on the store's own
/// thread (sqlite-nio prepares every query anew and hops to a thread pool and back for each).
final class SQLiteDatabase: @unchecked Sendable {
    private(set) var handle: OpaquePointer?
    private var statements: [String: SQLiteStatement] = [:]

    /// Opens (creating when `create`) the database at `path`.
    init(path: String, create: Bool = true) throws(SQLiteFailure) {
        var flags = SQLITE_OPEN_READWRITE
        if create { flags |= SQLITE_OPEN_CREATE }
        flags |= SQLITE_OPEN_NOMUTEX
        let status = sqlite_nio_sqlite3_open_v2(path, &handle, flags, nil)
        guard status == SQLITE_OK else {
            let failure = SQLiteFailure(status: status, message: handle.map { String(cString: sqlite_nio_sqlite3_errmsg($0)) } ?? "cannot open", sql: nil)
            sqlite_nio_sqlite3_close_v2(handle)
            handle = nil
            throw failure
        }
        sqlite_nio_sqlite3_extended_result_codes(handle, 1)
    }

    deinit { close() }

    /// Finalizes every statement and closes the connection.
    func close() {
        for statement in statements.values { statement.finalize() }
        statements.removeAll()
        if let handle { sqlite_nio_sqlite3_close_v2(handle) }
        handle = nil
    }

    /// Runs SQL without results (several statements allowed).
    func execute(_ sql: String) throws(SQLiteFailure) {
        var message: UnsafeMutablePointer<CChar>?
        let status = sqlite_nio_sqlite3_exec(handle, sql, nil, nil, &message)
        guard status == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? errorMessage
            sqlite_nio_sqlite3_free(message)
            throw SQLiteFailure(status: status, message: text, sql: sql)
        }
    }

    /// The prepared statement for `sql`, kept for the life of the connection.
    func statement(_ sql: String) throws(SQLiteFailure) -> SQLiteStatement {
        if let cached = statements[sql] {
            cached.reset()
            return cached
        }
        var raw: OpaquePointer?
        let status = sqlite_nio_sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &raw, nil)
        guard status == SQLITE_OK, let raw else { throw SQLiteFailure(status: status, message: errorMessage, sql: sql) }
        let statement = SQLiteStatement(raw: raw, database: self, sql: sql)
        statements[sql] = statement
        return statement
    }

    /// Runs one statement with `binds` and returns its rows, read by `row`.
    func query<Row>(_ sql: String, _ binds: [SQLiteValue] = [], row: (SQLiteStatement) throws -> Row) throws -> [Row] {
        let statement = try statement(sql)
        defer { statement.reset() }
        try statement.bind(binds)
        var rows: [Row] = []
        while try statement.step() { rows.append(try row(statement)) }
        return rows
    }

    /// Runs one statement with `binds`, ignoring any rows.
    func run(_ sql: String, _ binds: [SQLiteValue] = []) throws(SQLiteFailure) {
        let statement = try statement(sql)
        defer { statement.reset() }
        try statement.bind(binds)
        while try statement.step() {}
    }

    /// Runs `body` in one `BEGIN IMMEDIATE` … `COMMIT`, rolled back when it throws.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try within("BEGIN IMMEDIATE", body)
    }

    /// Runs `body`'s reads in one deferred transaction: every statement sees the database as
    /// its first did, whatever the writer commits meanwhile, and no write lock is taken.
    func readTransaction<T>(_ body: () throws -> T) throws -> T {
        try within("BEGIN", body)
    }

    private func within<T>(_ begin: String, _ body: () throws -> T) throws -> T {
        try run(begin)
        do {
            let result = try body()
            try run("COMMIT")
            return result
        } catch {
            if sqlite_nio_sqlite3_get_autocommit(handle) == 0 {
                _ = sqlite_nio_sqlite3_exec(handle, "ROLLBACK", nil, nil, nil)
            }
            throw error
        }
    }

    /// The write-ahead log's file as SQLite names it (after the database's resolved path).
    var logPath: String? {
        guard let database = sqlite_nio_sqlite3_db_filename(handle, "main"), let log = sqlite_nio_sqlite3_filename_wal(database) else { return nil }
        return String(cString: log)
    }

    /// Frames in the write-ahead log after this connection's last commit (once `trackLogSize()` ran).
    private(set) var logFrames: Int32 = 0

    /// Keeps `logFrames` up to date through SQLite's WAL hook (which also turns off its
    /// automatic checkpoint, the hook's default user).
    func trackLogSize() {
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite_nio_sqlite3_wal_hook(handle, { context, _, _, frames in
            guard let context else { return SQLITE_OK }
            Unmanaged<SQLiteDatabase>.fromOpaque(context).takeUnretainedValue().logFrames = frames
            return SQLITE_OK
        }, context)
    }

    /// One passive checkpoint (it never waits for a writer): the log's frames, and how many of
    /// them are now in the database.
    func checkpoint() throws(SQLiteFailure) -> (walPages: Int32, checkpointed: Int32) {
        var log: Int32 = 0
        var done: Int32 = 0
        let status = sqlite_nio_sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, &log, &done)
        guard status == SQLITE_OK || status == SQLITE_BUSY else { throw SQLiteFailure(status: status, message: errorMessage, sql: "checkpoint") }
        return (log, done)
    }

    var errorMessage: String { handle.map { String(cString: sqlite_nio_sqlite3_errmsg($0)) } ?? "closed" }
}

/// A value to bind or a column read.
enum SQLiteValue {
    case integer(Int64)
    case text(String)
    case blob([UInt8])
    case null
}

/// A prepared statement of `SQLiteDatabase`.
final class SQLiteStatement {
    private var raw: OpaquePointer?
    private unowned let database: SQLiteDatabase
    let sql: String

    init(raw: OpaquePointer, database: SQLiteDatabase, sql: String) {
        self.raw = raw
        self.database = database
        self.sql = sql
    }

    func finalize() {
        sqlite_nio_sqlite3_finalize(raw)
        raw = nil
    }

    func reset() {
        sqlite_nio_sqlite3_reset(raw)
        sqlite_nio_sqlite3_clear_bindings(raw)
    }

    func bind(_ values: [SQLiteValue]) throws(SQLiteFailure) {
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let status: Int32
            switch value {
            case .integer(let number): status = sqlite_nio_sqlite3_bind_int64(raw, index, number)
            case .text(let text): status = sqlite_nio_sqlite3_bind_text64(raw, index, text, UInt64(text.utf8.count), SQLiteStatement.transient, UInt8(SQLITE_UTF8))
            case .blob(let bytes):
                status = bytes.withUnsafeBytes { sqlite_nio_sqlite3_bind_blob64(raw, index, $0.baseAddress, UInt64($0.count), SQLiteStatement.transient) }
            case .null: status = sqlite_nio_sqlite3_bind_null(raw, index)
            }
            guard status == SQLITE_OK else { throw SQLiteFailure(status: status, message: database.errorMessage, sql: sql) }
        }
    }

    /// Steps once: true when a row is ready, false when the statement is done.
    func step() throws(SQLiteFailure) -> Bool {
        let status = sqlite_nio_sqlite3_step(raw)
        switch status {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw SQLiteFailure(status: status, message: database.errorMessage, sql: sql)
        }
    }

    func isNull(_ column: Int32) -> Bool { sqlite_nio_sqlite3_column_type(raw, column) == SQLITE_NULL }

    func integer(_ column: Int32) -> Int64 { sqlite_nio_sqlite3_column_int64(raw, column) }

    func optionalInteger(_ column: Int32) -> Int64? { isNull(column) ? nil : integer(column) }

    func text(_ column: Int32) -> String {
        guard let pointer = sqlite_nio_sqlite3_column_text(raw, column) else { return "" }
        return String(cString: pointer)
    }

    func optionalText(_ column: Int32) -> String? { isNull(column) ? nil : text(column) }

    func blob(_ column: Int32) -> [UInt8] {
        let count = Int(sqlite_nio_sqlite3_column_bytes(raw, column))
        guard count > 0, let pointer = sqlite_nio_sqlite3_column_blob(raw, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }


    /// SQLite copies bound values before the call returns.
    nonisolated(unsafe) static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}

/// A SQLite call that failed, with its status and message.
struct SQLiteFailure: Error, CustomStringConvertible {
    let status: Int32
    let message: String
    let sql: String?

    var description: String {
        "SQLite error \(status): \(message)" + (sql.map { " (in \($0.prefix(120)))" } ?? "")
    }
}
