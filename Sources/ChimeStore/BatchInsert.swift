import ChimeCore
import GRDB
import GRDBSQLite

/// The reminder INSERT of a batch, prepared once and bound through SQLite's C API, several rows
/// per statement.
///
/// Written by hand rather than through GRDB's `Statement.execute(arguments:)`: that boxes every
/// value in an existential and nests one closure per argument, and one statement per row pays
/// SQLite's per-execution setup (opening a cursor on the table and each index) 100,000 times.
/// Measured with `chime-bench schedule`, the two together put a 100,000-reminder batch over
/// its 1 s target. Everything else in the store goes through GRDB.
final class BatchInsert {
    /// One reminder row to insert.
    struct Row {
        var id: String
        var new: NewReminder
        var columns: TriggerColumns
        var nextDueMicros: Int64
    }

    /// The two statements a batch uses, prepared once for a stream of batches
    /// (``ReminderStore/scheduleStream(replace:now:systemZone:keepIds:name:produce:)``) rather than
    /// once for each of its chunks.
    struct Pair {
        var single: BatchInsert
        var chunk: BatchInsert

        init(_ db: Database) throws {
            single = try BatchInsert(db, rowsPerStatement: 1)
            chunk = try BatchInsert(db, rowsPerStatement: ReminderStore.insertChunk)
        }
    }

    static let columnCount: Int32 = 17
    private let statement: OpaquePointer
    private let connection: OpaquePointer
    /// How many rows one execution inserts.
    let rowsPerStatement: Int

    init(_ db: Database, rowsPerStatement: Int) throws {
        guard let connection = db.sqliteConnection else { throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "closed connection") }
        let tuple = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?)"
        let sql = """
            INSERT INTO reminder (id, title, body, kind, trigger_kind, at_us, times, days, zone, interval_s, anchor_us,
                                  state, created_us, next_due_us, urgency, sticky, icon, sound)
            VALUES \(Array(repeating: tuple, count: rowsPerStatement).joined(separator: ", "))
            """
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v2(connection, sql, -1, &statement, nil)
        guard code == SQLITE_OK, let statement else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(connection)))
        }
        self.statement = statement
        self.connection = connection
        self.rowsPerStatement = rowsPerStatement
    }

    deinit { sqlite3_finalize(statement) }

    /// Inserts exactly ``rowsPerStatement`` rows, all or none. Throws GRDB's `DatabaseError`
    /// (a taken pending id is SQLITE_CONSTRAINT_UNIQUE).
    func insert(_ rows: ArraySlice<Row>, createdMicros: Int64) throws {
        precondition(rows.count == rowsPerStatement)
        sqlite3_reset(statement)
        var base: Int32 = 0
        for row in rows {
            bind(base + 1, row.id)
            bind(base + 2, row.new.title)
            bind(base + 3, row.new.body)
            bind(base + 4, row.new.kind)
            bind(base + 5, row.columns.kind)
            bind(base + 6, row.columns.atMicros)
            bind(base + 7, row.columns.times)
            bind(base + 8, row.columns.days.map(Int64.init))
            bind(base + 9, row.columns.zone)
            bind(base + 10, row.columns.intervalSeconds)
            bind(base + 11, row.columns.anchorMicros)
            bind(base + 12, createdMicros)
            bind(base + 13, row.nextDueMicros)
            let presentation = row.new.presentation
            bind(base + 14, presentation.urgency?.rawValue)
            bind(base + 15, presentation.sticky ? 1 : 0)
            bind(base + 16, presentation.icon)
            bind(base + 17, presentation.sound)
            base += Self.columnCount
        }
        let code = sqlite3_step(statement)
        guard code == SQLITE_DONE else {
            let extended = sqlite3_extended_errcode(connection)
            let message = String(cString: sqlite3_errmsg(connection))
            sqlite3_reset(statement)
            throw DatabaseError(resultCode: ResultCode(rawValue: extended), message: message)
        }
    }

    private func bind(_ index: Int32, _ value: String?) {
        guard let value else {
            sqlite3_bind_null(statement, index)
            return
        }
        // SQLITE_TRANSIENT: SQLite copies the bytes before this returns.
        sqlite3_bind_text(statement, index, value, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
    }

    private func bind(_ index: Int32, _ value: Int64?) {
        if let value { sqlite3_bind_int64(statement, index, value) } else { sqlite3_bind_null(statement, index) }
    }
}
