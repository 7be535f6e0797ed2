// postgres: the scale benchmark. Its own PostgreSQL server (scripts/postgres-server,
// durable settings), 1,000,000 pending one-shots plus a burst due at one instant; real
// `chime run --notifier json` processes; the ledger's posted_at for every figure; pgbench
// driving the bare claim and mark on the same data as the same-run floor. Not part of `all`
// (it needs PostgreSQL and takes minutes); not run in CI.
import ArgumentParser
import ChimeCore
import ChimePostgres
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

struct PostgresBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "postgres",
        abstract: "Scale figures: 1,000,000 pending, a burst due at once, 1/2/4 runners vs a pgbench floor.",
        discussion: """
            Starts its own PostgreSQL server (scripts/postgres-server, durable settings: fsync, \
            synchronous_commit and full_page_writes on) in a temporary directory and stops it at \
            the end. Needs Debian's postgresql (15) and chime built beside chime-bench.
            Examples:
              chime-bench postgres
              chime-bench postgres --pending 100000 --burst 5000 --runs 1
            """
    )

    @Option(help: "Pending one-shots far in the future.")
    var pending = 1_000_000

    @Option(help: "Occurrences due at one instant, drained by the runners.")
    var burst = 50_000

    @Option(help: "Runs per figure (medians are printed).")
    var runs = 3

    @Option(help: "Seconds two idle runners sit while pg_stat_statements counts their queries.")
    var idleSeconds = 60

    @Option(help: "Schedule + post cycles before the dead tuples are read.")
    var churn = 20_000

    @Option(help: "Seconds each pgbench floor run lasts.")
    var floorSeconds = 10

    @Option(help: "Most seconds runners drain a burst (the rate is over what they posted by then).")
    var drainSeconds = 20

    func validate() throws {
        for (name, value, least) in [
            ("--pending", pending, 0), ("--burst", burst, 1), ("--runs", runs, 1), ("--idle-seconds", idleSeconds, 1),
            ("--churn", churn, 0), ("--floor-seconds", floorSeconds, 1), ("--drain-seconds", drainSeconds, 1),
        ] where value < least {
            throw ValidationError("bad \(name) \(value): a whole number \(least) or more")
        }
    }

    mutating func run() async throws {
        BenchProcesses.shared.stopOnSignals()
        let server = try PostgresServer.start()
        let scratch = temporaryDirectory("pg-runners")
        defer {
            BenchProcesses.shared.stopAll()
            server.stop()
            try? FileManager.default.removeItem(atPath: scratch)
        }
        let bench = PostgresScale(
            server: server,
            scratch: scratch,
            pending: pending,
            burst: burst,
            runs: runs,
            idleSeconds: idleSeconds,
            churn: churn,
            floorSeconds: floorSeconds,
            drainSeconds: Double(drainSeconds)
        )
        try await bench.measure()
    }
}

/// Medians of a list of figures that may hold NaN (a run that had none).
private func medianOf(_ values: [Double]) -> Double { median(values.filter { !$0.isNaN }) }

/// One `BenchSQL.ledger` row.
struct LedgerFigures {
    var count = 0
    var span = Double.nan
    var p50 = Double.nan
    var p99 = Double.nan
    var max = Double.nan

    /// Occurrences per second from the ledger: posted count over the first to the last posted_at.
    var rate: Double { count > 1 && span > 0 ? Double(count - 1) / span : .nan }

    init() {}

    init(_ fields: [String]) {
        count = Int(fields.first ?? "") ?? 0
        let numbers = fields.dropFirst().map { Double($0) ?? .nan }
        if numbers.count == 4 { (span, p50, p99, max) = (numbers[0], numbers[1], numbers[2], numbers[3]) }
    }
}

struct PostgresScale {
    let server: PostgresServer
    let scratch: String
    let pending: Int
    let burst: Int
    let runs: Int
    let idleSeconds: Int
    let churn: Int
    let floorSeconds: Int
    let drainSeconds: Double

    static let seed = "chime_seed"
    static let runnerCounts = [1, 2, 4]
    static let lease = "30s"
    static let failoverLease = "5s"
    static let failoverLeaseSeconds = 5.0
    /// The runners' slow poll (PostgresRunner's default) and its jitter (±10 %).
    static let pollSeconds = 30.0

