import CLibpqLoader
import ChimeCore
import Foundation
import Synchronization

// The PostgreSQL store's client: libpq (PostgreSQL 15 docs, chapter 34), Debian's libpq5, the
// reference client every PostgreSQL tool links. What is written here is the thin part libpq leaves
// to its callers in any language: a statement with bound parameters (``PostgresQuery``, built by
// string interpolation), its rows read as text and decoded (``PostgresRow``), errors with their
// SQLSTATE (``PostgresError``), and the lock that lets several tasks share one connection
// (``PostgresConnection``). Calls are synchronous: the runner makes them on its own thread, as it
// makes SQLite's, each bounded by the server's statement and lock timeouts and the connection's
// TCP keepalives and user timeout (``PostgresConnectionOptions``).

/// libpq's functions, opened the first time a connection is made (CLibpqLoader, for why).
var pq: chime_libpq_api { chime_libpq().pointee }

/// A C string libpq returned (through the table its pointers are not annotated: nil reads as "").
func cString(_ pointer: UnsafePointer<CChar>?) -> String { pointer.map { String(cString: $0) } ?? "" }

/// An error from PostgreSQL or from the connection to it. Keeps the server's SQLSTATE (PostgreSQL
/// 15 docs, Appendix A) for callers that decide by it: 25006 (read-only), 23505 (unique), 57014
/// (cancelled), 08xxx (connection).
public struct PostgresError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// The server answered with an error (``sqlState`` says which).
        case server
        /// No connection could be made, or it broke during the statement.
        case connection
        /// A value read back was not of the type asked for.
        case decoding
    }

    public var kind: Kind
    /// The server's five-character SQLSTATE, for a server error.
    public var sqlState: String?
    /// One line: the server's primary message, or libpq's.
    public var message: String

    public init(_ kind: Kind, sqlState: String? = nil, _ message: String) {
        self.kind = kind
        self.sqlState = sqlState
        self.message = message.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }.joined(separator: "; ")
    }

    public var description: String {
        if let sqlState { return "SQLSTATE \(sqlState): \(message)" }
        return message
    }

    /// SQLSTATE 25006, read_only_sql_transaction: a standby, or a primary demoted by a failover.
    public var isReadOnly: Bool { sqlState == "25006" }
    /// SQLSTATE 57014, query_canceled: ``PostgresConnection/cancel()`` or the statement timeout.
    public var isCancelled: Bool { sqlState == "57014" }
}

/// A value bound to a statement's parameter: sent as text, with its type's OID (as the binary
/// client before it sent them), so that the server reads `$1 * interval '1 microsecond'` as it did.
public protocol PostgresEncodable {
    /// The text PostgreSQL reads the value from; nil is SQL NULL.
    var postgresText: String? { get }
    /// The type's OID (pg_type), or 0 to let the server infer it.
    static var postgresOID: UInt32 { get }
}

extension String: PostgresEncodable {
    public var postgresText: String? { self }
    public static var postgresOID: UInt32 { 25 }  // text
}

extension Int64: PostgresEncodable {
    public var postgresText: String? { String(self) }
    public static var postgresOID: UInt32 { 20 }  // int8
}

extension Int: PostgresEncodable {
    public var postgresText: String? { String(self) }
    public static var postgresOID: UInt32 { 20 }  // int8
}

extension Int32: PostgresEncodable {
    public var postgresText: String? { String(self) }
    public static var postgresOID: UInt32 { 23 }  // int4
}

extension Bool: PostgresEncodable {
    public var postgresText: String? { self ? "t" : "f" }
    public static var postgresOID: UInt32 { 16 }  // bool
}

extension Double: PostgresEncodable {
    public var postgresText: String? { String(self) }
    public static var postgresOID: UInt32 { 701 }  // float8
}

extension Optional: PostgresEncodable where Wrapped: PostgresEncodable {
    public var postgresText: String? { self?.postgresText }
    public static var postgresOID: UInt32 { Wrapped.postgresOID }
}

