import ChimeCore
import ChimeDoses
import ChimeFocus
import ChimeGateway
import ChimeStore
import Foundation
import GRDB
import Testing

/// The families' tables moved out of ChimeStore into their libraries: a store made by the Chime
/// that shipped them inside it (`Fixtures/shipped-v5.sqlite`, made by chime at e047e90 with a
/// reminder, a medication and its dose, and a focus session) opens with its data and gets only
/// what came after it (the gateway's v6), and a store made now has exactly its schema plus that.
@Suite struct ShippedSchemaTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/shipped-v5.sqlite").path

    /// Every migration applied (in order) and every table's and index's SQL.
    static func schema(_ path: String) throws -> [String] {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in
            try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY rowid")
                + String.fetchAll(
                    db,
                    sql:
                        "SELECT type || ' ' || name || ': ' || ifnull(sql, '') FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name"
                )
        }
    }

    /// What came after the fixture's Chime: the gateway's migration and tables (v6), how a
    /// reminder's alert looks with snoozed re-alerts (v7: its name and index), v8's migration, quiet
    /// hours (v9: its table and index), hooks (v12: its table and index), focus breaks (v13: its table
    /// and index), dose schedules every N days and in cycles (v14), the gateway's schedules and
    /// budgets (v15: its table), focus session labels (``FocusTimer/labelMigration``), the gateway's
    /// runs (``StoreSchema/gateRunsMigration``: its table and indexes), focus idle pauses
    /// (``FocusIdleMigration/name``: columns only), the moment back from an idle pause
    /// (``FocusIdleMigration/returnName``: a column), doses after the last taken, maximums and tapers
    /// (``DoseBook/afterLastMigration``), someone else told about doses (``DoseTellRules/migration``:
    /// its two tables and index) (the columns they add to shipped tables are taken out by
    /// ``shippedPart(_:)``).
    static func sinceShipped(_ line: String) -> Bool {
        line.hasPrefix("v6: ") || line.contains(" gate_") || line.hasPrefix("v7: ") || line.hasPrefix("index occurrence_snooze: ")
            || line.hasPrefix("v8: ") || line.hasPrefix("v9: ") || line.hasPrefix("table quiet:")
            || line.hasPrefix("index occurrence_held:") || line.hasPrefix("v10: ") || line.hasPrefix("index occurrence_command_running:")
            || line.hasPrefix("v11: ") || line.hasPrefix("index reminder_app:") || line.hasPrefix("v12: ")
            || line.hasPrefix("table hook_run:") || line.hasPrefix("index hook_run_open:")
            || line.hasPrefix("v13: ") || line.hasPrefix("table focus_break:") || line.hasPrefix("index focus_break_by_state:")
            || line.hasPrefix("v14: ") || line.hasPrefix("v15: ") || line.hasPrefix(FocusTimer.labelMigration)
            || line == StoreSchema.gateRunsMigration
            || line.hasPrefix(FocusIdleMigration.name) || line == FocusIdleMigration.returnName
            || line == DoseBook.afterLastMigration
            || line.hasPrefix(DoseTellRules.migration) || line.hasPrefix("table medication_tell:") || line.hasPrefix("table dose_tell:")
            || line.hasPrefix("index dose_tell_pending:")
    }

    /// The columns later migrations added to shipped tables, as SQLite appends them to a table's SQL.
    static let addedColumns = [
        ", urgency TEXT CHECK (urgency IN ('low', 'normal', 'critical'))", ", sticky INTEGER NOT NULL DEFAULT 0", ", icon TEXT",
        ", sound TEXT", ", snooze_of_us INTEGER",
        ", by_month INTEGER CHECK (by_month BETWEEN 1 AND 12), by_month_day INTEGER CHECK (by_month_day BETWEEN 1 AND 31), "
            + "until_day INTEGER, rule_count INTEGER CHECK (rule_count > 0), count_start_us INTEGER",
        ", via TEXT", ", held_us INTEGER", ", command TEXT",
        ", command_state TEXT CHECK (command_state IN ('running', 'exited', 'timed_out', 'interrupted', 'failed')), "
            + "command_pid INTEGER, command_started_us INTEGER, command_ended_us INTEGER, command_exit INTEGER, "
            + "command_output TEXT, command_error TEXT",
        ", app_id TEXT, actions TEXT",
        ", every_days INTEGER CHECK (every_days IS NULL OR every_days BETWEEN 2 AND 365), "
            + "cycle_on INTEGER CHECK (cycle_on IS NULL OR cycle_on BETWEEN 1 AND 365), "
            + "cycle_off INTEGER CHECK (cycle_off IS NULL OR cycle_off BETWEEN 1 AND 365), anchor_day INTEGER",
        ", label TEXT CHECK (label IS NULL OR length(label) > 0)",
        ", pause_reason TEXT CHECK (pause_reason IN ('idle')), idle_pauses INTEGER NOT NULL DEFAULT 0",
        // The moment back from an idle pause (``FocusIdleMigration/returnName``).
        ", back_us INTEGER",
        // After-last schedules, daily maximums, tapers (``DoseBook/afterLastMigration``).
        ", after_last_s INTEGER CHECK (after_last_s IS NULL OR after_last_s BETWEEN 60 AND 604800), "
            + "max_per_day INTEGER CHECK (max_per_day IS NULL OR max_per_day BETWEEN 1 AND 100)",
        ", taper TEXT", ", amount REAL CHECK (amount IS NULL OR amount > 0)",
    ]

    /// A schema line without what later migrations added to a shipped table.
    static func shippedPart(_ line: String) -> String {
        addedColumns.reduce(line) { $0.replacingOccurrences(of: $1, with: "") }
    }

    @Test func aStoreMadeNowHasTheShippedSchema() throws {
        let sandbox = try Sandbox()
        _ = try ReminderStore(path: sandbox.store, schemas: chimeSchemas)
        let shipped = try Self.schema(Self.fixture)
        #expect(shipped.count > 20)
        let now = try Self.schema(sandbox.store)
        #expect(now.filter { !Self.sinceShipped($0) }.map(Self.shippedPart) == shipped)
        #expect(now.filter(Self.sinceShipped).count == 36)
        #expect(now.filter { Self.shippedPart($0) != $0 }.count == 6)
    }

    @Test func aShippedStoreOpensUnchangedWithItsData() throws {
        let sandbox = try Sandbox()
        try FileManager.default.copyItem(atPath: Self.fixture, toPath: sandbox.store)
        let before = try Self.schema(sandbox.store)
        #expect(!before.contains(where: Self.sinceShipped))
        let store = try ReminderStore(path: sandbox.store, schemas: chimeSchemas, access: .update)
        #expect(store.isFile)
        #expect(try store.pending().map(\.id).contains("tea"))
        let book = DoseBook(store: store)
        #expect(try book.medications().map(\.medication.name) == ["Aspirin"])
        // v14's columns: the shipped schedule reads as days of the week, and a cycle is kept.
        #expect(try book.medication("Aspirin").schedules.map(\.dayRule) == [nil])
        let pill = try book.addMedication(
            MedicationDraft(name: "Pill", amount: "1", unit: "tablet", startDay: 20_800),
            schedule: ScheduleDraft(times: [LocalTime(hour: 21, minute: 0)!], dayRule: .cycle(on: 21, off: 7, from: 20_800))
        )
        #expect(try book.medication(String(pill.medication.id)).schedules.map(\.dayRule) == [.cycle(on: 21, off: 7, from: 20_800)])
        #expect(try book.medications().map(\.medication.name) == ["Aspirin", "Pill"])
        #expect(try FocusTimer(store: store).latest() != nil)
        #expect(try Self.schema(sandbox.store).filter { !Self.sinceShipped($0) }.map(Self.shippedPart) == before)
        // v8's columns work on the upgraded store: a monthly rule with an end is kept and read back.
        let rule = Trigger.bounded(
            .calendar(CalendarRule(month: nil, day: 31, times: [LocalTime(hour: 9, minute: 0)!], zone: .fixed("Europe/Berlin"))),
            .count(3, start: Date(timeIntervalSince1970: 1_800_000_000))
        )
        try store.schedule(
            NewReminder(id: "rent", title: "Rent", trigger: rule),
            now: Date(timeIntervalSince1970: 1_800_000_000),
            systemZone: .current
        )
        #expect(try store.reminder(id: "rent").trigger == rule)
        #expect(try store.pending().map(\.id).contains("tea"))
    }
}
