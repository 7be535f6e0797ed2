import ChimeCore
import ChimeFocus
import ChimeStore
import ChimeTesting
import Foundation
import GRDB
import Testing

/// Labels (`chime focus start --label thesis`): checked at the start, kept on the session and
/// by the sessions that follow it by themselves, and the forest, the stats and the breaks read
/// by label; on a real store with the injected clocks.
struct FocusLabelTests {
    @Test func aLabelIsTrimmedAndABadOneIsRefusedNamingIt() throws {
        #expect(try FocusLabel.validate("  thesis ") == "thesis")
        #expect(try FocusLabel.validate("Kapitel 3: Ergebnisse 🌲") == "Kapitel 3: Ergebnisse 🌲")
        #expect(try FocusLabel.validate(String(repeating: "é", count: 40)).count == 40)
        #expect(try FocusLabel.validate(nil as String?) == nil)
        let bad: [(String, String)] = [
            ("", "invalid label '' (it is empty): expected a short text of 1 to 40 characters without control characters, such as thesis"),
            ("   ", "invalid label '   ' (it is empty)"),
            (String(repeating: "x", count: 41), "(it has 41 characters)"),
            ("a\tb", "invalid label 'a\\u{9}b' (it has a control character)"),
            ("line\nbreak", "invalid label 'line\\u{a}break' (it has a control character)"),
            ("bell\u{7}", "(it has a control character)"),
        ]
        for (value, message) in bad {
            let error = #expect(throws: ChimeError.self) { try FocusLabel.validate(value) }
            #expect(error?.code == .usage)
            #expect(error?.message.contains(message) == true, "\(error?.message ?? "")")
            // One line, whatever the value held.
            #expect(error?.message.contains("\n") == false)
        }
    }

    @Test func aSessionKeepsItsLabelAndABadLabelStartsNothing() throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let error = #expect(throws: ChimeError.self) { try h.timer.start(label: " \n ") }
        #expect(error?.code == .usage)
        #expect(try h.timer.latest() == nil)
        #expect(try h.store.pending().isEmpty)