    func measure() async throws {
        let version = try server.psql("postgres", "SHOW server_version")
        let durability = try server.psql(
            "postgres",
            "SELECT current_setting('fsync') || '/' || current_setting('synchronous_commit') || '/' || current_setting('full_page_writes')"
        )
        emit(
            "chime-bench (postgres): PostgreSQL \(version) on \(server.directory), fsync/synchronous_commit/full_page_writes "
                + "\(durability) (durable: the script's default, PG_FAST unset); \(ProcessInfo.processInfo.activeProcessorCount) cores"
        )
        emit("pending \(pending), burst \(burst), runs \(runs), idle \(idleSeconds) s, churn \(churn), floor \(floorSeconds) s per run")
        emit("chime: \(chimeExecutable)")

        try await seedStore()
        let plansGood = try await explain()
        let throughput = try measureThroughput()
        var idle: LedgerFigures?
        var failover: (figures: LedgerFigures, orphans: LedgerFigures, held: Int, recovery: Double)?
        var queries: Double?
        if throughput.runnersWork {
            idle = await section("idle lateness") { try await idleLateness() }
            failover = await section("failover") { try measureFailover() }
            queries = await section("queries per idle minute") { try idleQueries() }
        }
        await section("dead tuples") { try await deadTuples() }

        emit("\n## Targets")
        let widths = [52, 30, 8]
        emit(row(["target", "measured", "verdict"], widths: widths))
        for (index, count) in Self.runnerCounts.enumerated() {
            let runner = throughput.runner[index]
            let floor = throughput.floor[index]
            let ratio = floor / runner
            emit(
                row(
                    [
                        "\(count) runner(s) within 2× of the pgbench floor",
                        "\(fmt(runner, 0)) vs \(fmt(floor, 0)) /s (floor/runner \(fmt(ratio, 2)))",
                        runner.isNaN ? "n/a" : ratio <= 2 ? "met" : "OVER",
                    ],
                    widths: widths
                )
            )
        }
        if let idle {
            emit(row(["idle lateness p99 < 50 ms", fmt(idle.p99, 1) + " ms", idle.p99 < 50 ? "met" : "OVER"], widths: widths))
        }
        if let failover {
            let limit = Self.failoverLeaseSeconds + Self.pollSeconds
            emit(
                row(
                    [
                        "failover within lease + poll (\(Int(Self.failoverLeaseSeconds)) + \(Int(Self.pollSeconds)) s)",
                        fmt(failover.recovery, 2) + " s (\(failover.held) held)",
                        failover.held == 0 ? "n/a" : failover.recovery <= limit ? "met" : "OVER",
                    ],
                    widths: widths
                )
            )
        }
        if let queries { emit(row(["queries per idle minute per runner (≈ 2 polls × a few)", fmt(queries, 1), ""], widths: widths)) }
        emit(
            row(
                ["EXPLAIN: index scans, no Seq Scan on occurrence or reminder", plansGood ? "yes" : "no", plansGood ? "met" : "OVER"],
                widths: widths
            )
        )
        if !throughput.runnersWork { emit("(runner figures skipped: \(throughput.why))") }
    }

    // MARK: - 1. Seeding

