import ChimeCore
import ChimePostgres
import Foundation

extension Doctor {
    /// What doctor finds with a PostgreSQL store: the desktop (this host's runner shows alerts
    /// there), the store (its URL redacted), whether it can be reached, its schema's migrations,
    /// how many runners are connected, where alerts would go, the config file.
    struct PostgresDiagnosis: Report {
        struct Store: Encodable {
            /// The URL, its password redacted.
            var path: String
            var kind = "postgresql"
            var reachable: Bool
            var usable: Bool
            @Nullable var problem: String? = nil
            var pending: Int?
            var migrations: Migrations?
        }
        struct Migrations: Encodable {
            var applied: [String]
            /// Those this Chime has that the database lacks: 'chime store init' applies them.
            var missing: [String]
            /// Those the database has that this Chime does not know (a newer Chime made them).
            var unknown: [String]
        }
        struct RunnerState: Encodable {
            var running: Bool
            /// The runners connected to the database now, on any host.
            var connected: Int?
        }
        var desktop: Diagnosis.Desktop
        var store: Store
        var runner: RunnerState
        /// Where a runner started on this host with --notifier auto would send alerts now.
        var notifier: String
        var config: Diagnosis.ConfigState
        var error: Diagnosis.ErrorInfo?

        var lines: [String] {
            var lines = desktop.lines
            if store.reachable && store.usable {
                lines.append("Store:                \(store.path) (PostgreSQL), \(store.pending ?? 0) pending")
            } else {
                lines.append("Store:                \(store.path) (PostgreSQL): \(store.problem ?? "unusable")")
            }
            if let migrations = store.migrations {
                let applied = "\(migrations.applied.count) migration\(migrations.applied.count == 1 ? "" : "s") applied"
                if !migrations.unknown.isEmpty {
                    lines.append(
                        "Schema:               \(applied), of which unknown to this Chime (made by a newer one): "
                            + migrations.unknown.joined(separator: ", ")
                    )
                } else if migrations.missing.isEmpty {
                    lines.append("Schema:               \(applied), up to date")
                } else {
                    lines.append(
                        "Schema:               \(applied), missing \(migrations.missing.joined(separator: ", ")): run 'chime store init'"
                    )
                }
            }
            if let connected = runner.connected {
                lines.append(
                    "Runners:              "
                        + (connected == 0
                            ? "none connected: start one with 'chime run'"
                            : "\(connected) connected")
                )
            }
            lines.append("Alerts go to:         a runner started here now with --notifier auto would use the \(notifier)")
            if let problem = config.problem {
                lines.append("Config file:          \(config.path): \(problem)")
            } else {
                lines.append(
                    "Config file:          \(config.path)"
                        + (config.exists ? " (valid)" : ": none (the built-in defaults; 'chime config edit' makes one)")
                )
            }
            return lines
        }
    }

    /// Doctor on a PostgreSQL store: reads only (no migration applied, nothing written).
    /// Exit 5 when the store cannot be reached or its schema is not this Chime's; 78 for a bad
    /// config file.
    func runPostgres(_ url: PostgresURL, desktop: Diagnosis.Desktop, notifier: String) async throws {
        var store = PostgresDiagnosis.Store(path: url.description, reachable: false, usable: false)
        var runner = PostgresDiagnosis.RunnerState(running: false)
        do {
            let found = try await PostgresStore.withCheckedStore(url) { postgres in
                let applied: [String]
                do {
                    applied = try postgres.appliedMigrations()
                } catch let error as PostgresError where error.sqlState == "42P01" {
                    applied = []  // no chime_migrations: the schema was never made
                }
                let known = PostgresSchema.migrations.map(\.name)
                let migrations = PostgresDiagnosis.Migrations(
                    applied: applied,
                    missing: known.filter { !applied.contains($0) },
                    unknown: applied.filter { !known.contains($0) }
                )
                let pending = migrations.missing.isEmpty ? try postgres.pendingCount() : nil
                return (migrations, pending, try postgres.runnerCount())
            }
            store.reachable = true
            store.migrations = found.0
            store.pending = found.1
            runner = PostgresDiagnosis.RunnerState(running: found.2 > 0, connected: found.2)
            if !found.0.unknown.isEmpty {
                store.problem =
                    "the database has migrations this Chime does not know (\(found.0.unknown.joined(separator: ", "))): it was made by a newer Chime"
            } else if !found.0.missing.isEmpty {
                store.problem =
                    found.0.applied.isEmpty
                    ? "no Chime schema yet: run 'chime store init'"
                    : "its schema is older than this Chime: run 'chime store init' (with the runners stopped)"
            } else {
                store.usable = true
            }
        } catch let error as ChimeError {
            // Unreachable, or a user it does not let in: reached is whether a connection was made.
            store.problem = error.message
            store.reachable = !error.message.hasPrefix("cannot reach")
        } catch {
            store.problem = PostgresStore.storeError(error, url: url).message
        }
        var report = PostgresDiagnosis(
            desktop: desktop,
            store: store,
            runner: runner,
            notifier: notifier,
            config: inspectConfig()
        )
        let configError = report.config.problem.map { ChimeError(.config, $0) }
        if let configError {
            report.error = .init(code: "config", message: configError.message, exit: configError.code.exitStatus)
        }
        emit(report, json: global.json)
        try finish(failed: !store.usable, configError: configError)
    }
}
