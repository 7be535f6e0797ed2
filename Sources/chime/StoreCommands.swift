import ArgumentParser
import ChimeCore
import ChimePostgres
import ChimeStore
import Foundation

/// `chime store`: the store itself.
struct StoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "Set up the store (a PostgreSQL store's schema).",
        discussion: """
            More: man chime (chime store init, POSTGRESQL STORE)
            """,
        subcommands: [StoreInit.self]
    )
}

/// `chime store init`: makes (or brings up to date) the store's schema. A PostgreSQL store needs
/// it once before anything else (named, forward-only migrations, in one transaction; running it
/// again changes nothing); a SQLite store is made by the first command that schedules, and this
/// makes it now.
struct StoreInit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Create the store's schema, or bring it up to date (safe to run again).",
        discussion: """
            A database store needs it once, by a role that may create tables. A newer
            Chime's schema is refused, unchanged (exit 5).
            Examples:
              chime store init
              chime store init --store postgresql:///chime?host=/run/postgresql
            More: man chime (POSTGRESQL STORE)
            """
    )

    @OptionGroup var global: GlobalOptions

    struct Initialized: Report {
        var store: String
        var engine: String
        var applied: [String]
        var migrations: [String]

        var lines: [String] {
            if engine == "sqlite" { return ["The SQLite store \(store) is ready."] }
            if applied.isEmpty { return ["The PostgreSQL store \(store) is up to date (\(migrations.count) migrations)."] }
            return ["The PostgreSQL store \(store): applied \(applied.joined(separator: ", "))."]
        }
    }

    func run() async throws {
        if let url = try global.postgresURL() {
            let (applied, all) = try await global.withPostgres(url) { store in
                let applied = try store.migrate()
                return (applied, try store.appliedMigrations())
            }
            emit(Initialized(store: url.description, engine: "postgresql", applied: applied, migrations: all), json: global.json)
            return
        }
        let store = try global.openStore(.create)
        emit(Initialized(store: store.path, engine: "sqlite", applied: [], migrations: []), json: global.json)
    }
}