    /// The seed database: the schema (PostgresStore.migrate), `pending` one-shots far in the
    /// future, VACUUM ANALYZE (a table of that size in service has been autovacuumed); then
    /// reads on it as `chime list` and `chime next` make them. Every measurement copies it.
    func seedStore() async throws {
        emit("\n## 1. Seeding \(pending) pending one-shots (one INSERT … SELECT from generate_series into reminder + occurrence)")
        try server.createDatabase(Self.seed)
        _ = try await PostgresStore.withStore(try server.postgresURL(Self.seed)) { try $0.migrate() }
        let start = monotonicSeconds()
        // Due from 30 days ahead, one a second: far enough that nothing fires during the bench.
        try server.psql(
            Self.seed,
            BenchSQL.insertOneShots(
                count: pending,
                prefix: "p",
                title: "Pending",
                dueExpression: "now_us + 2592000000000 + i::bigint * 1000000"
            )
        )
        let inserted = monotonicSeconds() - start
        let vacuumStart = monotonicSeconds()
        // Two calls: VACUUM cannot run in the implicit transaction of several statements.
        try server.psql(Self.seed, "VACUUM ANALYZE reminder")
        try server.psql(Self.seed, "VACUUM ANALYZE occurrence")
        let vacuumed = monotonicSeconds() - vacuumStart
        let size = try server.number("postgres", "SELECT pg_database_size('\(Self.seed)')")
        emit(
            "inserted in \(fmt(inserted, 1)) s (\(fmt(Double(pending) / inserted, 0))/s), VACUUM ANALYZE \(fmt(vacuumed, 1)) s, "
                + "database \(fmt(size / 1e6, 0)) MB"
        )

        // Reads as the CLI makes them, on the seeded store.
        let url = try server.postgresURL(Self.seed)
        let (firstTen, nextOne) = try await PostgresStore.withStore(url) { store in
            let start = monotonicSeconds()
            let ten = try store.pending(limit: 10)
            let tenMs = (monotonicSeconds() - start) * 1000
            let one = monotonicSeconds()
            let reminder = try store.reminder(id: "p\(max(1, pending / 2))")
            return ((ten.count, tenMs), (reminder.id, (monotonicSeconds() - one) * 1000))
        }
        emit(
            "library: pending(limit: 10) \(firstTen.0) rows in \(fmt(firstTen.1, 1)) ms; reminder(id: \(nextOne.0)) \(fmt(nextOne.1, 1)) ms"
        )
        let environment = try isolatedEnvironment(scratch + "/cli")
        for arguments in [["next", "p\(max(1, pending / 2))"], ["list"]] {
            let limit = 60.0
            let start = monotonicSeconds()
            let pid = try spawnLogged(
                chimeExecutable,
                arguments + ["--store", server.url(Self.seed)],
                environment: environment,
                errors: "/dev/null"
            )
            var status: Int32 = 0
            var usage = rusage()
            var finished = false
            while monotonicSeconds() - start < limit {
                if wait4(pid, &status, WNOHANG, &usage) == pid {
                    finished = true
                    break
                }
                usleep(5_000)
            }
            if !finished {
                kill(pid, SIGKILL)
                wait4(pid, &status, 0, &usage)
            }
            let seconds = monotonicSeconds() - start
            emit(
                "chime \(arguments.joined(separator: " ")) (output to /dev/null): "
                    + (finished ? "exit \((status >> 8) & 0xff), \(fmt(seconds * 1000, 0)) ms" : "killed after \(Int(limit)) s")
            )
        }
    }

    // MARK: - 5. EXPLAIN

    /// EXPLAIN (ANALYZE, BUFFERS) of the claim and the mark (in a transaction rolled back) and of
    /// nextDeadlines on a copy of the seed with `burst` occurrences due; prints each plan's first
    /// lines; true when each uses its index scan on occurrence and none a Seq Scan on occurrence
    /// or reminder.
    func explain() async throws -> Bool {
        emit("\n## 5. EXPLAIN (ANALYZE, BUFFERS) on \(pending) pending + \(burst) due (claim of 512 and a mark, rolled back)")
        let database = "chime_explain"
        try server.createDatabase(database, template: Self.seed)
        defer { server.dropDatabase(database) }
        try server.psql(database, BenchSQL.insertOneShots(count: burst, prefix: "b", title: "Burst", dueExpression: "now_us - 1000000"))
        var good = true
        // Each plan, and the indexes on occurrence it may scan (one of them).
        let plans: [(String, [String], indexes: [String])] = [
            (
                "claim: PostgresStore.claimQuery (claimDue's statement, LIMIT 512), rolled back",
                try await explainStoreClaim(database), ["occurrence_pending_due"]
            ),
            (
                "nextDeadlines (its statement as PostgresStore+Scheduler.swift writes it)",
                try server.psql(database, "EXPLAIN (ANALYZE, BUFFERS) " + BenchSQL.nextDeadlines)
                    .split(separator: "\n").map(String.init),
                ["occurrence_pending_due"]
            ),
            (
                "mark: PostgresStore.MarkOne (the runner's mark of one claimed one-shot), rolled back",
                // By key, or in the few being posted (the planner's choice on the size).
                try await explainStoreMark(database), ["occurrence_pkey", "occurrence_posting_lease"]
            ),
        ]
        for (name, plan, indexes) in plans {
            let used = indexes.first { index in
                plan.contains { $0.contains("Index Scan using \(index)") || $0.contains("Index Only Scan using \(index)") }
            }
            let indexed = used != nil
            let index = used ?? indexes.joined(separator: " or ")
            let seq = plan.filter { $0.contains("Seq Scan on occurrence") || $0.contains("Seq Scan on reminder") }
            good = good && indexed && seq.isEmpty
            emit(
                "\n### \(name): "
                    + (indexed ? "Index Scan on \(index)" : "NO index scan on \(index)")
                    + (seq.isEmpty ? ", no Seq Scan on occurrence or reminder" : ", Seq Scan (OVER)")
            )
            for line in plan.prefix(14) { emit("    " + line) }
            if plan.count > 14 {
                emit("    … (\(plan.count - 14) more lines)")
                for line in plan.dropFirst(14) where line.contains("Seq Scan") || line.contains("Rows Removed") { emit("    " + line) }
            }
            if let time = plan.last(where: { $0.contains("Execution Time") }) { emit("    " + time.trimmingCharacters(in: .whitespaces)) }
        }
        return good
    }

