import ChimeCore
import ChimeStore
import ChimeTesting
import ChimeViewModels
import Foundation
import Testing

/// The Reminders page's view models (list, add, edit, snooze, cancel, history) on one store,
/// on the injected clock (Monday 2026-01-05 09:00 UTC).
struct ReminderViewModelTests {
    func form(_ h: ViewModelHarness) -> ReminderFormViewModel {
        ReminderFormViewModel(store: h.store, clock: h.wall, zone: ViewModelHarness.utc)
    }

    func list(_ h: ViewModelHarness) -> ReminderListViewModel {
        ReminderListViewModel(store: h.store, clock: h.wall, zone: ViewModelHarness.utc)
    }

    @Test func addInADurationListsItAsChimeListWordsIt() throws {
        let h = try ViewModelHarness()
        defer { h.cleanUp() }
        let model = list(h)
        #expect(model.state.reminders.isEmpty)
        #expect(model.state.emptyText == ReminderListViewModel.emptyText)

        let added = try form(h).add(ReminderDraft(title: "Tea", body: "Green", mode: .inDuration, when: "25m")).get()
        #expect(added.nextDue == h.at(25 * 60))
        #expect(added.body == "Green")

        let row = try #require(model.refresh().reminders.first)
        #expect(row.id == added.id)
        #expect(row.title == "Tea")
        #expect(row.when == "Mon 2026-01-05 09:25")
        #expect(row.relative == "in 25m")
        #expect(row.repeats == "once")
        #expect(!row.runsCommand && !row.isRecurring && row.canEditTime)
        #expect(row.subtitle == "Mon 2026-01-05 09:25 (in 25m)")
        #expect(model.state.emptyText == nil)
        // The clock moves: the relative time follows.
        h.wall.advance(by: 600)
        #expect(model.refresh().reminders.first?.relative == "in 15m")
    }

