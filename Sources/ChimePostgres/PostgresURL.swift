import ChimeCore
import Foundation

/// Where a PostgreSQL store is, from a libpq-style URL: `postgresql:///chime?host=/run/postgresql`
/// (a unix socket in that directory) or `postgresql://user@db.example:5432/chime` (TCP).
///
/// Only what Chime needs of libpq's URI syntax (PostgreSQL 15 docs, "Connection URIs", 34.1.1):
/// host, port, user and database, in the authority or as `host=`, `port=`, `user=` query
/// parameters; a host that starts with `/` is a socket directory, as in libpq. A password in the
/// URL is refused (a URL ends up in argv and in `ps`): it comes from `PGPASSWORD`. The refusal, as
/// every message, shows the URL redacted (``Redaction``).
/// Parsed here rather than handed to libpq as it is, so that a bad URL is refused in one line
/// before anything connects, and every message shows it the same way.
public struct PostgresURL: Sendable, Hashable, CustomStringConvertible {
    public enum Endpoint: Sendable, Hashable {
        /// The socket file itself (`DIR/.s.PGSQL.PORT`, as libpq names it).
        case socket(path: String)
        case tcp(host: String, port: Int)
    }

    public var endpoint: Endpoint
    public var user: String
    public var database: String
    /// From `PGPASSWORD`, never from the URL.
    public var password: String?

    static let accepted =
        "a URL such as postgresql:///chime?host=/run/postgresql or postgresql://user@host:5432/chime (no password: use PGPASSWORD)"

    /// - Parameter environment: where `PGPASSWORD` and the default user (`PGUSER`, then `USER`) come from.
    public init(_ text: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws(ChimeError) {
        func bad(_ why: String) -> ChimeError {
            ChimeError(.usage, "bad PostgreSQL URL '\(Redaction.redacted(text))': \(why); expected \(Self.accepted)")
        }
        guard let parts = URLComponents(string: text), let scheme = parts.scheme?.lowercased(),
            scheme == "postgresql" || scheme == "postgres"
        else { throw bad("not a postgresql:// URL") }
        if parts.password != nil { throw bad("it has a password") }
        var host = parts.host.flatMap { $0.isEmpty ? nil : $0 }
        var port = parts.port
        var user = parts.user.flatMap { $0.isEmpty ? nil : $0 }
        for item in parts.queryItems ?? [] {
            switch item.name {
            case "host": host = item.value
            case "port":
                guard let value = item.value.flatMap({ Int($0) }) else { throw bad("port '\(item.value ?? "")' is not a number") }
                port = value
            case "user": user = item.value
            case "password": throw bad("it has a password")
            default: throw bad("unknown parameter '\(item.name)' (accepted: host, port, user)")
            }
        }
        let portNumber = port ?? 5432
        guard (1...65535).contains(portNumber) else { throw bad("port \(portNumber) is out of range 1-65535") }
        let resolvedUser = user ?? environment["PGUSER"] ?? environment["USER"] ?? "postgres"
        var path = parts.path
        if path.hasPrefix("/") { path.removeFirst() }
        guard !path.contains("/") else { throw bad("the database name '\(path)' has a '/'") }
        let host1 = host ?? "/run/postgresql"
        self.endpoint =
            host1.hasPrefix("/")
            ? .socket(path: host1 + (host1.hasSuffix("/") ? "" : "/") + ".s.PGSQL.\(portNumber)")
            : .tcp(host: host1, port: portNumber)
        self.user = resolvedUser
        self.database = path.isEmpty ? resolvedUser : path
        self.password = environment["PGPASSWORD"]
    }

    /// libpq's connection parameters (PostgreSQL 15 docs, 34.1.2 "Parameter Key Words") for this
    /// URL and `options`. libpq reads what is not given here from its environment variables and
    /// files as always (PGSSLMODE, PGPASSFILE, ...); the password from `PGPASSWORD` as this URL read it.
    func libpqParameters(_ options: PostgresConnectionOptions) -> [(String, String)] {
        var parameters: [(String, String)]
        switch endpoint {
        case .socket(let path):
            let directory = (path as NSString).deletingLastPathComponent
            let port = path.split(separator: ".").last.map(String.init) ?? "5432"
            parameters = [("host", directory), ("port", port)]
        case .tcp(let host, let port):
            parameters = [("host", host), ("port", String(port))]
        }
        parameters += [("user", user), ("dbname", database), ("client_encoding", "UTF8")]
        if let password { parameters.append(("password", password)) }
        if let name = options.applicationName { parameters.append(("application_name", name)) }
        let seconds = max(2, (PostgresConnectionOptions.milliseconds(options.connectTimeout) + 999) / 1000)
        parameters += [
            ("connect_timeout", String(seconds)), ("keepalives", "1"),
            ("keepalives_idle", String(max(1, PostgresConnectionOptions.milliseconds(options.keepaliveIdle) / 1000))),
            ("keepalives_interval", "5"), ("keepalives_count", "3"),
            ("tcp_user_timeout", String(PostgresConnectionOptions.milliseconds(options.userTimeout))),
        ]
        var settings: [String] = []
        if let timeout = options.statementTimeout {
            settings.append("-c statement_timeout=\(PostgresConnectionOptions.milliseconds(timeout))")
        }
        if let timeout = options.lockTimeout { settings.append("-c lock_timeout=\(PostgresConnectionOptions.milliseconds(timeout))") }
        if !settings.isEmpty { parameters.append(("options", settings.joined(separator: " "))) }
        return parameters
    }

    /// The same server, another database (the tests make one per test).
    public func with(database: String) -> PostgresURL {
        var copy = self
        copy.database = database
        return copy
    }

    /// The URL without a password (the password never comes from it), through ``Redaction`` all the same.
    public var description: String {
        switch endpoint {
        case .socket(let path):
            Redaction.redacted("postgresql:///\(database)?host=\((path as NSString).deletingLastPathComponent)&user=\(user)")
        case .tcp(let host, let port): Redaction.redacted("postgresql://\(user)@\(host):\(port)/\(database)")
        }
    }
}