    /// EXPLAIN (ANALYZE, BUFFERS) of the store's own claim statement (`PostgresStore.claimQuery`,
    /// with its bound parameters, as a runner sends it), in a transaction rolled back.
    func explainStoreClaim(_ database: String) async throws -> [String] {
        let claim = PostgresStore.claimQuery(owner: "explain", lease: .seconds(30), channels: [PostgresStore.defaultChannel], limit: 512)
        var explain = claim
        explain.sql = "EXPLAIN (ANALYZE, BUFFERS) " + claim.sql
        return try await PostgresStore.withStore(try server.postgresURL(database)) { store in
            try store.client.withSession { session in
                try session.execute("BEGIN")
                defer { _ = try? session.execute("ROLLBACK") }
                return try session.rows(explain).map { try $0.decode(String.self) }
            }
        }
    }

    /// EXPLAIN (ANALYZE, BUFFERS) of the runner's mark (`PostgresStore.MarkOne`, with its
    /// bound parameters) of one occurrence the store's claim took, both in a transaction rolled back.
    func explainStoreMark(_ database: String) async throws -> [String] {
        let claim = PostgresStore.claimQuery(owner: "explain", lease: .seconds(30), channels: [PostgresStore.defaultChannel], limit: 1)
        return try await PostgresStore.withStore(try server.postgresURL(database)) { store in
            try store.client.withSession { session in
                try session.execute("BEGIN")
                defer { _ = try? session.execute("ROLLBACK") }
                var key: OccurrenceKey?
                for row in try session.rows(claim) {
                    key = OccurrenceKey(
                        reminderKey: try row["reminder_key"].decode(Int64.self),
                        dueMicros: try row["due_us"].decode(Int64.self)
                    )
                }
                guard let key else { throw ChimeError(.failure, "the claim took nothing to mark") }
                var explain = PostgresStore.MarkOne.query(key: key, next: nil, owner: "explain", noteID: "explain")
                explain.sql = "EXPLAIN (ANALYZE, BUFFERS) " + explain.sql
                return try session.rows(explain).map { try $0.decode(String.self) }
            }
        }
    }

    // MARK: - 2 and 7. Throughput, and the pgbench floor

    private var measurementCounter: Counter { Counter.shared }

    /// A new database copied from the seed, named for what it measures.
    func freshDatabase(_ what: String) throws -> String {
        let name = "chime_\(what)_\(measurementCounter.next())"
        try server.createDatabase(name, template: Self.seed)
        return name
    }

    /// Inserts the burst due at one instant `leadSeconds` from the database's now; returns that instant (µs).
    func insertBurst(_ database: String, leadSeconds: Double) throws -> Int64 {
        let due = Int64(try server.number(database, "SELECT chime_now_us() + \(Int64(leadSeconds * 1e6))"))
        try server.psql(database, BenchSQL.insertOneShots(count: burst, prefix: "b", title: "Burst", dueExpression: "\(due)"))
        return due
    }

    /// Waits (polling every 250 ms) until nothing due by `lastDue` is left to post, at most
    /// `timeout` s. Returns whether it drained.
    @discardableResult
    func waitDrained(_ database: String, lastDue: Int64, timeout: Double) throws -> Bool {
        let deadline = monotonicSeconds() + timeout
        while monotonicSeconds() < deadline {
            if try server.number(database, BenchSQL.remaining(lastDue: lastDue)) == 0 { return true }
            usleep(250_000)
        }
        return false
    }