extension Array: PostgresEncodable where Element: PostgresArrayElement {
    /// An array literal (PostgreSQL 15 docs, 8.15.2 "Array Value Input"): each element quoted,
    /// with `"` and `\` escaped by a backslash.
    public var postgresText: String? {
        "{"
            + map { "\"" + $0.arrayText.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"" }
            .joined(separator: ",") + "}"
    }
    public static var postgresOID: UInt32 { Element.arrayOID }
}

/// An element of an array parameter.
public protocol PostgresArrayElement {
    var arrayText: String { get }
    static var arrayOID: UInt32 { get }
}

extension String: PostgresArrayElement {
    public var arrayText: String { self }
    public static var arrayOID: UInt32 { 1009 }  // text[]
}

extension Int64: PostgresArrayElement {
    public var arrayText: String { String(self) }
    public static var arrayOID: UInt32 { 1016 }  // int8[]
}

extension Int: PostgresArrayElement {
    public var arrayText: String { String(self) }
    public static var arrayOID: UInt32 { 1016 }  // int8[]
}

/// One statement and its parameters, written as SQL with the values interpolated: each
/// `\(value)` becomes a parameter (`$1`, `$2`, …), never text spliced into the SQL, so a title
/// or an id cannot change the statement; `\(unescaped: text)` splices `text` as SQL (column lists).
public struct PostgresQuery: Sendable, Hashable, ExpressibleByStringInterpolation {
    public var sql: String
    public var values: [String?]
    public var types: [UInt32]

    public init(unsafeSQL sql: String) {
        self.sql = sql
        self.values = []
        self.types = []
    }

    public init(stringLiteral value: String) { self.init(unsafeSQL: value) }

    public init(stringInterpolation: StringInterpolation) {
        self.sql = stringInterpolation.sql
        self.values = stringInterpolation.values
        self.types = stringInterpolation.types
    }

    public struct StringInterpolation: StringInterpolationProtocol {
        var sql = ""
        var values: [String?] = []
        var types: [UInt32] = []

        public init(literalCapacity: Int, interpolationCount: Int) {
            sql.reserveCapacity(literalCapacity + 4 * interpolationCount)
        }

        public mutating func appendLiteral(_ literal: String) { sql += literal }

        public mutating func appendInterpolation<Value: PostgresEncodable>(_ value: Value) {
            values.append(value.postgresText)
            types.append(Value.postgresOID)
            sql += "$\(values.count)"
        }

        /// An optional value: NULL when nil (its own overload, so that Swift's warning about
        /// interpolating an optional's debug description does not apply).
        public mutating func appendInterpolation<Value: PostgresEncodable>(_ value: Value?) {
            values.append(value?.postgresText)
            types.append(Value.postgresOID)
            sql += "$\(values.count)"
        }

        public mutating func appendInterpolation(unescaped text: String) { sql += text }
    }
}

/// A value read back from a row (sent as text by the server).
public protocol PostgresDecodable {
    /// - Parameter text: the column's text, nil for NULL.
    static func decode(postgresText text: String?, column: String) throws(PostgresError) -> Self
}

extension PostgresDecodable {
    static func required(_ text: String?, _ column: String) throws(PostgresError) -> String {
        guard let text else { throw PostgresError(.decoding, "column \(column) is NULL where a \(Self.self) was expected") }
        return text
    }

    static func bad(_ text: String, _ column: String) -> PostgresError {
        PostgresError(.decoding, "column \(column) holds '\(text.prefix(40))', not a \(Self.self)")
    }
}

extension String: PostgresDecodable {
    public static func decode(postgresText text: String?, column: String) throws(PostgresError) -> String {
        try required(text, column)
    }
}

extension Int64: PostgresDecodable {
    public static func decode(postgresText text: String?, column: String) throws(PostgresError) -> Int64 {
        let text = try required(text, column)
        guard let value = Int64(text) else { throw bad(text, column) }
        return value
    }
}