    @Test func addAtATimeReadsWhatChimeAtReads() throws {
        let h = try ViewModelHarness()
        defer { h.cleanUp() }
        let form = form(h)
        #expect(
            try form.add(ReminderDraft(title: "Stand-up", mode: .atTime, when: "14:30")).get().nextDue == ViewModelHarness.instant(14, 30)
        )
        #expect(
            try form.add(ReminderDraft(title: "Bank", mode: .atTime, when: "tomorrow 9am")).get().nextDue
                == ViewModelHarness.instant(day: 1, 9)
        )
        // 08:00 has passed today: tomorrow.
        #expect(
            try form.add(ReminderDraft(title: "Run", mode: .atTime, when: "08:00")).get().nextDue == ViewModelHarness.instant(day: 1, 8)
        )
        #expect(list(h).state.reminders.map(\.title) == ["Stand-up", "Run", "Bank"])
    }

    @Test func badInputGetsTheCommandLinesWordsAndAddsNothing() throws {
        let h = try ViewModelHarness()
        defer { h.cleanUp() }
        let form = form(h)
        func failure(_ draft: ReminderDraft) -> ChimeError? {
            if case .failure(let error) = form.add(draft) { return error }
            return nil
        }
        let bad = try #require(failure(ReminderDraft(title: "Tea", mode: .inDuration, when: "25x")))
        #expect(bad.code == .usage)
        do {
            _ = try TimeParsing.leadingDuration(["25x"])
            Issue.record("25x parsed")
        } catch {
            #expect(bad.message == error.message)
        }
        #expect(bad.message.contains("'25x'"))
        #expect(failure(ReminderDraft(title: "Tea", mode: .inDuration, when: "5 minutes"))?.message.contains("did you mean '5m'") == true)
        let badTime = try #require(failure(ReminderDraft(title: "Tea", mode: .atTime, when: "25:99")))
        #expect(badTime.message.contains("'25:99'"))
        #expect(failure(ReminderDraft(title: "Tea", mode: .atTime, when: "2025-01-01 10:00"))?.message.contains("in the past") == true)
        #expect(failure(ReminderDraft(title: "Tea", mode: .inDuration, when: ""))?.message.hasPrefix("missing duration") == true)
        #expect(failure(ReminderDraft(title: "  ", mode: .inDuration, when: "25m"))?.message.contains("title") == true)
        #expect(try h.store.pending().isEmpty)
    }

    @Test func editChangesTitleAndTimeAsChimeEdit() throws {
        let h = try ViewModelHarness()
        defer { h.cleanUp() }
        let form = form(h)
        let tea = try form.add(ReminderDraft(title: "Tea", mode: .inDuration, when: "25m")).get()
        let edited = try form.edit(id: tea.id, original: "Tea", ReminderDraft(title: "Green tea", mode: .atTime, when: "16:30")).get()
        #expect(edited.id == tea.id)
        #expect(edited.title == "Green tea")
        #expect(edited.nextDue == ViewModelHarness.instant(16, 30))
        // The title alone (an empty time keeps it).
        let renamed = try form.edit(id: tea.id, original: "Green tea", ReminderDraft(title: "Tea", mode: .atTime, when: "")).get()
        #expect(renamed.nextDue == ViewModelHarness.instant(16, 30))
        #expect(list(h).state.reminders.map(\.title) == ["Tea"])
        // Nothing changed, a bad time: refused, nothing written.
        guard case .failure(let nothing) = form.edit(id: tea.id, original: "Tea", ReminderDraft(title: "Tea", when: "")) else {
            Issue.record("an edit with nothing to change passed")
            return
        }
        #expect(nothing.message.hasPrefix("nothing to change"))
        guard case .failure(let bad) = form.edit(id: tea.id, original: "Tea", ReminderDraft(title: "Chai", mode: .inDuration, when: "soon"))
        else {
            Issue.record("a bad duration passed")
            return
        }
        #expect(bad.message.contains("'soon'"))
        #expect(try h.store.pending().map(\.title) == ["Tea"])
    }

    @Test func cancelRemovesItThroughTheInjectedUseCaseAndSaysWhy() throws {
        let h = try ViewModelHarness()
        defer { h.cleanUp() }
        let tea = try form(h).add(ReminderDraft(title: "Tea", mode: .inDuration, when: "25m")).get()
        let model = list(h)
        let state = model.cancel(tea.id)
        #expect(state.error == nil)
        #expect(state.message == "Cancelled 'Tea'.")
        #expect(state.reminders.isEmpty)
        #expect(try h.store.pending().isEmpty)
        // Again: the store's not-found, as `chime cancel` says it.
        let again = model.cancel(tea.id)
        #expect(again.error?.code == .notFound)
        #expect(again.message == nil)

        // The canceller's refusal (too late) is shown as it is.
        let refusing = ReminderListViewModel(store: h.store, clock: h.wall, zone: ViewModelHarness.utc) { id, _ in
            throw ChimeError(.tooLate, "too late: '\(id)' was shown")
        }
        let late = try form(h).add(ReminderDraft(title: "Cake", mode: .inDuration, when: "1h")).get()
        #expect(refusing.cancel(late.id).error?.message == "too late: '\(late.id)' was shown")
    }

    @Test func snoozeAnswersTheShownAlertAndHistoryListsTheLatestFirst() throws {
        let h = try ViewModelHarness()
        defer { h.cleanUp() }
        let form = form(h)
        let tea = try form.add(ReminderDraft(title: "Tea", mode: .inDuration, when: "1m")).get()
        let cake = try form.add(ReminderDraft(title: "Cake", mode: .inDuration, when: "2m")).get()
        // The runner shows both (claimed, posted), a minute apart.
        for (id, seconds) in [(tea.id, 60.0), (cake.id, 120.0)] {
            h.wall.advance(to: h.at(seconds))
            let claimed = try h.store.claimDue(now: h.at(seconds), systemZone: ViewModelHarness.utc)
            let occurrence = try #require(claimed.first { $0.reminderID == id })
            try h.store.markPosted([occurrence.key], at: h.at(seconds), noteID: id, serverID: nil, via: "desktop")
        }
        let model = list(h)
        #expect(model.state.reminders.isEmpty)
        #expect(Set(model.state.alerts.map(\.id)) == [tea.id, cake.id])
        #expect(!model.state.alerts.contains { !$0.canSnooze })
        #expect(model.state.history.map(\.title) == ["Cake", "Tea"])
        #expect(model.state.history.first?.line == "Mon 2026-01-05 09:02:00 +00:00 · on time · desktop · shown")

        let snoozed = model.snooze(tea.id)
        #expect(snoozed.error == nil)
        #expect(snoozed.message == "Snoozed until 09:12.")
        let row = try #require(snoozed.alerts.first { $0.id == tea.id })
        #expect(row.status == "Snoozed until 09:12")
        #expect(!row.canSnooze)
        // (As `chime history`: the alert answered "snoozed", its re-alert due.)
        #expect(snoozed.history.filter { $0.reminderID == tea.id }.map(\.result) == ["due", "snoozed"])
        // Answered already: refused as `chime snooze` refuses it.
        #expect(model.snooze(tea.id).error?.code == .conflict)
        // Nothing ever shown.
        #expect(model.snooze("nothing").error?.code == .notFound)
    }
}