    func ledger(_ database: String, filter: String = "true") throws -> LedgerFigures {
        LedgerFigures(try server.rows(database, BenchSQL.ledger(filter: filter)).first ?? [])
    }

    struct Throughput {
        var runner: [Double] = []
        var floor: [Double] = []
        var runnersWork = true
        var why = ""
    }

    /// For 1, 2 and 4: `runs` alternating rounds of the pgbench floor then the runners, each on
    /// a fresh copy of the seed; prints the medians.
    func measureThroughput() throws -> Throughput {
        emit(
            "\n## 2 and 7. Throughput: \(burst) due at one instant on top of \(pending) pending; "
                + "`chime run --notifier json --lease \(Self.lease)` ×1/2/4 vs pgbench (bare claim of 1 + fenced mark), "
                + "occurrences/s from the ledger (posted count over first..last posted_at), medians of \(runs)"
        )
        let script = scratch + "/floor.sql"
        try BenchSQL.floorScript(leaseMicros: 30_000_000).write(toFile: script, atomically: true, encoding: .utf8)
        var result = Throughput()
        let widths = [8, 12, 12, 22, 12, 10, 14]
        var lines: [String] = []
        for count in Self.runnerCounts {
            var runnerRates: [Double] = []
            var floorRates: [Double] = []
            var p50s: [Double] = []
            var p99s: [Double] = []
            var pgbenchTPS: [Double] = []
            var notes: [String] = []
            for _ in 0..<runs {
                let floor = try floorRun(clients: count, script: script)
                floorRates.append(floor.figures.rate)
                pgbenchTPS.append(floor.tps)
                guard result.runnersWork else { continue }
                do {
                    let run = try runnerRun(runners: count)
                    runnerRates.append(run.figures.rate)
                    p50s.append(run.figures.p50)
                    p99s.append(run.figures.p99)
                    if !run.drained { notes.append("\(run.figures.count) posted in \(Int(drainSeconds)) s") }
                } catch {
                    result.runnersWork = false
                    result.why = "\(error)"
                }
            }
            result.runner.append(medianOf(runnerRates))
            result.floor.append(medianOf(floorRates))
            lines.append(
                row(
                    [
                        "\(count)", fmt(medianOf(runnerRates), 0), fmt(medianOf(floorRates), 0),
                        fmt(medianOf(p50s), 0) + " / " + fmt(medianOf(p99s), 0), fmt(medianOf(floorRates) / medianOf(runnerRates), 2),
                        fmt(medianOf(pgbenchTPS), 0), notes.joined(separator: "; "),
                    ],
                    widths: widths
                )
            )
            FileHandle.standardError.write(Data("postgres: \(count) runner(s) measured\n".utf8))
        }
        emit(row(["runners", "runner /s", "floor /s", "burst late p50/p99 ms", "floor/runner", "pgbench tps", "notes"], widths: widths))
        for line in lines { emit(line) }
        emit(
            "(floor: `pgbench -M prepared -c N -j N -T \(floorSeconds)` of \(script.split(separator: "/").last!); pgbench tps counts empty claims too)"
        )
        return result
    }

    /// One pgbench floor run on a fresh copy with the burst already due.
    func floorRun(clients: Int, script: String) throws -> (figures: LedgerFigures, tps: Double) {
        let database = try freshDatabase("floor")
        defer { server.dropDatabase(database) }
        _ = try insertBurst(database, leadSeconds: -1)
        let run = try capture(
            server.bindir + "/pgbench",
            [
                "-n", "-M", "prepared", "-c", "\(clients)", "-j", "\(clients)", "-T", "\(floorSeconds)", "-f", script, "-h",
                server.directory,
                "-U", server.user, database,
            ]
        )
        guard run.status == 0 else {
            throw ChimeError(.failure, "pgbench failed (\(run.status)): \(run.error.suffix(500))")
        }
        let tps = run.output.split(separator: "\n").first { $0.hasPrefix("tps = ") }.flatMap { Double($0.split(separator: " ")[2]) } ?? .nan
        return (try ledger(database), tps)
    }

