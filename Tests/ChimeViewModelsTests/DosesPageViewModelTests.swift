import ChimeCore
import ChimeDoses
import ChimeStore
import ChimeTesting
import ChimeViewModels
import Foundation
import Testing

/// What the app's Doses page reads beyond the seed's view models: today's doses with Take, Skip
/// and Snooze, the adherence by day and by medication (the chart), and Refill; on a real store
/// and the injected clock.
struct DosesPageViewModelTests {
    static func at(day: Int = 0, _ hour: Int, _ minute: Int = 0) -> Date { ViewModelHarness.instant(day: day, hour, minute) }

    @Test func todaysDosesOfferTakeSkipAndSnoozeWhenTheyApplyAndShowTheirAnswers() throws {
        let h = try ViewModelHarness(now: Self.at(7, 0))
        defer { h.cleanUp() }
        let model = DosesTodayViewModel(book: h.book)
        #expect(model.state.doses.isEmpty)
        #expect(model.state.emptyText == "No doses today.")

        try h.addMedication("Aspirin", at: "08:00,20:00")
        let early = try #require(model.refresh().doses.first)
        #expect(early.label == "Aspirin (100 mg)")
        #expect(early.time == "08:00")
        #expect(early.spokenName == "Aspirin (100 mg), due 08:00")
        #expect(early.statusText == "pending")
        // An hour ahead: past its 30-minute grace window, so it can be skipped but not taken yet.
        #expect(!early.canTake && early.canSkip && !early.canSnooze && !early.isAnswered)
        let tooSoon = model.take(early.id)
        #expect(tooSoon.error?.code == .conflict)
        #expect(tooSoon.error?.message.contains("is not due yet") == true)

        h.wall.advance(to: Self.at(8, 5))
        let due = try #require(model.refresh().doses.first)
        #expect(due.canTake && due.canSkip && due.canSnooze)
        let snoozed = model.snooze(due.id)
        #expect(snoozed.error == nil)
        #expect(snoozed.message == "Aspirin 100 mg snoozed until 08:15")
        #expect(snoozed.doses.first?.statusText == "pending, snoozed until 08:15")
        #expect(snoozed.answeredAlert?.occurrence == "med-1-20260105-0800")
        #expect(snoozed.answeredAlert?.confirmation.title == "Aspirin 100 mg snoozed until 08:15")

        let taken = model.take(due.id)
        #expect(taken.error == nil)
        #expect(taken.message == "✓ Aspirin 100 mg taken at 08:05")
        #expect(taken.answeredAlert?.occurrence == "med-1-20260105-0800")
        #expect(taken.answeredAlert?.confirmation.title == "✓ Aspirin 100 mg taken at 08:05")
        let row = try #require(taken.doses.first)
        #expect(row.isAnswered && !row.canTake && !row.canSkip && !row.canSnooze)
        #expect(row.statusText == "taken at 08:05")
        // The evening dose is today's too: it may be skipped ahead.
        let evening = try #require(taken.doses.last)
        #expect(taken.doses.map(\.time) == ["08:00", "20:00"])
        let skipped = model.skip(evening.id)
        #expect(skipped.doses.last?.statusText == "skipped")
        #expect(skipped.message == "Aspirin 100 mg skipped")

        // Answered twice: the family's refusal, the list as it is.
        let again = model.take(due.id)
        #expect(again.error?.code == .conflict)
        #expect(again.doses.count == 2)
        // A refresh clears the last message and error.
        let read = model.refresh()
        #expect(read.message == nil && read.error == nil && read.answeredAlert == nil)
    }

