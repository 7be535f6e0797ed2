import GRDB

/// A part of the store's schema, as named migrations: the store's own (reminders and the
/// delivery ledger, ``reminders``) or a reminder family's tables (each family library defines
/// its own as a static member of ``StoreSchema``). Every process opening a store hands
/// ``ReminderStore`` the same families' schemas: a store holding a migration its opener does
/// not know is refused as made by a newer Chime.
///
/// The store applies every part's migrations in one order, by the number of their names
/// ("v3: …" is third), the order they shipped in: a store made by any earlier
/// Chime opens unchanged and gets only what it lacks. A migration that has shipped is never
/// edited: add another, numbered after the highest.
public struct StoreSchema: Sendable {
    /// One named migration.
    public struct Migration: Sendable {
        /// Its name, recorded in the store once applied: "v" + its number + ": " + what it adds.
        public let name: String
        /// Its place in the order all migrations are applied in (the number in its name).
        public let number: Int
        /// The reminder kind whose reminders this migration indexes by id (see
        /// ``init(_:indexingRemindersOfKind:apply:)``).
        let indexedKind: String?
        let apply: @Sendable (Database) throws -> Void

        /// A migration named `name` ("v6: what it adds") that runs `apply`
        /// on the family's own tables.
        ///
        /// - Parameter indexingRemindersOfKind: a family whose use cases find their reminders
        ///   by id (an alert and its repeats under one id) asks for the partial index
        ///   `reminder_KIND ON reminder(id) WHERE kind = 'KIND'`, made after `apply` in the same
        ///   migration; the store's typed API then reads with that kind as a literal.
        public init(
            _ name: String,
            indexingRemindersOfKind kind: String? = nil,
            apply: @escaping @Sendable (Database) throws -> Void
        ) {
            let digits = name.dropFirst().prefix { $0.isNumber }
            guard name.hasPrefix("v"), let number = Int(digits), name.dropFirst(1 + digits.count).hasPrefix(": ") else {
                preconditionFailure("a migration's name is 'vN: what it adds', not '\(name)'")
            }
            precondition(kind?.allSatisfy { $0.isLetter && $0.isASCII } ?? true, "a reminder kind is ASCII letters, not '\(kind ?? "")'")
            (self.name, self.number, self.indexedKind, self.apply) = (name, number, kind, apply)
        }
    }

    /// Who owns these tables, for messages ("notes", say).
    public let owner: String
    /// Its migrations.
    public let migrations: [Migration]

    public init(owner: String, migrations: [Migration]) {
        (self.owner, self.migrations) = (owner, migrations)
    }

    /// The migrator of the store's own schema plus `families`' schemas, in the shipped order.
    static func migrator(_ families: [StoreSchema]) -> DatabaseMigrator {
        let all = ([reminders] + families).flatMap(\.migrations).sorted { $0.number < $1.number }
        for (earlier, later) in zip(all, all.dropFirst()) where earlier.number == later.number {
            preconditionFailure("two migrations numbered \(later.number): '\(earlier.name)' and '\(later.name)'")
        }
        var migrator = DatabaseMigrator()
        for migration in all {
            migrator.registerMigration(migration.name) { db in
                try migration.apply(db)
                if let kind = migration.indexedKind {
                    try db.execute(sql: "CREATE INDEX reminder_\(kind) ON reminder(id) WHERE kind = '\(kind)'")
                }
            }
        }
        return migrator
    }
}