    /// One runners' run: `runners` runners on a fresh copy, the burst due 2 s after they are up.
    func runnerRun(runners: Int) throws -> (figures: LedgerFigures, drained: Bool) {
        let database = try freshDatabase("run")
        defer { server.dropDatabase(database) }
        var started: [PostgresRunnerProcess] = []
        defer { for runner in started { stopRunner(runner.pid) } }
        for index in 0..<runners {
            started.append(try server.startRunner(database, lease: Self.lease, in: scratch, index: index))
        }
        let due = try insertBurst(database, leadSeconds: 2)
        let drained = try waitDrained(database, lastDue: due, timeout: drainSeconds + 2)
        // Stopped here, so that the ledger holds what they posted in the window.
        for runner in started { stopRunner(runner.pid) }
        started = []
        return (try ledger(database), drained)
    }

    // MARK: - 3. Lateness

    /// 300 one-shots due over 20 s, scheduled through the store (as `chime at` does), one runner.
    func idleLateness() async throws -> LedgerFigures {
        let count = 300
        let spread = 20.0
        emit("\n## 3. Lateness (posted_at - due, from the ledger), ms")
        let database = try freshDatabase("idle")
        defer { server.dropDatabase(database) }
        let runner = try server.startRunner(database, lease: Self.lease, in: scratch, index: 0)
        defer { stopRunner(runner.pid) }
        let url = try server.postgresURL(database)
        let first = Date().addingTimeInterval(3)
        let reminders = evenOneShots(count, prefix: "i", title: "Idle", from: first, over: spread)
        try await PostgresStore.withStore(url) { store in
            for reminder in reminders { _ = try store.schedule(reminder, systemZone: .current) }
        }
        let lastDue = first.addingTimeInterval(spread).micros
        let drained = try waitDrained(database, lastDue: lastDue, timeout: spread + 30)
        let figures = try ledger(database)
        let widths = [52, 12, 10, 10, 10]
        emit(row(["when", "count", "p50", "p99", "max"], widths: widths))
        emit(
            row(
                [
                    "idle: \(count) over \(Int(spread)) s, 1 runner\(drained ? "" : " (not drained!)")", "\(figures.count)",
                    fmt(figures.p50, 1),
                    fmt(figures.p99, 1), fmt(figures.max, 1),
                ],
                widths: widths
            )
        )
        emit("(during the burst: the throughput table above, medians of p50 / p99)")
        return figures
    }

    /// Two runners with a 5 s lease, the burst due; mid-burst (a third posted, or 3 s into it)
    /// the first runner is `kill -9`ed. The occurrences it held (`posting` under its lease) are
    /// posted by the other after the lease: how long after the kill.
    func measureFailover() throws -> (figures: LedgerFigures, orphans: LedgerFigures, held: Int, recovery: Double) {
        let database = try freshDatabase("failover")
        defer { server.dropDatabase(database) }
        var runners: [PostgresRunnerProcess] = []
        defer { for runner in runners { stopRunner(runner.pid) } }
        for index in 0..<2 {
            runners.append(try server.startRunner(database, lease: Self.failoverLease, in: scratch, index: 10 + index))
        }
        let victim = runners[0]
        let due = try insertBurst(database, leadSeconds: 2)
        let dueMonotonic = monotonicSeconds() + 2
        // Mid-burst.
        while monotonicSeconds() < dueMonotonic + 3, try server.number(database, BenchSQL.remaining(lastDue: due)) > Double(burst * 2 / 3) {
            usleep(100_000)
        }
        let killedAt = Date().timeIntervalSince1970
        killRunner(victim.pid)
        // What it held at its death: its transactions in flight were rolled back when its
        // connections closed; wait until they have.
        let gone = monotonicSeconds() + 5
        while monotonicSeconds() < gone, try server.runnerOwners(database).contains(victim.owner) { usleep(20_000) }
        try server.psql(
            database,
            """
            CREATE TABLE bench_orphans AS SELECT reminder_key, due_us FROM occurrence
            WHERE state = 'posting' AND lease_owner = '\(victim.owner)'
            """
        )
        let held = Int(try server.number(database, "SELECT count(*) FROM bench_orphans"))
        let orphaned = "(reminder_key, due_us) IN (SELECT reminder_key, due_us FROM bench_orphans)"
        // Until the other runner has posted every one of them (at most lease + poll + 10 s).
        let deadline = monotonicSeconds() + Self.failoverLeaseSeconds + Self.pollSeconds + 10
        while monotonicSeconds() < deadline,
            try server.number(database, "SELECT count(*) FROM occurrence WHERE state <> 'posted' AND \(orphaned)") > 0
        {
            usleep(100_000)
        }
        let figures = try ledger(database)
        let orphans = held > 0 ? try ledger(database, filter: orphaned) : LedgerFigures()
        let lastOrphan =
            held > 0 && orphans.count == held
            ? try server.number(database, "SELECT extract(epoch FROM max(posted_at)) FROM occurrence WHERE \(orphaned)") : Double.nan
        let recovery = lastOrphan - killedAt
        let widths = [52, 12, 10, 10, 10]
        emit(
            row(
                [
                    "failover: 2 runners, lease \(Self.failoverLease), kill -9 mid-burst", "\(figures.count)", fmt(figures.p50, 1),
                    fmt(figures.p99, 1), fmt(figures.max, 1),
                ],
                widths: widths
            )
        )
        emit(
            row(
                [
                    "  of which those the killed runner held", "\(orphans.count)/\(held)", fmt(orphans.p50, 1), fmt(orphans.p99, 1),
                    fmt(orphans.max, 1),
                ],
                widths: widths
            )
        )
        emit(
            "failover: the last occurrence the killed runner held was posted \(fmt(recovery, 2)) s after the kill "
                + "(target: within lease \(Self.failoverLease) + poll \(Int(Self.pollSeconds)) s; NaN: not all posted)"
        )
        return (figures, orphans, held, recovery)
    }

