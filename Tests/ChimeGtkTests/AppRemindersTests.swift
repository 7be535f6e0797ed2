import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The app's Reminders and Today pages end to end (Xvfb, a session bus with the accessibility
/// bus, the real app and `chime`), driven through AT-SPI by accessible name: a reminder added in
/// the app is on both pages and in `chime list`, edited, then cancelled and gone from all three;
/// a bad time keeps the form open with the command line's words and adds nothing; an alert
/// shown is snoozed.
@Suite(.serialized)
struct AppRemindersTests {
    /// The pending reminders `chime list --json` reads: (id, title, next_due).
    static func listed(_ display: VirtualDisplay, _ environment: [String: String]) throws -> [(id: String, title: String, due: String)] {
        let output = try display.run(AppWindowTests.chime, ["list", "--json"], environment: environment).output
        let json = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any]
        let reminders = json?["reminders"] as? [[String: Any]] ?? []
        return reminders.map { ($0["id"] as? String ?? "", $0["title"] as? String ?? "", $0["next_due"] as? String ?? "") }
    }

    /// How many list rows (AT-SPI role "list item") are named `name`, on every page.
    static func rows(named name: String, _ display: VirtualDisplay, _ environment: [String: String]) throws -> Int {
        let names = try Accessibility.run(["names"], on: display, environment: environment).output
        return names.split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
            .filter { $0.count == 4 && $0[1] == "list item" && ($0[2] == name || $0[2] == name + " " + name) }.count
    }

    static func at(_ due: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: due) ?? ISO8601DateFormatter().date(from: due)
    }

    @Test func addEditAndCancelAReminderAndABadTimeAddsNothing() async throws {
        // Given the app on its Reminders page, with AT-SPI
        let display = try VirtualDisplay()
        defer { display.stop() }
        let bus = try SessionBus(on: display)
        defer { bus.stop(display: display) }
        let environment = AppWindowTests.environment(display, bus)
        let app = try GateWindowProcess(on: display, ["app", "reminders"], environment: environment)
        defer { app.stop() }
        #expect(await app.next("presented ") == "presented page=reminders", "\(app.lines) \(app.stderr)")
        func atspi(_ arguments: String...) throws -> (status: Int32, output: String) {
            try Accessibility.run(arguments, on: display, environment: environment)
        }
        func wait(
            _ arguments: String...,
            until accept: @escaping (Int32, String) -> Bool = { status, _ in status == 0 }
        ) async throws -> String {
            try await Accessibility.wait(arguments, on: display, environment: environment, until: accept)
        }
        func waitForRows(_ name: String, _ count: Int) async throws -> Int {
            var found = -1
            for _ in 0..<60 {
                found = try Self.rows(named: name, display, environment)
                if found == count { break }
                try await Task.sleep(for: .milliseconds(250))
            }
            return found
        }
        let opened = try await wait("click", "New Reminder")
        #expect(opened.hasPrefix("clicked"), "\(opened) \(app.stderr)")

        // When they add "Tea" in 25m
        let before = Date()
        // (The form's entries reach AT-SPI a moment after it is shown.)
        #expect(try await wait("set", "Title", "Tea").hasPrefix("set"))
        #expect(try atspi("set", "When", "25m").status == 0)
        #expect(try atspi("click", "Add").status == 0)

        // Then it is on Reminders and on Today (a row each), and in `chime list`
        #expect(try await waitForRows("Tea", 2) == 2)
        #expect(try atspi("has", "Cancel Tea").status == 0)
        let added = try Self.listed(display, environment)
        #expect(added.map(\.title) == ["Tea"])
        let due = try #require(added.first.flatMap { Self.at($0.due) })
        #expect(abs(due.timeIntervalSince(before) - 1_500) < 30, "\(added)")
        let id = try #require(added.first?.id)

        // And Today's row opens Reminders
        #expect(try atspi("click", "Today").status == 0)
        let clicked = try await wait("click", "Tea")
        #expect(clicked.hasPrefix("clicked"), "\(clicked)")
        #expect(await app.next("presented page=reminders") == "presented page=reminders", "\(app.lines)")

        // When they edit it: a new title, 40 minutes from now
        #expect(try atspi("click", "Edit Tea").status == 0)
        #expect(try await wait("set", "Title", "Green tea").hasPrefix("set"))
        #expect(try atspi("click", "In").status == 0)
        #expect(try atspi("set", "When", "40m").status == 0)
        #expect(try atspi("click", "Save").status == 0)

        // Then both pages and `chime list` have the new title and time, under the same id
        #expect(try await waitForRows("Green tea", 2) == 2)
        #expect(try Self.rows(named: "Tea", display, environment) == 0)
        let edited = try Self.listed(display, environment)
        #expect(edited.map(\.id) == [id] && edited.map(\.title) == ["Green tea"], "\(edited)")
        let moved = try #require(edited.first.flatMap { Self.at($0.due) })
        #expect(moved.timeIntervalSince(due) > 600, "\(edited)")

        // When they cancel it
        #expect(try atspi("click", "Cancel Green tea").status == 0)

        // Then it is gone from both pages and from `chime list`
        #expect(try await waitForRows("Green tea", 0) == 0)
        #expect(try Self.listed(display, environment).isEmpty)
        #expect(try atspi("has", "Cancel Green tea").status != 0)

        // When a bad time is typed in the form
        #expect(try atspi("click", "New Reminder").status == 0)
        #expect(try await wait("set", "Title", "Cake").hasPrefix("set"))
        #expect(try atspi("set", "When", "25x").status == 0)
        #expect(try atspi("click", "Add").status == 0)

        // Then the error line names the bad value as `chime in` does, and nothing is added
        let shown = try await wait("text", "Form error") { status, output in status == 0 && output.contains("25x") }
        let line = shown.trimmingCharacters(in: .whitespacesAndNewlines)
        let errors = display.directory.appendingPathComponent("cli-errors").path
        let cli = try display.run(AppWindowTests.chime, ["in", "25x", "Cake"], environment: environment, errors: errors)
        let cliLine = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
        #expect(cli.status == 64)
        #expect(line.contains("'25x'") && !line.isEmpty && cliLine.contains(line), "form: \(line) CLI: \(cliLine)")
        #expect(try Self.listed(display, environment).isEmpty)
        #expect(try Self.rows(named: "Cake", display, environment) == 0)
        // The form stayed open with what was typed: the time corrected, Add adds "Cake".
        #expect(try atspi("set", "When", "25m").status == 0)
        #expect(try atspi("click", "Add").status == 0)
        #expect(try await waitForRows("Cake", 2) == 2)
        #expect(try Self.listed(display, environment).map(\.title) == ["Cake"])

        // When an alert has been shown (a runner ran a few seconds) and the page is shown again
        #expect(try display.run(AppWindowTests.chime, ["in", "1s", "Oven", "--id", "oven"], environment: environment).status == 0)
        let runnerLog = display.directory.appendingPathComponent("runner.log").path
        let runner = try display.run(
            "/usr/bin/timeout",
            ["4", AppWindowTests.chime, "run", "--notifier", "console"],
            environment: environment,
            errors: runnerLog
        )
        #expect(try atspi("click", "Today").status == 0)
        #expect(try atspi("click", "Reminders").status == 0)

        // Then Snooze puts it off for 10 minutes, as `chime snooze oven` does
        let snooze = try await wait("click", "Snooze Oven")
        let log = (try? String(contentsOfFile: runnerLog, encoding: .utf8)) ?? ""
        #expect(snooze.hasPrefix("clicked"), "\(snooze) runner: \(runner.output) \(log)")
        var waiting: [[String: Any]] = []
        for _ in 0..<40 {
            let output = try display.run(AppWindowTests.chime, ["list", "--json"], environment: environment).output
            let json = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any]
            waiting = json?["waiting"] as? [[String: Any]] ?? []
            if !waiting.isEmpty { break }
            try await Task.sleep(for: .milliseconds(250))
        }
        #expect(waiting.first?["id"] as? String == "oven" && waiting.first?["snoozed"] as? Bool == true, "\(waiting)")
        let until = Self.at(waiting.first?["due"] as? String ?? "")
        #expect(until.map { abs($0.timeIntervalSinceNow - 600) < 60 } == true, "\(waiting)")
        let history = try display.run(AppWindowTests.chime, ["history", "oven"], environment: environment).output
        #expect(history.contains("snoozed"), "\(history)")
    }
}