extension Int: PostgresDecodable {
    public static func decode(postgresText text: String?, column: String) throws(PostgresError) -> Int {
        let text = try required(text, column)
        guard let value = Int(text) else { throw bad(text, column) }
        return value
    }
}

extension Int32: PostgresDecodable {
    public static func decode(postgresText text: String?, column: String) throws(PostgresError) -> Int32 {
        let text = try required(text, column)
        guard let value = Int32(text) else { throw bad(text, column) }
        return value
    }
}

extension Double: PostgresDecodable {
    public static func decode(postgresText text: String?, column: String) throws(PostgresError) -> Double {
        let text = try required(text, column)
        guard let value = Double(text) else { throw bad(text, column) }
        return value
    }
}

extension Bool: PostgresDecodable {
    public static func decode(postgresText text: String?, column: String) throws(PostgresError) -> Bool {
        switch try required(text, column) {
        case "t": return true
        case "f": return false
        case let other: throw bad(other, column)
        }
    }
}

extension Optional: PostgresDecodable where Wrapped: PostgresDecodable {
    public static func decode(postgresText text: String?, column: String) throws(PostgresError) -> Wrapped? {
        guard let text else { return nil }
        return try Wrapped.decode(postgresText: text, column: column)
    }
}

/// A statement's result. libpq's PGresult is read-only once made and "can be passed around
/// freely between threads" (PostgreSQL 15 docs, 34.21 "Behavior in Threaded Programs"), hence
/// `@unchecked Sendable`; it is freed with the last reference.
public final class PostgresResult: @unchecked Sendable {
    let result: OpaquePointer

    init(_ result: OpaquePointer) { self.result = result }
    deinit { pq.PQclear(result) }

    /// Rows returned.
    public var count: Int { Int(pq.PQntuples(result)) }
    /// Rows the command changed (`UPDATE`, `DELETE`, `INSERT`), or returned.
    public var affected: Int { Int(cString(pq.PQcmdTuples(result))) ?? count }

    public var rows: [PostgresRow] { (0..<count).map { PostgresRow(result: self, index: Int32($0)) } }

    func text(row: Int32, column: Int32) -> String? {
        if pq.PQgetisnull(result, row, column) != 0 { return nil }
        return cString(pq.PQgetvalue(result, row, column))
    }

    func columnName(_ column: Int32) -> String { pq.PQfname(result, column).map { String(cString: $0) } ?? "#\(column)" }
}

/// One row of a ``PostgresResult``.
public struct PostgresRow: Sendable {
    let result: PostgresResult
    let index: Int32

    /// The first column.
    public func decode<Value: PostgresDecodable>(_ type: Value.Type) throws(PostgresError) -> Value {
        try Value.decode(postgresText: result.text(row: index, column: 0), column: result.columnName(0))
    }

    /// The first columns, in order.
    public func decode<each Value: PostgresDecodable>(_ types: (repeat each Value).Type) throws -> (repeat each Value) {
        var column: Int32 = 0
        func next<One: PostgresDecodable>(_ type: One.Type) throws -> One {
            defer { column += 1 }
            return try One.decode(postgresText: result.text(row: index, column: column), column: result.columnName(column))
        }
        return (repeat try next((each Value).self))
    }

    /// The column named `name` (as the statement names it: lower case unless quoted).
    public subscript(_ name: String) -> PostgresCell {
        PostgresCell(row: self, column: pq.PQfnumber(result.result, name), name: name)
    }

    /// The row itself: its columns are read by name with the subscript (kept for the store's
    /// code, written when rows came from a client with a sequential row type).
    public func makeRandomAccess() -> PostgresRow { self }
}

/// One column of a row, read by name.
public struct PostgresCell: Sendable {
    let row: PostgresRow
    let column: Int32
    let name: String