    // MARK: - 4. Queries per idle minute

    /// Two idle runners (nothing due for 30 days), pg_stat_statements reset once they are up,
    /// read after `idleSeconds`: calls per runner per minute, and the statements.
    func idleQueries() throws -> Double {
        emit("\n## 4. Queries per idle minute per runner (pg_stat_statements, 2 idle runners, \(idleSeconds) s)")
        let database = try freshDatabase("queries")
        defer { server.dropDatabase(database) }
        var runners: [PostgresRunnerProcess] = []
        defer { for runner in runners { stopRunner(runner.pid) } }
        for index in 0..<2 { runners.append(try server.startRunner(database, lease: Self.lease, in: scratch, index: 20 + index)) }
        sleep(2)  // their first pass done
        try server.psql(PostgresServer.statementsDatabase, "SELECT pg_stat_statements_reset()")
        sleep(UInt32(idleSeconds))
        let oid = try server.psql("postgres", "SELECT oid FROM pg_database WHERE datname = '\(database)'")
        let statements = try server.rows(
            PostgresServer.statementsDatabase,
            """
            SELECT calls, toplevel, regexp_replace(left(query, 70), '\\s+', ' ', 'g') FROM pg_stat_statements
            WHERE dbid = \(oid) ORDER BY toplevel DESC, calls DESC
            """
        )
        let toplevel = statements.filter { $0.count > 1 && $0[1] == "t" }.reduce(0) { $0 + (Int($1[0]) ?? 0) }
        let nested = statements.filter { $0.count > 1 && $0[1] == "f" }.reduce(0) { $0 + (Int($1[0]) ?? 0) }
        let perRunnerMinute = Double(toplevel) / 2 / (Double(idleSeconds) / 60)
        emit(
            "\(toplevel) statements from the clients (+ \(nested) nested, inside functions) in \(idleSeconds) s: "
                + "\(fmt(perRunnerMinute, 1)) per runner per minute"
        )
        for statement in statements.prefix(12) where statement.count > 2 {
            emit(
                "    \(statement[0].padding(toLength: 6, withPad: " ", startingAt: 0)) \(statement[1] == "t" ? "" : "(nested) ")\(statement[2])"
            )
        }
        return perRunnerMinute
    }

    // MARK: - 6. Dead tuples

