import ChimeCore
import ChimeStore
import Foundation
import GRDB
import Testing

/// v8's rules and ends in the store, the ledger as `chime history` reads it, and `chime edit`.
struct HistoryEditTests {
    let directory: TemporaryDirectory
    let store: ReminderStore

    init() throws {
        directory = try TemporaryDirectory()
        store = try ReminderStore(path: directory.file("chime.sqlite"), schemas: [])
    }

    private func cleanUp() { directory.remove() }

    private func fire(at due: Date, via: String?, response: NoteResponse.Kind? = nil, id: String) throws {
        let ready = try store.claimDue(now: due, systemZone: Fixture.utc)
        #expect(ready.map(\.due) == [due])
        try store.markPosted(ready.map(\.key), at: due.addingTimeInterval(2), noteID: id, serverID: nil, via: via)
        if let response { try store.recordResponse(NoteResponse(noteID: id, kind: response), at: due.addingTimeInterval(30)) }
    }

    @Test func monthlyAndYearlyRulesWithEndsAreKeptAndReadBack() throws {
        defer { cleanUp() }
        let rules: [Trigger] = [
            .calendar(CalendarRule(month: nil, day: 31, times: [LocalTime(hour: 9, minute: 0)!], zone: .floating)),
            .calendar(CalendarRule(month: 12, day: 24, times: [LocalTime(hour: 18, minute: 0)!], zone: .fixed("Europe/Berlin"))),
            .bounded(.weekly(times: [LocalTime(hour: 9, minute: 0)!], days: .everyDay, zone: .floating), .until(day: 20_500)),
            .bounded(.interval(seconds: 3_600, anchor: Fixture.t0), .count(10, start: Fixture.t0)),
        ]
        for (index, rule) in rules.enumerated() {
            try store.schedule(
                NewReminder(id: "r\(index)", title: "Rule \(index)", trigger: rule),
                now: Fixture.t0,
                systemZone: Fixture.utc
            )
        }
        for (index, rule) in rules.enumerated() {
            let stored = try store.reminder(id: "r\(index)")
            #expect(stored.trigger == rule)
            #expect(stored.nextDue == rule.nextOccurrence(after: Fixture.t0, systemZone: Fixture.utc))
        }
        // The floating monthly rule is a floating row: it follows the system zone as weekly ones do.
        try store.followSystemZone(Fixture.berlin, now: Fixture.t0)
        #expect(try store.reminder(id: "r0").nextDue == utcInstant(2026, 1, 31, 8))
    }