    public func decode<Value: PostgresDecodable>(_ type: Value.Type) throws(PostgresError) -> Value {
        guard column >= 0 else { throw PostgresError(.decoding, "the statement returned no column \(name)") }
        return try Value.decode(postgresText: row.result.text(row: row.index, column: column), column: name)
    }
}

/// How long a connection waits for what. Every wait is bounded, so a runner never hangs on a
/// server that went away: the connect, each statement, each lock, and the TCP connection itself
/// (keepalives; a user timeout for data sent and never acknowledged).
public struct PostgresConnectionOptions: Sendable, Hashable {
    /// libpq's connect_timeout (whole seconds, at least 2 as libpq asks).
    public var connectTimeout: Duration = .seconds(5)
    /// The server cancels a statement that runs longer (statement_timeout); nil: no limit (the
    /// schema's migrations, which may build an index on a million rows).
    public var statementTimeout: Duration? = .seconds(30)
    /// The server gives up waiting for a lock after this (lock_timeout).
    public var lockTimeout: Duration? = .seconds(10)
    /// TCP: the first keepalive probe after this much idle time; a dead peer is found after
    /// about idle + 3 × 5 s. Ignored on a unix socket.
    public var keepaliveIdle: Duration = .seconds(10)
    /// TCP_USER_TIMEOUT: data sent and not acknowledged for this long breaks the connection.
    public var userTimeout: Duration = .seconds(20)
    /// What `pg_stat_activity` shows for the connection.
    public var applicationName: String?

    public init(applicationName: String? = nil) { self.applicationName = applicationName }

    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}

/// One connection to PostgreSQL, made on first use and made again after it broke. Several tasks
/// may share it: each statement, and each ``transaction(_:)`` as a whole, holds its lock (a
/// PGconn must be used by one thread at a time: PostgreSQL 15 docs, 34.21). `@unchecked
/// Sendable` for that lock.
public final class PostgresConnection: @unchecked Sendable {
    public let url: PostgresURL
    public let options: PostgresConnectionOptions
    private let lock = NSLock()
    /// Guarded by `lock`.
    private var session: PostgresSession?
    private var readOnlyHandler: (@Sendable () -> Void)?
    private var reconnectHandler: (@Sendable () -> Void)?
    /// A connection broke or could not be made since the last one was made.
    private var lost = false
    private var renewals = 0
    /// The server process of the connection made last (0 before the first), read without the
    /// lock: a NOTIFY's sender is told apart by it (``PostgresSession/notifications()``).
    private let lastBackendPID = Atomic<Int32>(0)
    /// Guarded by `cancelLock`: the current connection's cancel object, for ``cancel()`` from any thread.
    private let cancelLock = NSLock()
    private var canceller: OpaquePointer?

    public init(_ url: PostgresURL, options: PostgresConnectionOptions = PostgresConnectionOptions()) {
        self.url = url
        self.options = options
    }

    deinit {
        if let canceller { pq.PQfreeCancel(canceller) }
    }

    /// Runs `body` with the connection to itself (made first when there is none, or it broke).
    public func withSession<Result>(_ body: (PostgresSession) throws -> Result) throws -> Result {
        lock.lock()
        defer { lock.unlock() }
        let session = try current()
        do {
            return try body(session)
        } catch {
            if session.isBroken {
                lost = true
                drop()
            } else if (error as? PostgresError)?.isReadOnly == true {
                // A node that answers read-only (a standby, or a primary a failover demoted)
                // goes on answering so for as long as the connection lives: the next statement
                // goes over a new one, to whichever node the URL's host names now.
                drop()
                renewals += 1
                readOnlyHandler?()
            }
            throw error
        }
    }

    /// Called (under the connection's lock) when a statement was refused as read-only and the
    /// connection dropped: a runner renews its LISTEN connection too.
    public var onReadOnly: (@Sendable () -> Void)? {
        get {
            lock.lock()
            defer { lock.unlock() }
            return readOnlyHandler
        }
        set {
            lock.lock()
            defer { lock.unlock() }
            readOnlyHandler = newValue
        }
    }