    /// `churn` schedule + post cycles on the seed (1,000,000 live), through the store's own
    /// calls as a runner makes them (schedule, claim, markPosted one at a time), 4 at once;
    /// then the dead and live tuples of both tables, and whether autovacuum ran.
    func deadTuples() async throws {
        guard churn > 0 else { return }
        emit(
            "\n## 6. Dead tuples after \(churn) schedule + post cycles (as many as an hour of a service scheduling and posting \(fmt(Double(churn) / 3600, 1)) a second), through the store's calls, 4 at once"
        )
        let url = try server.postgresURL(Self.seed)
        let start = monotonicSeconds()
        let batch = 1_000
        let churn = churn
        // Four lanes, each with a store (a connection) of its own, as four clients.
        let stores = (0..<4).map { _ in PostgresStore(url) }
        defer { for store in stores { store.client.reset() } }
        do {
            let store = stores[0]
            var done = 0
            while done < churn {
                let size = min(batch, churn - done)
                let offset = done
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for lane in 0..<4 {
                        group.addTask { [store = stores[lane]] in
                            for index in stride(from: lane, to: size, by: 4) {
                                let reminder = NewReminder(
                                    id: "c\(offset + index)",
                                    title: "Churn \(offset + index)",
                                    trigger: .once(Date().addingTimeInterval(1))
                                )
                                _ = try store.schedule(reminder, systemZone: .current)
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                // The batch's last one is due at most 1 s after it was scheduled.
                try await Task.sleep(for: .milliseconds(1_050))
                while true {
                    let claimed = try store.claim(owner: "chime-bench churn", lease: .seconds(30))
                    if claimed.isEmpty { break }
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for lane in 0..<4 {
                            group.addTask { [store = stores[lane]] in
                                for index in stride(from: lane, to: claimed.count, by: 4) {
                                    _ = try store.markPosted(
                                        claimed[index],
                                        owner: "chime-bench churn",
                                        noteID: "bench",
                                        systemZone: .current
                                    )
                                }
                            }
                        }
                        try await group.waitForAll()
                    }
                }
                done += size
            }
        }
        let elapsed = monotonicSeconds() - start
        // The churn's connections are closed: each backend flushed its counts as it exited.
        sleep(1)
        let stats = try server.rows(
            Self.seed,
            """
            SELECT s.relname, s.n_live_tup, s.n_dead_tup, s.autovacuum_count, coalesce(s.last_autovacuum::text, 'never'),
                   s.autoanalyze_count, s.n_tup_hot_upd, s.n_tup_upd,
                   (current_setting('autovacuum_vacuum_threshold')::float
                    + current_setting('autovacuum_vacuum_scale_factor')::float * c.reltuples)::bigint
            FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
            WHERE s.relname IN ('occurrence', 'reminder') ORDER BY s.relname
            """
        )
        emit("churn took \(fmt(elapsed, 1)) s (\(fmt(Double(churn) / elapsed, 0)) cycles/s)")
        let widths = [12, 10, 10, 8, 22, 14, 12, 22]
        emit(
            row(
                ["table", "live", "dead", "dead %", "autovacuum runs (last)", "autoanalyzes", "HOT/updates", "autovacuum at dead ≥"],
                widths: widths
            )
        )
        for fields in stats where fields.count == 9 {
            let live = Double(fields[1]) ?? .nan
            let dead = Double(fields[2]) ?? .nan
            emit(
                row(
                    [
                        fields[0], fields[1], fields[2], fmt(dead / max(live, 1) * 100, 1), "\(fields[3]) (\(fields[4].prefix(19)))",
                        fields[5],
                        "\(fields[6])/\(fields[7])", fields[8],
                    ],
                    widths: widths
                )
            )
        }
    }
}

/// Runs one part of the figures; when it fails, says so and goes on with the others.
func section<Result>(_ name: String, _ body: () async throws -> Result) async -> Result? {
    do {
        return try await body()
    } catch {
        emit("(\(name) failed: \(error))")
        return nil
    }
}

/// Numbers for database names, one a call.
final class Counter: Sendable {
    static let shared = Counter()
    private let value = Mutex(0)

    func next() -> Int {
        value.withLock {
            $0 += 1
            return $0
        }
    }
}

/// An environment with HOME and the XDG directories under `directory` (made here), and none of
/// the invoking user's Chime settings.
func isolatedEnvironment(_ directory: String) throws -> [String: String] {
    var environment = ProcessInfo.processInfo.environment
    for (key, sub) in [
        ("HOME", "home"), ("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"), ("XDG_STATE_HOME", "state"),
        ("XDG_RUNTIME_DIR", "runtime"),
    ] {
        try FileManager.default.createDirectory(atPath: directory + "/" + sub, withIntermediateDirectories: true)
        environment[key] = directory + "/" + sub
    }
    for key in ["CHIME_STORE", "CHIME_NOTIFIER", "CHIME_LOG_LEVEL", "NOTIFY_SOCKET", "PGPASSWORD"] { environment[key] = nil }
    return environment
}

/// Prints a line and flushes it at once: a run takes minutes and is watched through a pipe or a file.
func emit(_ line: String) {
    print(line)
    fflush(nil)
}