    @Test func aLargeBatchKeepsEveryRulesDayAndEnd() throws {
        defer { cleanUp() }
        // 150 rows: two whole chunks of one INSERT each, then the rest one by one.
        let batch = (1...150).map { index in
            NewReminder(
                id: "m\(index)",
                title: "Monthly \(index)",
                trigger: .bounded(
                    .calendar(CalendarRule(month: nil, day: index % 31 + 1, times: [LocalTime(hour: 9, minute: 0)!], zone: .floating)),
                    .count(index, start: Fixture.t0)
                )
            )
        }
        _ = try store.scheduleBatch(batch, now: Fixture.t0, systemZone: Fixture.utc)
        let stored = Dictionary(uniqueKeysWithValues: try store.pending().map { ($0.id, $0.trigger) })
        #expect(stored.count == 150)
        for new in batch { #expect(stored[new.id!] == new.trigger, "\(new.id!)") }
    }

    @Test func aCountedRuleIsDoneAfterItsLastOccurrence() throws {
        defer { cleanUp() }
        let rule = try TimeParsing.recurrence(["day", "10:00"], now: Fixture.t0, zone: .fixed("UTC"), count: 3)
        try store.schedule(NewReminder(id: "floss", title: "Floss", trigger: rule), now: Fixture.t0, systemZone: Fixture.utc)
        for day in 5...7 { try fire(at: utcInstant(2026, 1, day, 10), via: "console", id: "floss") }
        #expect(try store.pendingCount() == 0)
        #expect(throws: ChimeError.self) { try store.reminder(id: "floss") }
        #expect(try store.history(id: "floss").map(\.due) == (5...7).map { utcInstant(2026, 1, $0, 10) })
    }

    @Test func historySaysWhenWhereHowLateAndWhatWasDone() throws {
        defer { cleanUp() }
        let rule = Trigger.weekly(times: [LocalTime(hour: 10, minute: 0)!], days: .everyDay, zone: .fixed("UTC"))
        try store.schedule(NewReminder(id: "pill", title: "Pill", trigger: rule), now: Fixture.t0, systemZone: Fixture.utc)
        try store.schedule(Fixture.once("tea", at: 7_200, title: "Tea"), now: Fixture.t0, systemZone: Fixture.utc)
        try fire(at: utcInstant(2026, 1, 5, 10), via: "desktop", response: .action("take"), id: "pill")
        try fire(at: Fixture.at(7_200), via: "console", id: "tea")
        try fire(at: utcInstant(2026, 1, 6, 10), via: "desktop", response: .closed(.expired), id: "pill")
        try fire(at: utcInstant(2026, 1, 7, 10), via: "json", response: .action("snooze"), id: "pill")

        let all = try store.history()
        #expect(all.map(\.reminderID) == ["pill", "tea", "pill", "pill"])
        #expect(all.map(\.via) == ["desktop", "console", "desktop", "json"])
        #expect(all.map(\.outcome) == ["taken", "shown", "expired", "snoozed"])
        #expect(all.allSatisfy { $0.detail == nil })
        #expect(all.allSatisfy { $0.lateness == 2 })
        #expect(all.first?.answeredAt == utcInstant(2026, 1, 5, 10).addingTimeInterval(30))
        #expect(try store.history(id: "pill").count == 3)
        #expect(try store.history(since: utcInstant(2026, 1, 6)).map(\.due) == [utcInstant(2026, 1, 6, 10), utcInstant(2026, 1, 7, 10)])
        #expect(try store.history(limit: 1).map(\.due) == [utcInstant(2026, 1, 7, 10)])
        #expect(try store.history(id: "nothing").isEmpty)
        #expect(try store.hasEverHad(id: "tea"))
        #expect(try !store.hasEverHad(id: "nothing"))
    }

    @Test func aFamilysAlertSaysTheFirstLineOfItsBody() throws {
        defer { cleanUp() }
        let alert = NewReminder(
            id: "med-1-20260105-1000",
            title: "Medication Reminder",
            body: "Aspirin 100 mg\nwith water",
            trigger: .once(Fixture.at(60)),
            kind: "dose"
        )
        try store.schedule(alert, now: Fixture.t0, systemZone: Fixture.utc)
        try fire(at: Fixture.at(60), via: "desktop", response: .action("take"), id: "med-1-20260105-1000")
        let entry = try #require(try store.history().first)
        #expect(entry.kind == "dose" && entry.detail == "Aspirin 100 mg" && entry.outcome == "taken")
    }

    @Test func everyAnswerReadsAsAWord() {
        let words = [
            "take": "taken", "taken": "taken", "snooze": "snoozed", "snooze-10m": "snoozed", "done": "done", "skip": "skipped",
            "closed:dismissed": "dismissed", "closed:expired": "expired", "closed:closed": "closed", "closed:undefined": "closed",
            "open-link": "open-link",
        ]
        for (key, word) in words { #expect(HistoryEntry.outcome(ofResponse: key) == word, "\(key)") }
    }

    @Test func editChangesTitleBodyAndTimeKeepingTheIdAndTheLedger() throws {
        defer { cleanUp() }
        try store.schedule(Fixture.once("tea", at: 600, title: "Tea"), now: Fixture.t0, systemZone: Fixture.utc)
        let before = try store.detail(id: "tea")
        let edited = try store.edit(id: "tea", title: "Green tea", body: "Three minutes", at: Fixture.at(900), now: Fixture.at(60))
        #expect(edited.id == "tea" && edited.title == "Green tea" && edited.body == "Three minutes")
        #expect(edited.trigger == .once(Fixture.at(900)))
        let after = try store.reminder(id: "tea")
        #expect(after == edited)
        #expect(after.createdAt == before.reminder.createdAt)
        #expect(try store.nextWake() == Fixture.at(900))
        // Fires at the new time only.
        #expect(try store.claimDue(now: Fixture.at(600), systemZone: Fixture.utc).isEmpty)
        #expect(try store.claimDue(now: Fixture.at(900), systemZone: Fixture.utc).map(\.title) == ["Green tea"])
        // A title alone keeps the rest.
        try store.schedule(Fixture.once("cake", at: 600, title: "Cake"), now: Fixture.t0, systemZone: Fixture.utc)
        let cake = try store.edit(id: "cake", title: nil, body: "Chocolate", at: nil, now: Fixture.t0)
        #expect(cake.title == "Cake" && cake.body == "Chocolate" && cake.nextDue == Fixture.at(600))
    }

    @Test func editSetsAndRemovesTheCommandKeepingTheRest() throws {
        defer { cleanUp() }
        try store.schedule(Fixture.once("backup", at: 600, title: "Backup"), now: Fixture.t0, systemZone: Fixture.utc)
        let command = ReminderCommand(.shell("echo done"), timeout: .seconds(60))
        let set = try store.edit(id: "backup", title: nil, body: nil, at: nil, command: .set(command), now: Fixture.t0)
        #expect(set.command == command && set.title == "Backup")
        #expect(try store.reminder(id: "backup").command == command)
        #expect(try store.claimDue(now: Fixture.at(600), systemZone: Fixture.utc).first?.command == command)
        try store.schedule(Fixture.once("tea", at: 600, title: "Tea"), now: Fixture.t0, systemZone: Fixture.utc)
        _ = try store.edit(id: "tea", title: nil, body: nil, at: nil, command: .set(command), now: Fixture.t0)
        let removed = try store.edit(id: "tea", title: "Green tea", body: nil, at: nil, command: .remove, now: Fixture.t0)
        #expect(removed.command == nil && removed.title == "Green tea")
        #expect(try store.reminder(id: "tea").command == nil)
        // A title alone keeps the command.
        try store.schedule(Fixture.once("cake", at: 600, title: "Cake"), now: Fixture.t0, systemZone: Fixture.utc)
        _ = try store.edit(id: "cake", title: nil, body: nil, at: nil, command: .set(command), now: Fixture.t0)
        #expect(try store.edit(id: "cake", title: "Cheesecake", body: nil, at: nil, now: Fixture.t0).command == command)
        #expect(try store.reminder(id: "cake").command == command)
    }

    @Test func editRefusesWhatItCannotChangeAndWritesNothing() throws {
        defer { cleanUp() }
        try store.schedule(Fixture.once("tea", at: 600, title: "Tea"), now: Fixture.t0, systemZone: Fixture.utc)
        let rule = Trigger.weekly(times: [LocalTime(hour: 10, minute: 0)!], days: .everyDay, zone: .fixed("UTC"))
        try store.schedule(NewReminder(id: "pill", title: "Pill", trigger: rule), now: Fixture.t0, systemZone: Fixture.utc)
        try store.schedule(
            NewReminder(id: "med-1-20260105-1000", title: "Aspirin", trigger: .once(Fixture.at(3_600)), kind: "dose"),
            now: Fixture.t0,
            systemZone: Fixture.utc
        )
        func code(_ body: () throws -> Void) -> ChimeError.Code? {
            do {
                try body()
                return nil
            } catch {
                return (error as? ChimeError)?.code
            }
        }
        // A valid title with a past time: nothing changes.
        #expect(code { try store.edit(id: "tea", title: "Coffee", body: nil, at: Fixture.t0, now: Fixture.at(60)) } == .usage)
        #expect(code { try store.edit(id: "tea", title: "  ", body: nil, at: nil, now: Fixture.at(60)) } == .usage)
        #expect(code { try store.edit(id: "pill", title: "Pills", body: nil, at: Fixture.at(900), now: Fixture.at(60)) } == .usage)
        #expect(code { try store.edit(id: "med-1-20260105-1000", title: "x", body: nil, at: nil, now: Fixture.at(60)) } == .conflict)
        #expect(code { try store.edit(id: "nothing", title: "x", body: nil, at: nil, now: Fixture.at(60)) } == .notFound)
        #expect(try store.reminder(id: "tea").title == "Tea")
        #expect(try store.reminder(id: "tea").nextDue == Fixture.at(600))
        #expect(try store.reminder(id: "pill").title == "Pill")
        #expect(try store.reminder(id: "med-1-20260105-1000").title == "Aspirin")
        // A rule's title may change.
        #expect(try store.edit(id: "pill", title: "Pills", body: nil, at: nil, now: Fixture.at(60)).trigger == rule)
        // Once fired, it is no longer pending.
        _ = try store.claimDue(now: Fixture.at(600), systemZone: Fixture.utc)
        #expect(code { try store.edit(id: "tea", title: "x", body: nil, at: nil, now: Fixture.at(601)) } == .notFound)
    }

    @Test func detailShowsTheLatestReminderWithTheIdInAnyState() throws {
        defer { cleanUp() }
        try store.schedule(
            NewReminder(id: "tea", title: "Tea", body: "Green", trigger: .once(Fixture.at(60))),
            now: Fixture.t0,
            systemZone: Fixture.utc
        )
        try fire(at: Fixture.at(60), via: "desktop", id: "tea")
        let detail = try store.detail(id: "tea")
        #expect(detail.state == "done" && detail.shownCount == 1 && detail.reminder.body == "Green")
        #expect(throws: ChimeError.self) { try store.detail(id: "nothing") }
    }

    /// A family's reminder is changed by its own commands: `chime edit` refuses it, with the kind
    /// as the cause (EditFamilyTests: the CLI names the commands), and changes nothing.
    @Test(arguments: ["dose", "focus", "notes"])
    func aFamilysReminderIsNotEdited(kind: String) throws {
        defer { cleanUp() }
        try store.schedule(
            NewReminder(id: "fam", title: "Family", trigger: .once(Fixture.at(600)), kind: kind),
            now: Fixture.t0,
            systemZone: Fixture.utc
        )
        do {
            _ = try store.edit(id: "fam", title: "Other", body: nil, at: nil, now: Fixture.t0)
            Issue.record("a \(kind) reminder was edited")
        } catch {
            #expect(error.code == .conflict)
            // The store knows no family: the kind goes with the error, for the CLI to name its commands.
            #expect(
                error.message
                    == "'fam' is a \(kind) reminder, not a plain one: 'chime edit' changes plain reminders only; use its family's own command"
            )
            #expect(error.cause as? FamilyReminder == FamilyReminder(id: "fam", kind: kind))
        }
        #expect(try store.pending().map(\.title) == ["Family"])
    }
}