    /// How many times a read-only answer dropped the connection.
    public var renewalCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return renewals
    }

    /// `body` between BEGIN and COMMIT (ROLLBACK when it throws, rethrowing its own error).
    public func transaction<Result>(_ body: (PostgresSession) throws -> Result) throws -> Result {
        try withSession { session in try session.transaction(body) }
    }

    /// Runs `query`; returns its result.
    @discardableResult
    public func execute(_ query: PostgresQuery) throws -> PostgresResult {
        try withSession { try $0.execute(query) }
    }

    /// Every row `query` returns.
    public func rows(_ query: PostgresQuery) throws -> [PostgresRow] { try execute(query).rows }

    /// Runs `query`; returns how many rows it returned or changed.
    @discardableResult
    public func run(_ query: PostgresQuery) throws -> Int { try execute(query).affected }

    /// Every row of `query`, run as the statement prepared under `name` on the connection
    /// (``PostgresSession/execute(prepared:_:)``): for the statements a runner sends at every
    /// pass, which are then planned once per connection instead of at every call (planning was
    /// most of an idle pass's time on the server: PostgreSQL's `log_min_duration_statement = 0`
    /// logs each statement's parse, bind, where it is planned, and execute apart).
    public func rows(prepared name: String, _ query: PostgresQuery) throws -> [PostgresRow] {
        try withSession { try $0.execute(prepared: name, query).rows }
    }

    /// ``PostgresSession/forEachRow(_:_:)`` on this connection.
    public func forEachRow(_ query: PostgresQuery, _ body: (PostgresRow) throws -> Void) throws {
        try withSession { try $0.forEachRow(query, body) }
    }

    /// Closes the connection; the next statement makes a new one (after a failover, a new
    /// connection reaches whichever node the URL's host names now).
    public func reset() {
        lock.lock()
        defer { lock.unlock() }
        drop()
    }

    /// Asks the server to cancel the statement in flight, from any thread (PQcancel is meant for
    /// that: PostgreSQL 15 docs, 34.7 "Canceling Queries in Progress"). The statement then fails
    /// with SQLSTATE 57014. Does nothing when no connection is open.
    public func cancel() {
        cancelLock.lock()
        defer { cancelLock.unlock() }
        guard let canceller else { return }
        var buffer = [CChar](repeating: 0, count: 256)
        _ = pq.PQcancel(canceller, &buffer, Int32(buffer.count))
    }

    /// Called (under the connection's lock) when a connection is made again after one broke or
    /// could not be made: the database answers again. A runner then re-makes its LISTEN
    /// connection at once rather than at the end of its backoff.
    public var onReconnect: (@Sendable () -> Void)? {
        get {
            lock.lock()
            defer { lock.unlock() }
            return reconnectHandler
        }
        set {
            lock.lock()
            defer { lock.unlock() }
            reconnectHandler = newValue
        }
    }

    /// Guarded by `lock`.
    private func current() throws(PostgresError) -> PostgresSession {
        if let session, !session.isBroken { return session }
        if session != nil { lost = true }
        drop()
        let made: PostgresSession
        do {
            made = try PostgresSession(url: url, options: options)
        } catch {
            lost = true
            throw error
        }
        if lost {
            lost = false
            reconnectHandler?()
        }
        session = made
        lastBackendPID.store(made.backendPID, ordering: .relaxed)
        cancelLock.lock()
        canceller = pq.PQgetCancel(made.connection)
        cancelLock.unlock()
        return made
    }

    /// The server process of the connection made last (0 before the first), without waiting
    /// for a statement in flight.
    public var backendPID: Int32 { lastBackendPID.load(ordering: .relaxed) }

    /// Guarded by `lock`.
    private func drop() {
        cancelLock.lock()
        if let canceller { pq.PQfreeCancel(canceller) }
        canceller = nil
        cancelLock.unlock()
        session = nil
    }
}

