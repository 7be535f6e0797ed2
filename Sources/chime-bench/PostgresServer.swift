// postgres: the bench's own PostgreSQL server (scripts/postgres-server, durable settings), its
// databases, psql and pgbench, and the `chime run` processes it starts on them.
import ChimeCore
import ChimePostgres
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The processes this run started (runners, the server's directory): stopped by pid when the
/// bench ends, also on failure or on SIGINT/SIGTERM.
final class BenchProcesses: Sendable {
    static let shared = BenchProcesses()

    private let state = Mutex<(pids: Set<pid_t>, servers: [String])>(([], []))

    func add(_ pid: pid_t) { state.withLock { _ = $0.pids.insert(pid) } }
    func remove(_ pid: pid_t) { state.withLock { _ = $0.pids.remove(pid) } }
    func addServer(_ directory: String) { state.withLock { $0.servers.append(directory) } }
    func removeServer(_ directory: String) { state.withLock { $0.servers.removeAll { $0 == directory } } }

    /// SIGKILLs every runner still recorded and stops every server (by the pid its script recorded).
    func stopAll() {
        let (pids, servers) = state.withLock { ($0.pids, $0.servers) }
        for pid in pids {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        for directory in servers { PostgresServer.stop(directory) }
    }

    /// On SIGINT or SIGTERM: stop what was started, then exit 130 / 143.
    func stopOnSignals() {
        for (signalNumber, code) in [(SIGINT, Int32(130)), (SIGTERM, Int32(143))] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler {
                BenchProcesses.shared.stopAll()
                exit(code)
            }
            source.resume()
            Self.sources.append(source)
        }
    }

    /// Kept alive for the process's life. Written only here, once, by the command's start
    /// (DispatchSourceSignal is not Sendable, so it cannot live in a Mutex).
    nonisolated(unsafe) private static var sources: [any DispatchSourceSignal] = []
}

/// A private server in a directory of its own, started and stopped by the project's script.
struct PostgresServer {
    let directory: String
    /// The role clients use (the script's `PGUSER`: `postgres` as root, else the invoking user).
    let user: String
    /// psql and pgbench, from the binaries' directory the script uses.
    let bindir: String

    /// scripts/postgres-server: $CHIME_POSTGRES_SERVER, or scripts/ in a parent of this
    /// executable's directory (the worktree of a `.build/release/chime-bench`), or of the
    /// working directory.
    static func script() throws -> String {
        if let path = ProcessInfo.processInfo.environment["CHIME_POSTGRES_SERVER"] { return path }
        let bench = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        for start in [
            URL(fileURLWithPath: bench).deletingLastPathComponent(), URL(fileURLWithPath: FileManager.default.currentDirectoryPath),
        ] {
            var directory = start
            while directory.path != "/" {
                let candidate = directory.appendingPathComponent("scripts/postgres-server").path
                if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
                directory.deleteLastPathComponent()
            }
        }
        throw ChimeError(.failure, "cannot find scripts/postgres-server (run from the repository, or set CHIME_POSTGRES_SERVER)")
    }

    /// Starts a server in a new temporary directory with the script's default, durable settings
    /// (fsync, synchronous_commit and full_page_writes on; PG_FAST unset).
    static func start() throws -> PostgresServer {
        let directory = temporaryDirectory("pg")
        // As root the script runs the server as `postgres`, which must reach the directory.
        chmod(directory, 0o755)
        var environment = ProcessInfo.processInfo.environment
        environment["PG_FAST"] = nil
        BenchProcesses.shared.addServer(directory)
        let result = try capture(try script(), ["start", directory], environment: environment)
        guard result.status == 0 else {
            BenchProcesses.shared.removeServer(directory)
            throw ChimeError(
                .failure,
                "scripts/postgres-server start failed: \(result.error.trimmingCharacters(in: .whitespacesAndNewlines))"
            )
        }
        var user = "postgres"
        for line in result.output.split(separator: "\n") where line.hasPrefix("export PGUSER=") {
            user = String(line.dropFirst("export PGUSER=".count)).trimmingCharacters(in: CharacterSet(charactersIn: "'"))
        }
        let bindir =
            ProcessInfo.processInfo.environment["PG_BINDIR"]
            ?? ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? [])
            .sorted { $0.compare($1, options: .numeric) == .orderedAscending }.last.map { "/usr/lib/postgresql/\($0)/bin" }
            ?? "/usr/bin"
        return PostgresServer(directory: directory, user: user, bindir: bindir)
    }

    /// Stops the server in `directory` (fast shutdown by its recorded pid) and removes the directory.
    static func stop(_ directory: String) {
        _ = try? capture((try? script()) ?? "scripts/postgres-server", ["stop", directory])
        BenchProcesses.shared.removeServer(directory)
        try? FileManager.default.removeItem(atPath: directory)
    }

    func stop() { Self.stop(directory) }

    /// The database in which the script made the extension pg_stat_statements (its view shows
    /// every database's statements).
    static let statementsDatabase = "chime"

    /// The store URL of database `database`.
    func url(_ database: String) -> String {
        "postgresql:///\(database)?host=\(directory)&user=\(user)"
    }

    func postgresURL(_ database: String) throws -> PostgresURL { try PostgresURL(url(database)) }

    /// Runs `sql` with psql on `database` (several statements: one implicit transaction) and
    /// returns its unaligned, tuples-only output, fields separated by `|`.
    /// - Throws: when psql fails, with its error.
    @discardableResult
    func psql(_ database: String, _ sql: String) throws -> String {
        let result = try capture(
            bindir + "/psql",
            ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-tA", "-F", "|", "-h", directory, "-U", user, "-d", database, "-c", sql]
        )
        guard result.status == 0 else {
            throw ChimeError(.failure, "psql on \(database): \(result.error.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The rows of `sql`'s output, as fields.
    func rows(_ database: String, _ sql: String) throws -> [[String]] {
        try psql(database, sql).split(separator: "\n").map { $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init) }
    }

    /// One number from `sql` (NaN when it is NULL or not a number).
    func number(_ database: String, _ sql: String) throws -> Double { Double(try psql(database, sql)) ?? .nan }

    /// A new database `name` (dropped first if it exists), as a copy of `template` when given.
    /// STRATEGY file_copy: copying the seeded files beats WAL-logging 1,000,000 rows again.
    func createDatabase(_ name: String, template: String? = nil) throws {
        try psql("postgres", "DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
        try psql("postgres", "CREATE DATABASE \(name)" + (template.map { " TEMPLATE \($0) STRATEGY file_copy" } ?? ""))
    }

    func dropDatabase(_ name: String) {
        _ = try? psql("postgres", "DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }
}

/// Runs `executable` to its end; its exit status, standard output and standard error.
/// posix_spawn and waitpid rather than Foundation's Process, whose waitUntilExit was seen to
/// wait forever for a script that had exited (its zombie never reaped) in this program.
func capture(
    _ executable: String,
    _ arguments: [String],
    environment: [String: String] = ProcessInfo.processInfo.environment
) throws -> (status: Int32, output: String, error: String) {
    var outputPipe: [Int32] = [0, 0]
    var errorPipe: [Int32] = [0, 0]
    guard pipe(&outputPipe) == 0 else { throw ChimeError(.failure, "pipe failed") }
    guard pipe(&errorPipe) == 0 else {
        close(outputPipe[0])
        close(outputPipe[1])
        throw ChimeError(.failure, "pipe failed")
    }
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { for pointer in argv + envp { free(pointer) } }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_adddup2(&actions, outputPipe[1], 1)
    posix_spawn_file_actions_adddup2(&actions, errorPipe[1], 2)
    for fd in outputPipe + errorPipe { posix_spawn_file_actions_addclose(&actions, fd) }
    var pid = pid_t()
    let spawned = withCleanSignals { posix_spawn(&pid, executable, &actions, &$0, argv, envp) }
    close(outputPipe[1])
    close(errorPipe[1])
    defer {
        close(outputPipe[0])
        close(errorPipe[0])
    }
    guard spawned == 0 else { throw ChimeError(.failure, "cannot spawn \(executable)") }
    // stdout first, then stderr: what psql, pgbench and the script write on stderr is a few
    // lines, far from filling a pipe.
    let output = readAll(outputPipe[0])
    let error = readAll(errorPipe[0])
    var status: Int32 = 0
    while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
    return ((status >> 8) & 0xff, String(decoding: output, as: UTF8.self), String(decoding: error, as: UTF8.self))
}

/// Everything readable from `fd` until its end.
private func readAll(_ fd: Int32) -> [UInt8] {
    var data: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count > 0 {
            data.append(contentsOf: buffer[0..<count])
        } else if count == 0 || errno != EINTR {
            return data
        }
    }
}

/// A `chime run` on a PostgreSQL store: its pid, its owner name (from its connections'
/// application name) and its log (standard error).
struct PostgresRunnerProcess {
    let pid: pid_t
    let owner: String
    let log: String
}

extension PostgresServer {
    /// Owners of the runners connected to `database` now (application_name `chime run OWNER`).
    func runnerOwners(_ database: String) throws -> Set<String> {
        let prefix = PostgresStore.runnerApplicationName + " "
        // Not the LISTEN connection's `chime run OWNER listen`.
        let names = try psql(
            "postgres",
            """
            SELECT DISTINCT application_name FROM pg_stat_activity WHERE datname = '\(database)'
            AND application_name LIKE '\(prefix)%' AND application_name NOT LIKE '% listen'
            """
        )
        return Set(names.split(separator: "\n").map { String($0.dropFirst(prefix.count)) })
    }

    /// Starts `chime run --store URL --notifier json --lease LEASE` on `database` in a HOME and
    /// XDG directories of its own under `directory`, its standard output to /dev/null and its
    /// errors to a log; returns once it has logged "Runner started" and connected (at most 30 s).
    func startRunner(_ database: String, lease: String, in directory: String, index: Int) throws -> PostgresRunnerProcess {
        let home = directory + "/runner\(index)"
        let environment = try isolatedEnvironment(home)
        let log = home + "/stderr.log"
        let before = try runnerOwners(database)
        let pid = try spawnLogged(
            chimeExecutable,
            ["run", "--store", url(database), "--notifier", "json", "--lease", lease],
            environment: environment,
            errors: log
        )
        BenchProcesses.shared.add(pid)
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                BenchProcesses.shared.remove(pid)
                let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                throw ChimeError(.failure, "chime run exited (status \((status >> 8) & 0xff)): \(text.suffix(400))")
            }
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            if text.contains("Runner started"), let owner = try runnerOwners(database).subtracting(before).first {
                return PostgresRunnerProcess(pid: pid, owner: owner, log: log)
            }
            usleep(20_000)
        }
        stopRunner(pid)
        throw ChimeError(.failure, "chime run did not log \"Runner started\" and connect within 30 s (see \(log))")
    }
}

/// SIGTERM, then SIGKILL after 10 s; reaps it.
func stopRunner(_ pid: pid_t) {
    kill(pid, SIGTERM)
    var status: Int32 = 0
    for _ in 0..<1_000 {
        if waitpid(pid, &status, WNOHANG) == pid {
            BenchProcesses.shared.remove(pid)
            return
        }
        usleep(10_000)
    }
    kill(pid, SIGKILL)
    waitpid(pid, &status, 0)
    BenchProcesses.shared.remove(pid)
}

/// `kill -9` and reap.
func killRunner(_ pid: pid_t) {
    kill(pid, SIGKILL)
    var status: Int32 = 0
    waitpid(pid, &status, 0)
    BenchProcesses.shared.remove(pid)
}

/// ``spawn(_:_:environment:output:)`` with standard output to /dev/null and errors to `errors`.
func spawnLogged(_ executable: String, _ arguments: [String], environment: [String: String], errors: String) throws -> pid_t {
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { for pointer in argv + envp { free(pointer) } }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, errors, O_WRONLY | O_CREAT | O_APPEND, 0o600)
    var pid = pid_t()
    guard withCleanSignals({ posix_spawn(&pid, executable, &actions, &$0, argv, envp) }) == 0 else {
        throw ChimeError(.failure, "cannot spawn \(executable)")
    }
    return pid
}

/// posix_spawn's attributes for the programs this bench starts: no signal blocked and every
/// signal at its default. Without them a child inherits the mask of the thread that spawns it
/// (a Dispatch worker blocks most signals: pgbench never saw the SIGALRM that ends `-T`) and
/// this process's ignored SIGINT and SIGTERM (a runner would ignore the SIGTERM that stops it).
func withCleanSignals<Result>(_ body: (inout posix_spawnattr_t) -> Result) -> Result {
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var none = sigset_t()
    sigemptyset(&none)
    var all = sigset_t()
    sigfillset(&all)
    posix_spawnattr_setsigmask(&attributes, &none)
    posix_spawnattr_setsigdefault(&attributes, &all)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    return body(&attributes)
}
