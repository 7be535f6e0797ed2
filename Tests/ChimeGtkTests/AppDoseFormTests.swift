import Foundation
import Testing

/// The Doses form's fields that were CLI-only (issue 37): a medication after the last dose with
/// a daily maximum and someone told, added through the form by accessible names on a 360 px
/// wide screen, its errors under the fields in the CLI's words, and read back by
/// `chime med show --json`. With `CHIME_FORM_SHOT=PATH` the filled form's picture is kept there.
@Suite(.serialized)
struct AppDoseFormTests {
    @Test func anAfterLastMedicationWithAMaximumAndSomeoneToldIsAddedThroughTheForm() async throws {
        let display = try VirtualDisplay(width: 360, height: 800)
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
        func wait(
            _ arguments: [String],
            until done: @escaping (Int32, String) -> Bool = { status, _ in status == 0 }
        ) async throws -> String {
            try await Accessibility.wait(arguments, on: display, environment: environment, until: done)
        }
        let ready = try await wait(["has", "Add Medication"])
        #expect(!ready.isEmpty, "no Add Medication button: \(app.stderr)")

        // When the person adds a pain reliever taken 6 h after the last dose, at most 4 a day
        #expect(try atspi("click", "Add Medication").output.hasPrefix("clicked"))
        let named = try await wait(["entry-set", "Name", "Painrelief", "dialog"])
        #expect(named.hasPrefix("set"), "\(named) \(names())")
        #expect(try atspi("entry-set", "Amount", "500", "dialog").status == 0)
        #expect(try atspi("entry-set", "Unit", "mg", "dialog").status == 0)
        #expect(try atspi("click", "After the last dose", "dialog").output.hasPrefix("clicked"), "\(names())")
        let interval = try await wait(["entry-set", "Interval after the last dose", "6h", "dialog"])
        #expect(interval.hasPrefix("set"), "\(interval) \(names())")
        // (No clock times for this kind.)
        #expect(try atspi("has", "Times", "dialog").status != 0, "the times still show: \(names())")
        // A bad maximum is named under its field in the CLI's words
        #expect(try atspi("entry-set", "Daily maximum", "0/day", "dialog").status == 0)
        let refused = try await wait(["entry-description", "Daily maximum", "dialog"]) { _, output in
            output.contains("invalid max '0/day'")
        }
        #expect(refused.contains("expected a count of doses in 24 hours from 1 to 100"), "\(refused)")
        #expect(try atspi("entry-set", "Daily maximum", "4/day", "dialog").status == 0)
        // and someone is told when a dose is unanswered 30 min after its time
        #expect(try atspi("has", "No one is told", "dialog").status == 0, "\(names())")
        #expect(try atspi("entry-set", "Tell channel", "ntfy:carers-alex", "dialog").status == 0)
        #expect(try atspi("entry-set", "Tell when", "30m", "dialog").status == 0)
        if let shot = ProcessInfo.processInfo.environment["CHIME_FORM_SHOT"] {
            try await Task.sleep(for: .milliseconds(500))
            _ = try display.screenshot(to: shot)
            // And its lower part, scrolled with the wheel.
            for (index, clicks) in ["8", "30"].enumerated() {
                _ = try display.run("/usr/bin/xdotool", ["mousemove", "180", "400", "click", "--repeat", clicks, "--delay", "30", "5"])
                try await Task.sleep(for: .milliseconds(500))
                _ = try display.screenshot(to: shot.replacingOccurrences(of: ".png", with: "-\(index + 2).png"))
            }
        }
        #expect(try atspi("click", "Save", "dialog").output.hasPrefix("clicked"))

        // Then the CLI reads it back as such
        var shown: [String: Any]?
        for _ in 0..<40 where shown == nil {
            let output = try display.run(AppWindowTests.chime, ["med", "show", "Painrelief", "--json"], environment: environment).output
            shown = AppDosesTests.json(output)["medication"] as? [String: Any]
            if shown == nil { try await Task.sleep(for: .milliseconds(250)) }
        }
        let medication = try #require(shown, "not saved: \(app.stderr) \(names())")
        let schedule = (medication["schedules"] as? [[String: Any]])?.last { $0["enabled"] as? Bool == true }
        #expect(schedule?["after_last_s"] as? Int == 6 * 3_600, "\(medication)")
        #expect(schedule?["max_per_day"] as? Int == 4, "\(medication)")
        #expect(schedule?["times"] as? [String] == [], "\(medication)")
        let tell = medication["tell"] as? [String: Any]
        #expect(tell?["channel"] as? String == "ntfy:carers-alex", "\(medication)")
        #expect(tell?["after_s"] as? Int == 30 * 60, "\(medication)")

        // When they open it again, the form shows what it is, and who is told
        let edit = try await wait(["click-starting", "Edit Painrelief (500 mg)"])
        #expect(edit.hasPrefix("clicked"), "\(edit) \(names())")
        let again = try await wait(["entry-text", "Interval after the last dose", "dialog"]) { _, output in
            output.trimmingCharacters(in: .whitespacesAndNewlines) == "6h"
        }
        #expect(again.trimmingCharacters(in: .whitespacesAndNewlines) == "6h", "\(again) \(names())")
        #expect(try atspi("entry-value", "Daily maximum", "dialog").output.trimmingCharacters(in: .whitespacesAndNewlines) == "4/day")
        #expect(
            try atspi("has", "Tells ntfy:carers-alex, when a dose is unanswered 30m after its time", "dialog").status == 0,
            "\(names())"
        )
        #expect(try atspi("has", "Deactivate", "dialog").status == 0, "\(names())")
        if let shot = ProcessInfo.processInfo.environment["CHIME_FORM_SHOT"] {
            _ = try display.run("/usr/bin/xdotool", ["mousemove", "180", "400", "click", "--repeat", "30", "--delay", "30", "5"])
            try await Task.sleep(for: .milliseconds(500))
            _ = try display.screenshot(to: shot.replacingOccurrences(of: ".png", with: "-edit.png"))
        }

        // When they delete it, it is asked first as `chime med delete` asks, then gone
        #expect(try atspi("click", "Delete…", "dialog").output.hasPrefix("clicked"), "\(names())")
        let asked = try await wait(["click", "Delete", "dialog"])
        #expect(asked.hasPrefix("clicked"), "\(asked) \(names())")
        var gone = false
        for _ in 0..<40 where !gone {
            let shown = try display.run(AppWindowTests.chime, ["med", "show", "Painrelief", "--json"], environment: environment)
            gone = shown.status != 0
            if !gone { try await Task.sleep(for: .milliseconds(250)) }
        }
        #expect(gone, "still there after Delete: \(names())")
    }
}