        let session = try h.timer.start(minutes: 10, label: " thesis ")
        #expect(session.label == "thesis")
        #expect(try h.timer.current().openSession?.label == "thesis")
        #expect(try h.timer.openWithoutSettling()?.label == "thesis")
        // The live alert says it.
        let live = FocusLiveAlert.note(session, at: h.machine.now(), postedAt: h.wall.now(), icon: nil, zone: TimeZone(identifier: "UTC")!)
        #expect(live.body == "Tree stage 1 of 5, ends at 09:10. Label: thesis.")
        h.wall.advance(by: 600)
        _ = try h.timer.settle()
        #expect(try h.timer.session(id: session.id).label == "thesis")
        // The hooks get it.
        let events = try h.store.pendingHooks().map(\.event)
        #expect(events.map { $0.environment["CHIME_FOCUS_LABEL"] } == ["thesis", "thesis"])
        // One without a label has none.
        let plain = try h.timer.start()
        #expect(plain.label == nil)
        #expect(try h.store.pendingHooks().last?.event.environment["CHIME_FOCUS_LABEL"] == nil)
        // The migration that added the column is recorded under its name.
        let migrations = try DatabaseQueue(path: h.store.path).read { db in
            try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations")
        }
        #expect(migrations.contains(FocusTimer.labelMigration))
    }

    /// Decided: a session that starts by itself at a break's end (auto_start_sessions), from
    /// "Break over"'s Start or from "Plant another" goes on with the work before it: same
    /// length, same label. `chime focus start` uses only the label it is given.
    @Test func sessionsThatFollowByThemselvesKeepTheLabelBeforeThem() throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let timer = FocusTimer(store: h.store, clock: h.machine, breaks: FocusBreaks(shortSeconds: 120, autoStartSessions: true))
        _ = try timer.start(minutes: 10, label: "thesis")
        h.wall.advance(by: 600)
        _ = try timer.settle()
        let rest = try #require(try timer.runningBreak())
        h.wall.advance(to: rest.endsAt)
        let auto = try #require(try timer.settle().openSession)
        #expect(auto.label == "thesis")
        #expect(auto.lengthSeconds == 600)

        // Plant another on the completion alert.
        h.wall.advance(by: 600)
        _ = try timer.settle()
        let family = FocusFamily(timer: h.timer, icon: nil, liveAlert: false)
        #expect(try family.respond(to: NoteResponse(noteID: auto.reminderID, kind: .action(FocusLiveAlert.plantAnother)), at: h.wall.now()))
        let planted = try #require(try h.timer.current().openSession)
        #expect(planted.label == "thesis")

        // Start on "Break over".
        h.wall.advance(by: 600)
        _ = try h.timer.settle()
        let next = try #require(try h.timer.runningBreak())
        h.wall.advance(to: next.endsAt)
        _ = try h.timer.settle()
        #expect(
            try family.respond(to: NoteResponse(noteID: next.reminderID, kind: .action(FocusTimer.startAction)), at: h.wall.now())
        )
        #expect(try h.timer.current().openSession?.label == "thesis")
        _ = try h.timer.giveUp()
        #expect(try h.timer.start().label == nil)
    }

    /// thesis: two trees and one given up; email: one tree; one tree without a label.
    static func plant(_ h: FocusHarness) throws {
        for (label, minutes, gaveUp) in [
            ("thesis", 25, false), ("email", 10, false), (nil, 25, false), ("thesis", 50, false), ("thesis", 25, true),
        ] as [(String?, Int, Bool)] {
            _ = try h.timer.start(minutes: minutes, label: label)
            if gaveUp {
                h.wall.advance(by: 120)
                _ = try h.timer.giveUp()
                continue
            }
            h.wall.advance(by: TimeInterval(minutes * 60))
            _ = try h.timer.settle()
            // Every break but email's is taken; email's is skipped.
            if label == "email" { _ = try h.timer.skipBreak() } else { h.wall.advance(by: 900) }
            _ = try h.timer.settle()
        }
    }

    @Test func theForestAndItsStatsByLabel() throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        try Self.plant(h)
        let forest = Forest(store: h.store)
        #expect(try forest.treeCount() == 4)
        #expect(try forest.treeCount(label: "thesis") == 2)
        #expect(try forest.treeCount(label: "Thesis") == 0)
        #expect(try forest.trees().map(\.label) == ["thesis", nil, "email", "thesis"])
        #expect(try forest.trees(label: "thesis").map(\.lengthSeconds) == [3_000, 1_500])
        // A filtered forest keeps the numbers of the whole one (`chime forest show 4`).
        let numbered = try forest.trees(label: "thesis")
        #expect(numbered.map(\.number) == [4, 1])
        #expect(try forest.tree(number: 4)?.id == numbered[0].tree.id)
        #expect(try forest.trees(label: "thesis", limit: 1).map(\.number) == [4])

        let zone = TimeZone(identifier: "UTC")!
        let thesis = try forest.stats(now: h.wall.now(), zone: zone, label: "thesis").stats
        #expect(thesis.totalTrees == 2)
        #expect(thesis.totalFocusMicros == 75 * 60_000_000)
        #expect(thesis.abandonedCount == 1)
        #expect(thesis.totalSessions == 3)
        #expect(thesis.currentStreak == 1)
        let all = try forest.stats(now: h.wall.now(), zone: zone).stats
        #expect(all.totalTrees == 4)
        #expect(all.totalSessions == 5)

        #expect(
            try forest.labelTotals() == [
                LabelTotals(label: "thesis", sessions: 3, trees: 2, abandoned: 1, focusMicros: 75 * 60_000_000),
                LabelTotals(label: "email", sessions: 1, trees: 1, abandoned: 0, focusMicros: 10 * 60_000_000),
                LabelTotals(label: nil, sessions: 1, trees: 1, abandoned: 0, focusMicros: 25 * 60_000_000),
            ]
        )
        #expect(try forest.labelTotals(label: "email").map(\.label) == ["email"])
        #expect(try forest.labelTotals(label: "nothing").isEmpty)

        // Breaks by the label of the session they follow.
        #expect(try h.timer.breakCounts() == BreakCounts(taken: 3, skipped: 1))
        #expect(try h.timer.breakCounts(label: "thesis") == BreakCounts(taken: 2, skipped: 0))
        #expect(try h.timer.breakCounts(label: "email") == BreakCounts(taken: 0, skipped: 1))
    }
}
