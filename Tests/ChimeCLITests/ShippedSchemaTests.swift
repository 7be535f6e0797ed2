import ChimeCore
import ChimeDoses
import ChimeFocus
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

    /// What came after the fixture's Chime: the gateway's migration and tables, and quiet hours
    /// (v9: its table and index).
    static func sinceShipped(_ line: String) -> Bool {
        line.hasPrefix("v6: ") || line.contains(" gate_") || line.hasPrefix("v9: ") || line.hasPrefix("table quiet:")
            || line.hasPrefix("index occurrence_held:")
    }

    /// The schema less what came after the fixture's Chime, and its columns added to shipped
    /// tables (v9's `occurrence.held_us`) taken out again.
    static func asShipped(_ lines: [String]) -> [String] {
        lines.filter { !sinceShipped($0) }.map { $0.replacingOccurrences(of: ", held_us INTEGER", with: "") }
    }

    @Test func aStoreMadeNowHasTheShippedSchema() throws {
        let sandbox = try Sandbox()
        _ = try ReminderStore(path: sandbox.store, schemas: chimeSchemas)
        let shipped = try Self.schema(Self.fixture)
        #expect(shipped.count > 20)
        let now = try Self.schema(sandbox.store)
        #expect(Self.asShipped(now) == shipped)
        #expect(now.filter(Self.sinceShipped).count == 8)
    }

    @Test func aShippedStoreOpensUnchangedWithItsData() throws {
        let sandbox = try Sandbox()
        try FileManager.default.copyItem(atPath: Self.fixture, toPath: sandbox.store)
        let before = try Self.schema(sandbox.store)
        #expect(!before.contains(where: Self.sinceShipped))
        let store = try ReminderStore(path: sandbox.store, schemas: chimeSchemas, access: .update)
        #expect(store.isFile)
        #expect(try store.pending().map(\.id).contains("tea"))
        #expect(try DoseBook(store: store).medications().map(\.medication.name) == ["Aspirin"])
        #expect(try FocusTimer(store: store).latest() != nil)
        #expect(try Self.asShipped(Self.schema(sandbox.store)) == before)
    }
}