    @Test func theHistoryGivesTheAdherenceByDayAndByMedicationForTheChart() throws {
        let h = try ViewModelHarness(now: Self.at(7, 0))
        defer { h.cleanUp() }
        let history = DoseHistoryViewModel(book: h.book)
        #expect(history.state.adherenceByDay.isEmpty)
        #expect(history.state.adherenceText == "Adherence, last 7 days: — (nothing due yet)")
        #expect(history.state.chartDescription == "Adherence by day, last 7 days: nothing due yet")

        try h.addMedication("Aspirin", at: "08:00")
        let today = DosesTodayViewModel(book: h.book)
        h.wall.advance(to: Self.at(8, 5))
        #expect(today.take(try #require(today.refresh().doses.first).id).error == nil)
        h.wall.advance(to: Self.at(day: 1, 8, 10))
        #expect(today.skip(try #require(today.refresh().doses.first).id).error == nil)

        let state = history.refresh()
        #expect(state.adherenceText == "Adherence, last 7 days: 50% (1 taken, 0 missed, 1 skipped)")
        #expect(state.adherenceByDay.map(\.label) == ["Mon 01-05", "Tue 01-06"])
        #expect(state.adherenceByDay.map(\.weekday) == ["Mon", "Tue"])
        #expect(state.adherenceByDay.map(\.adherence.rate) == [1, 0])
        #expect(
            state.chartDescription
                == "Adherence by day, last 7 days: Mon 01-05: 100% (1 of 1 taken); Tue 01-06: 0% (0 of 1 taken)"
        )
        let aspirin = try #require(state.adherenceByMedication.first)
        #expect(state.adherenceByMedication.count == 1)
        #expect(aspirin.name == "Aspirin")
        #expect(aspirin.figure == "50% (1 taken, 0 missed, 1 skipped)")
        #expect(aspirin.text == "Aspirin: 50% (1 taken, 0 missed, 1 skipped)")

        // A day with nothing due says so.
        h.wall.advance(to: Self.at(day: 2, 7, 0))
        let quiet = history.refresh()
        #expect(quiet.adherenceByDay.last?.text == "Wed 01-07: nothing due")
    }

    @Test func refillAddsABoxToACountedStockAndSaysItAsTheCLIDoes() throws {
        let h = try ViewModelHarness(now: Self.at(7, 0))
        defer { h.cleanUp() }
        let counted = try h.addMedication("Aspirin", at: "08:00") { $0.stock = 2 }.medication.id
        let uncounted = try h.addMedication("Iron", at: "08:00").medication.id
        let model = MedicationListViewModel(book: h.book)

        let zero = model.refill(counted, count: "0")
        #expect(zero.error?.code == .usage)
        #expect(zero.error?.message == "invalid refill count '0': expected a whole number of doses from 1 to 100000, such as 30")
        #expect(zero.message == nil)

        let refilled = model.refill(counted, count: "30")
        #expect(refilled.error == nil)
        #expect(refilled.message == "Refilled Aspirin: 2 doses + 30 = 32 doses, about 32 days left.")
        #expect(refilled.medications.first { $0.id == counted }?.detail.medication.stock == 32)
        #expect(model.refresh().message == nil)

        let notCounted = model.refill(uncounted, count: "30")
        #expect(notCounted.error?.code == .conflict)
        #expect(notCounted.message == nil)
    }

    /// The medication list's Take (as needed, after-last): a dose logged now, and past a daily
    /// maximum the same refusal as `chime dose take`, at the top of the page.
    @Test func takeNowLogsADoseAndIsRefusedPastTheDailyMaximum() throws {
        let h = try ViewModelHarness(now: Self.at(8, 0))
        defer { h.cleanUp() }
        let draft = MedicationDraft(
            name: "Ibuprofen",
            amount: "400",
            unit: "mg",
            startDay: CivilDay.of(h.wall.now(), in: ViewModelHarness.utc)
        )
        _ = try h.book.addMedication(draft, schedule: ScheduleDraft(times: [], asNeeded: true, maxPerDay: 1))
        #expect(MedicationListViewModel(book: h.book).state.medications.first?.canTakeNow == true)
        let model = DosesTodayViewModel(book: h.book)
        let taken = model.takeNow("Ibuprofen")
        #expect(taken.error == nil)
        #expect(taken.message == "✓ Ibuprofen 400 mg taken at 08:00")
        h.wall.advance(to: Self.at(9, 0))
        let refused = model.takeNow("Ibuprofen")
        #expect(refused.error?.code == .conflict)
        #expect(
            refused.error?.message
                == "Ibuprofen is at its maximum of 1 in 24 hours: 1 taken since 08:00; the next is allowed tomorrow at 08:00"
        )
    }
}
