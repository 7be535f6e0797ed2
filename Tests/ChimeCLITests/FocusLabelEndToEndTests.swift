import ChimeCore
import ChimeFocus
import ChimeStore
import Foundation
import Testing

/// Labels with the real `chime` executable on a real SQLite file: `chime focus start --label`,
/// `chime focus status`, and the forest and the stats by label.
@Suite("End to end: focus labels", .serialized)
struct FocusLabelEndToEndTests {
    @Test("A bad label is one line, exit 64, and starts nothing")
    func aBadLabelIsRefused() throws {
        let sandbox = try Sandbox()
        for bad in ["", "   ", "a\tb", String(repeating: "x", count: 41)] {
            let result = try sandbox.chime("focus", "start", "--label", bad)
            #expect(result.status == 64, "\(bad): \(result.stdout) \(result.stderr)")
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1, "\(result.stderr)")
            #expect(result.stderr.contains("invalid label"), "\(result.stderr)")
            #expect(result.stderr.contains("1 to 40 characters"), "\(result.stderr)")
        }
        for command in [["forest", "--label", " "], ["stats", "--label", ""]] {
            let result = try sandbox.chime(command)
            #expect(result.status == 64, "\(command): \(result.stderr)")
            #expect(result.stderr.contains("invalid label"), "\(result.stderr)")
        }
        let status = try sandbox.chime("focus", "status", "--json")
        #expect(status.status == 0, "\(status.stderr)")
        #expect(try jsonObject(status.stdout)["session"] == nil)
    }

    @Test("focus start --label: the session carries it; status shows it")
    func startAndStatusShowTheLabel() throws {
        let sandbox = try Sandbox()
        let started = try sandbox.chime("focus", "start", "--label", " thesis ", "--json")
        #expect(started.status == 0, "\(started.stderr)")
        let session = try #require(try jsonObject(started.stdout)["session"] as? [String: Any])
        #expect(session["label"] as? String == "thesis")
        let text = try sandbox.chime("focus", "status")
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("Focus session #1 (thesis), started"), "\(text.stdout)")
        let json = try sandbox.chime("focus", "status", "--json")
        let shown = try #require(try jsonObject(json.stdout)["session"] as? [String: Any])
        #expect(shown["label"] as? String == "thesis")
        // Another start is refused naming the open session with its label.
        let again = try sandbox.chime("focus", "start")
        #expect(again.status == 4, "\(again.stderr)")
        #expect(again.stderr.contains("#1 (thesis), active"), "\(again.stderr)")
        // A session without a label has none in its JSON.
        #expect(try sandbox.chime("focus", "give-up", "--yes").status == 0)
        let plain = try sandbox.chime("focus", "start", "--json")
        #expect(try #require(try jsonObject(plain.stdout)["session"] as? [String: Any])["label"] == nil)
    }

    /// Trees: #1 thesis, #2 email, #3 thesis (completed through the library, as if started
    /// minutes ago), then a thesis session given up through the CLI.
    static func plantForest(in sandbox: borrowing Sandbox) throws {
        let store = try ReminderStore(path: sandbox.store, schemas: chimeSchemas)
        for (index, label) in ["thesis", "email", "thesis"].enumerated() {
            // Each ended a few seconds ago (10 minutes each), settled by the real clock.
            let shift = Int64((600 + 30 - index * 10) * 1_000_000)
            _ = try FocusTimer(store: store, clock: ShiftedClock(shift: shift)).start(minutes: 10, label: label)
            _ = try FocusTimer(store: store).settle()
        }
        #expect(try sandbox.chime("focus", "start", "--label", "thesis").status == 0)
        #expect(try sandbox.chime("focus", "give-up", "--yes").status == 0)
    }

    @Test("The forest by label keeps the forest's numbers; forest show says the label")
    func theForestByLabel() throws {
        let sandbox = try Sandbox()
        try Self.plantForest(in: sandbox)
        let all = try jsonObject(try sandbox.chime("forest", "--json").stdout)
        #expect(all["count"] as? Int == 3)
        let allTrees = try #require(all["trees"] as? [[String: Any]])
        #expect(allTrees.map { $0["label"] as? String } == ["thesis", "email", "thesis"])

        let thesis = try sandbox.chime("forest", "--label", "thesis", "--json")
        #expect(thesis.status == 0, "\(thesis.stderr)")
        let listing = try jsonObject(thesis.stdout)
        #expect(listing["count"] as? Int == 2)
        let trees = try #require(listing["trees"] as? [[String: Any]])
        #expect(trees.map { $0["number"] as? Int } == [3, 1])
        #expect(trees.map { $0["label"] as? String } == ["thesis", "thesis"])

        let grid = try sandbox.chime("forest", "--label", "email")
        #expect(grid.status == 0, "\(grid.stderr)")
        #expect(grid.stdout.contains("My Forest: 1 tree labelled email"), "\(grid.stdout)")
        #expect(grid.stdout.contains("#2"), "\(grid.stdout)")
        #expect(!grid.stdout.contains("#1") && !grid.stdout.contains("#3"), "\(grid.stdout)")

        let none = try sandbox.chime("forest", "--label", "Thesis")
        #expect(none.status == 0, "\(none.stderr)")
        #expect(none.stdout.contains("No tree has the label 'Thesis': the labels are thesis, email"), "\(none.stdout)")

        let show = try sandbox.chime("forest", "show", "2")
        #expect(show.stdout.contains("Label       email"), "\(show.stdout)")
        let shown = try jsonObject(try sandbox.chime("forest", "show", "3", "--json").stdout)
        #expect(shown["label"] as? String == "thesis")
    }

    @Test("The stats break sessions down by label, and --label counts one label's sessions and breaks")
    func theStatsByLabel() throws {
        let sandbox = try Sandbox()
        try Self.plantForest(in: sandbox)
        let stats = try sandbox.chime("stats", "--json")
        #expect(stats.status == 0, "\(stats.stderr)")
        let numbers = try jsonObject(stats.stdout)
        #expect(numbers["total_trees"] as? Int == 3)
        #expect(numbers["abandoned"] as? Int == 1)
        // Every break was ended early by the next session's start.
        #expect(numbers["breaks_taken"] as? Int == 0)
        #expect(numbers["breaks_skipped"] as? Int == 3)
        let labels = try #require(numbers["labels"] as? [[String: Any]])
        #expect(labels.map { $0["label"] as? String } == ["thesis", "email"])
        #expect(labels.map { $0["sessions"] as? Int } == [3, 1])
        #expect(labels.map { $0["trees"] as? Int } == [2, 1])
        #expect(labels.map { $0["abandoned"] as? Int } == [1, 0])
        #expect(labels.map { $0["focus_s"] as? Int } == [1_200, 600])

        let thesis = try jsonObject(try sandbox.chime("stats", "--label", "thesis", "--json").stdout)
        #expect(thesis["label"] as? String == "thesis")
        #expect(thesis["total_trees"] as? Int == 2)
        #expect(thesis["total_sessions"] as? Int == 3)
        #expect(thesis["abandoned"] as? Int == 1)
        #expect(thesis["total_focus_s"] as? Int == 1_200)
        #expect(thesis["breaks_skipped"] as? Int == 2)
        #expect((thesis["labels"] as? [[String: Any]])?.count == 1)

        let text = try sandbox.chime("stats")
        #expect(text.stdout.contains("Breaks           0 taken, 3 skipped"), "\(text.stdout)")
        let table = text.stdout.split(separator: "\n").map(String.init)
        #expect(table.contains { $0.hasPrefix("By label") && $0.contains("Sessions") && $0.contains("Abandoned") }, "\(text.stdout)")
        #expect(table.contains { $0.hasPrefix("thesis ") && $0.hasSuffix("1") && $0.contains("20m") }, "\(text.stdout)")
        let one = try sandbox.chime("stats", "--label", "thesis")
        #expect(one.stdout.hasPrefix("Label: thesis\n"), "\(one.stdout)")

        let missing = try sandbox.chime("stats", "--label", "nothing")
        #expect(missing.status == 0, "\(missing.stderr)")
        #expect(missing.stderr.contains("no ended session has the label 'nothing': the labels are thesis, email"), "\(missing.stderr)")
    }
}