/// An open libpq connection, used by one thread at a time (see ``PostgresConnection``).
public final class PostgresSession {
    let connection: OpaquePointer
    /// Statements prepared on this connection, by name.
    private var prepared: Set<String> = []
    private var inTransaction = false

    init(url: PostgresURL, options: PostgresConnectionOptions) throws(PostgresError) {
        if let problem = chime_libpq_open() {
            throw PostgresError(.connection, "cannot load libpq: \(String(cString: problem)) (Debian's libpq5 installs it)")
        }
        let parameters = url.libpqParameters(options)
        let keys = parameters.map { strdup($0.0) }
        let values = parameters.map { strdup($0.1) }
        defer {
            for pointer in keys + values { free(pointer) }
        }
        let keyPointers: [UnsafePointer<CChar>?] = keys.map { UnsafePointer($0) } + [nil]
        let valuePointers: [UnsafePointer<CChar>?] = values.map { UnsafePointer($0) } + [nil]
        guard let made = pq.PQconnectdbParams(keyPointers, valuePointers, 0) else {
            throw PostgresError(.connection, "could not connect to \(url): out of memory")
        }
        guard pq.PQstatus(made) == CONNECTION_OK else {
            let message = cString(pq.PQerrorMessage(made))
            pq.PQfinish(made)
            throw PostgresError(.connection, message.isEmpty ? "could not connect to \(url)" : message)
        }
        connection = made
    }

    deinit { pq.PQfinish(connection) }

    /// The connection broke (the server went away, a timeout): it is made again on next use.
    public var isBroken: Bool { pq.PQstatus(connection) != CONNECTION_OK }

    /// The connection's socket, to wait on with poll(2) for a NOTIFY (``notifications()``).
    public var socket: Int32 { pq.PQsocket(connection) }

    /// The server process serving this connection (PQbackendPID): a NOTIFY's `sender`.
    public var backendPID: Int32 { pq.PQbackendPID(connection) }

    /// Runs `query` (parameters as text, with their types); a server error throws with its SQLSTATE.
    @discardableResult
    public func execute(_ query: PostgresQuery) throws(PostgresError) -> PostgresResult {
        try withParameters(query) { count, types, values in
            pq.PQexecParams(connection, query.sql, count, types, values, nil, nil, 0)
        }
    }

    /// Runs the statement `sql` prepared on this connection under `name` (prepared the first time:
    /// parsed and planned once, then only bound and executed), with `query`'s parameters.
    @discardableResult
    public func execute(prepared name: String, _ query: PostgresQuery) throws(PostgresError) -> PostgresResult {
        if !prepared.contains(name) {
            try check(pq.PQprepare(connection, name, query.sql, Int32(query.types.count), query.types))
            prepared.insert(name)
        }
        return try withParameters(query) { count, _, values in
            pq.PQexecPrepared(connection, name, count, values, nil, nil, 0)
        }
    }

    public func rows(_ query: PostgresQuery) throws(PostgresError) -> [PostgresRow] { try execute(query).rows }

