import ChimeCore
import ChimeDoses
import ChimeFocus
import ChimeStore
import ChimeTesting
import ChimeViewModels
import Foundation
import Testing

/// The Today page: the next reminders, today's doses with their answers, the focus session, on
/// the injected clock (Monday 2026-01-05 09:00 UTC).
struct TodayViewModelTests {
    func today(_ h: ViewModelHarness) -> TodayViewModel {
        TodayViewModel(store: h.store, book: h.book, timer: h.timer, clock: h.wall, zone: ViewModelHarness.utc)
    }

    @Test func emptyDaySaysSo() throws {
        let h = try ViewModelHarness()
        defer { h.cleanUp() }
        let state = today(h).state
        #expect(state.reminders.isEmpty && state.doses.isEmpty && state.focus == nil)
        #expect(state.reminderEmptyText == TodayViewModel.noReminders)
        #expect(state.doseEmptyText == TodayViewModel.noDoses)
        #expect(state.error == nil)
    }

    @Test func nextRemindersComeFirstAtMostFiveEachOpeningReminders() throws {
        let h = try ViewModelHarness()
        defer { h.cleanUp() }
        let form = ReminderFormViewModel(store: h.store, clock: h.wall, zone: ViewModelHarness.utc)
        for minutes in [50, 10, 30, 20, 40, 60] {
            _ = try form.add(ReminderDraft(title: "R\(minutes)", mode: .inDuration, when: "\(minutes)m")).get()
        }
        let model = today(h)
        #expect(model.state.reminders.map(\.title) == ["R10", "R20", "R30", "R40", "R50"])
        #expect(model.state.moreReminders)
        #expect(model.state.reminders.first?.subtitle == "Mon 2026-01-05 09:10 (in 10m)")
        #expect(model.state.reminders.allSatisfy { $0.page == .reminders })
        // The first has fired (claimed by the runner): the rest move up.
        h.wall.advance(by: 600)
        _ = try h.store.claimDue(now: h.wall.now(), systemZone: ViewModelHarness.utc)
        #expect(model.refresh().reminders.map(\.title) == ["R20", "R30", "R40", "R50", "R60"])
        #expect(!model.state.moreReminders)
        #expect(model.state.reminders.first?.subtitle == "Mon 2026-01-05 09:20 (in 10m)")
    }

    @Test func todaysDosesWithTheirAnswers() throws {
        let h = try ViewModelHarness()
        defer { h.cleanUp() }
        // (The family makes each dose as its time comes near.)
        try h.addMedication("Aspirin", at: "09:30,10:00,10:30")
        let model = today(h)
        let first = try #require(model.state.doses.first)
        #expect(model.state.doses.map(\.time) == ["09:30"])
        #expect(first.label.hasPrefix("Aspirin") && first.page == .doses && first.answer == .pending)
        _ = try h.book.answer(.take, .id(first.id))
        h.wall.advance(to: h.at(45 * 60))
        let second = try #require(model.refresh().doses.last)
        _ = try h.book.answer(.skip, .id(second.id))
        h.wall.advance(to: h.at(85 * 60))
        let answered = model.refresh().doses
        #expect(answered.map(\.time) == ["09:30", "10:00", "10:30"])
        #expect(answered.map(\.answer) == [.taken, .skipped, .pending])
        #expect(answered.map(\.status) == ["taken at 09:00", "skipped", "pending"])
        #expect(model.state.doseEmptyText == nil)
        // Unanswered past its grace window: overdue.
        h.wall.advance(to: h.at(150 * 60))
        #expect(model.refresh().doses.last?.status == "overdue")
        // Tomorrow: tomorrow's doses, not today's answers.
        h.wall.advance(to: h.at(86_400))
        #expect(model.refresh().doses.map(\.status) == ["pending"])
    }

    @Test func theFocusSessionWhileOneIsOpen() throws {
        let h = try ViewModelHarness()
        defer { h.cleanUp() }
        let model = today(h)
        let session = try h.timer.start(minutes: 25)
        h.wall.advance(by: 300)
        let focus = try #require(model.refresh().focus)
        #expect(focus.title == "Focus session")
        #expect(focus.subtitle == "Ends at 09:25")
        #expect(focus.page == .focus)
        #expect(focus.id == "focus-\(session.id)")
        _ = try h.timer.pause()
        h.wall.advance(by: 600)
        #expect(model.refresh().focus?.subtitle == "Paused, 20:00 left")
        // The focus alert is the family's: not among the reminders.
        #expect(model.state.reminders.isEmpty)
        _ = try h.timer.giveUp()
        #expect(model.refresh().focus == nil)
    }
}
