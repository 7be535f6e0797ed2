import Foundation
import Testing

/// The Doses form's schedule choice (days of the week, every N days, on-off cycle, as needed):
/// a medication every third day added through the form by accessible names, read back by the
/// CLI, and opened again for editing as what it is, its rule kept when its times change.
@Suite(.serialized)
struct AppDoseScheduleTests {
    @Test func anEveryThreeDaysMedicationIsAddedThroughTheFormAndEditedAsOne() async throws {
        let display = try VirtualDisplay()
        defer { display.stop() }
        let bus = try SessionBus(on: display)
        defer { bus.stop(display: display) }
        let environment = AppWindowTests.environment(display, bus)
        let app = try GateWindowProcess(on: display, ["app", "doses"], environment: environment)
        defer { app.stop() }
        #expect(await app.next("presented ") == "presented page=doses", "\(app.lines) \(app.stderr)")
        func atspi(_ arguments: String...) throws -> (status: Int32, output: String) {
            try Accessibility.run(arguments, on: display, environment: environment)
        }
        func names() -> String { (try? Accessibility.run(["names"], on: display, environment: environment).output) ?? "" }
        func schedule() throws -> [String: Any]? {
            let listed = try display.run(AppWindowTests.chime, ["med", "list", "--json"], environment: environment).output
            let medications = AppDosesTests.json(listed)["medications"] as? [[String: Any]]
            return (medications?.first?["schedules"] as? [[String: Any]])?.last { $0["enabled"] as? Bool == true }
        }
        let ready = try await Accessibility.wait(["has", "Add Medication"], on: display, environment: environment) { status, _ in
            status == 0
        }
        #expect(!ready.isEmpty, "no Add Medication button: \(app.stderr)")

        // When the person adds a medication every third day from a start date
        #expect(try atspi("click", "Add Medication").output.hasPrefix("clicked"))
        let named = try await Accessibility.wait(["entry-set", "Name", "Everythird", "dialog"], on: display, environment: environment) {
            status,
            _ in status == 0
        }
        #expect(named.hasPrefix("set"), "\(named) \(names())")
        #expect(try atspi("entry-set", "Amount", "1", "dialog").status == 0)
        #expect(try atspi("entry-set", "Unit", "tablet", "dialog").status == 0)
        #expect(try atspi("entry-set", "Times", "08:00", "dialog").status == 0)
        // (The days of the week are there until another kind is chosen.)
        #expect(try atspi("has", "Monday", "dialog").status == 0, "\(names())")
        #expect(try atspi("click", "Every N days", "dialog").output.hasPrefix("clicked"), "\(names())")
        // (Then only its fields show: no days of the week.)
        let every = try await Accessibility.wait(
            ["entry-set", "Every how many days", "3", "dialog"],
            on: display,
            environment: environment
        ) {
            status,
            _ in status == 0
        }
        #expect(every.hasPrefix("set"), "\(every) \(names())")
        #expect(try atspi("has", "Monday", "dialog").status != 0, "the days of the week still show: \(names())")
        #expect(try atspi("entry-set", "Start date", "2026-11-20", "dialog").status == 0)
        #expect(try atspi("click", "Save", "dialog").output.hasPrefix("clicked"))

        // Then the CLI reads it as every 3 days from that date
        var saved: [String: Any]?
        for _ in 0..<40 where saved == nil {
            saved = try schedule()
            if saved == nil { try await Task.sleep(for: .milliseconds(250)) }
        }
        #expect(saved?["every_days"] as? Int == 3, "\(String(describing: saved)) \(app.stderr)")
        #expect(saved?["from"] as? String == "2026-11-20")
        #expect(saved?["summary"] as? String == "every 3 days from 2026-11-20 08:00", "\(String(describing: saved))")

        // When they open it again to edit
        let edit = try await Accessibility.wait(["click-starting", "Edit Everythird (1 tablet)"], on: display, environment: environment) {
            status,
            _ in status == 0
        }
        #expect(edit.hasPrefix("clicked"), "\(edit) \(names())")
        // Then the form shows its schedule as it is: every 3 days from its date, no weekdays
        let rule = try await Accessibility.wait(["entry-text", "Every how many days", "dialog"], on: display, environment: environment) {
            _,
            output in output.trimmingCharacters(in: .whitespacesAndNewlines) == "3"
        }
        #expect(rule.trimmingCharacters(in: .whitespacesAndNewlines) == "3", "\(rule) \(names())")
        #expect(try atspi("entry-text", "Start date", "dialog").output.trimmingCharacters(in: .whitespacesAndNewlines) == "2026-11-20")
        #expect(try atspi("has", "Days on", "dialog").status != 0)
        #expect(try atspi("has", "Monday", "dialog").status != 0)

        // When only its time changes, the rule stays
        #expect(try atspi("entry-set", "Times", "09:00", "dialog").status == 0)
        #expect(try atspi("click", "Save", "dialog").output.hasPrefix("clicked"))
        var changed: [String: Any]?
        for _ in 0..<40 {
            changed = try schedule()
            if changed?["summary"] as? String == "every 3 days from 2026-11-20 09:00" { break }
            try await Task.sleep(for: .milliseconds(250))
        }
        #expect(changed?["summary"] as? String == "every 3 days from 2026-11-20 09:00", "\(String(describing: changed))")
        #expect(changed?["from"] as? String == "2026-11-20")
    }
}