    /// Calls `body` with each row of `query` as it arrives, one held at a time (libpq's
    /// single-row mode, PostgreSQL 15 docs, 34.6 "Retrieving Query Results Row-by-Row"): a
    /// listing of 200,000 reminders never sits in memory whole. What `body` throws ends the
    /// loop once the rest of the answer is read and dropped (the connection stays usable).
    public func forEachRow(_ query: PostgresQuery, _ body: (PostgresRow) throws -> Void) throws {
        let copies = query.values.map { $0.map { strdup($0) } ?? nil }
        defer {
            for copy in copies { free(copy) }
        }
        let pointers = copies.map { $0.map { UnsafePointer($0) } }
        guard pq.PQsendQueryParams(connection, query.sql, Int32(query.values.count), query.types, pointers, nil, nil, 0) == 1 else {
            throw PostgresError(.connection, cString(pq.PQerrorMessage(connection)))
        }
        _ = pq.PQsetSingleRowMode(connection)
        var failure: (any Error)?
        while let next = pq.PQgetResult(connection) {
            if failure != nil {
                pq.PQclear(next)
                continue
            }
            if pq.PQresultStatus(next) == PGRES_SINGLE_TUPLE {
                let result = PostgresResult(next)
                do {
                    try body(PostgresRow(result: result, index: 0))
                } catch {
                    failure = error
                }
                continue
            }
            do {
                try check(next)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }

    @discardableResult
    public func run(_ query: PostgresQuery) throws(PostgresError) -> Int { try execute(query).affected }

    /// `body` between BEGIN and COMMIT; ROLLBACK when it throws (its own error rethrown).
    /// Nested, `body` runs in the transaction already open.
    public func transaction<Result>(_ body: (PostgresSession) throws -> Result) throws -> Result {
        if inTransaction { return try body(self) }
        try execute("BEGIN")
        inTransaction = true
        defer { inTransaction = false }
        let result: Result
        do {
            result = try body(self)
        } catch {
            if !isBroken { _ = try? execute("ROLLBACK") }
            throw error
        }
        try execute("COMMIT")
        return result
    }

    /// LISTEN on `channel` (a name Chime chose: quoted as an identifier all the same).
    public func listen(_ channel: String) throws(PostgresError) {
        guard let quoted = pq.PQescapeIdentifier(connection, channel, channel.utf8.count) else {
            throw PostgresError(.connection, cString(pq.PQerrorMessage(connection)))
        }
        defer { pq.PQfreemem(quoted) }
        try execute(PostgresQuery(unsafeSQL: "LISTEN " + String(cString: quoted)))
    }

    /// Reads what the server sent without waiting (PQconsumeInput), and returns the NOTIFY
    /// payloads received since the last call (PostgreSQL 15 docs, 34.9 "Asynchronous
    /// Notification"), with the server process of the session that sent each. Throws when the
    /// connection broke.
    public func notifications() throws(PostgresError) -> [(channel: String, payload: String, sender: Int32)] {
        guard pq.PQconsumeInput(connection) == 1 else {
            throw PostgresError(.connection, cString(pq.PQerrorMessage(connection)))
        }
        var received: [(channel: String, payload: String, sender: Int32)] = []
        while let notify = pq.PQnotifies(connection) {
            received.append((String(cString: notify.pointee.relname), String(cString: notify.pointee.extra), notify.pointee.be_pid))
            pq.PQfreemem(notify)
        }
        return received
    }

    private func withParameters(
        _ query: PostgresQuery,
        _ run: (Int32, [UInt32], [UnsafePointer<CChar>?]) -> OpaquePointer?
    ) throws(PostgresError) -> PostgresResult {
        let copies = query.values.map { $0.map { strdup($0) } ?? nil }
        defer {
            for copy in copies { free(copy) }
        }
        let pointers = copies.map { $0.map { UnsafePointer($0) } }
        return try check(run(Int32(query.values.count), query.types, pointers))
    }

    /// The result, or the error it carries (the server's SQLSTATE and primary message), or
    /// libpq's when there is no result at all (the connection broke).
    @discardableResult
    private func check(_ result: OpaquePointer?) throws(PostgresError) -> PostgresResult {
        guard let result else {
            throw PostgresError(.connection, cString(pq.PQerrorMessage(connection)))
        }
        let owned = PostgresResult(result)
        switch pq.PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return owned
        default:
            // PG_DIAG_SQLSTATE and PG_DIAG_MESSAGE_PRIMARY are the characters 'C' and 'M'
            // (postgres_ext.h), macros Swift does not import as field codes.
            let state = pq.PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
            let primary = pq.PQresultErrorField(result, Int32(UInt8(ascii: "M"))).map { String(cString: $0) }
            let message = primary ?? cString(pq.PQresultErrorMessage(result))
            if state == nil || isBroken { throw PostgresError(.connection, sqlState: state, message) }
            throw PostgresError(.server, sqlState: state, message)
        }
    }
}
