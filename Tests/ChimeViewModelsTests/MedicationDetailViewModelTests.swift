import ChimeCore
import ChimeDoses
import ChimeStore
import ChimeTesting
import ChimeViewModels
import Foundation
import Testing

/// The medication detail and its schedule editor (the seed's MedicationDetailViewModel and
/// ScheduleViewModel): validation naming each field in the CLI's words, saving through the family.
struct MedicationDetailViewModelTests {
    static let amountExpected = "a plain decimal number from 0.000001 to 1000000 with at most 6 decimal places, such as 100 or 2.5"

    @Test func aNewFormNamesEveryFieldWithAProblemInTheCLIsWords() throws {
        let h = try ViewModelHarness()
        defer { h.cleanUp() }
        let model = MedicationDetailViewModel(book: h.book)
        let empty = model.state
        #expect(empty.medicationID == nil)
        #expect(empty.form.startDate == "2026-01-05")
        #expect(!empty.isValid)
        #expect(Set(empty.fieldErrors.keys) == [.name, .amount, .unit])
        #expect(empty.validationError(for: .name) == "invalid name '': expected a name (required)")
        #expect(empty.validationError(for: .unit) == "invalid unit '': expected a unit such as mg, ml or tablet (required)")

        let bad = model.edit {
            $0.name = "Aspirin"
            $0.amount = "abc"
            $0.unit = "mg"
            $0.endDate = "2026-01-01"
            $0.stock = "-3"
            $0.schedule.times = "25:00"
            $0.schedule.clearDays()
        }
        #expect(Set(bad.fieldErrors.keys) == [.amount, .endDate, .stock, .times, .days])
        #expect(bad.validationError(for: .amount) == "invalid amount 'abc': expected \(Self.amountExpected)")
        #expect(bad.validationError(for: .endDate) == "invalid end date '2026-01-01': expected a date after the start date 2026-01-05")
        #expect(bad.validationError(for: .stock) == "invalid stock '-3': expected a count of doses, 0 or more")
        #expect(bad.validationError(for: .times)?.contains("25:00") == true)
        #expect(
            bad.validationError(for: .days)
                == "invalid days '': expected at least one day: every day, weekdays, weekends, or days such as mon,wed,fri"
        )
        #expect(!bad.hasError(for: .name))
        // Nothing is saved while a field has a problem.
        #expect(model.save() == nil)
        #expect(try h.book.medications(includeInactive: true).isEmpty)
        // A start date that is not a date is named as the CLI names --start.
        let start = model.edit { $0.startDate = "tomorrow" }
        #expect(start.validationError(for: .startDate)?.hasPrefix("invalid start date 'tomorrow'") == true)
    }

    @Test func savingANewMedicationAddsItWithItsSchedule() throws {
        let h = try ViewModelHarness(now: ViewModelHarness.instant(7, 0))
        defer { h.cleanUp() }
        let model = MedicationDetailViewModel(book: h.book)
        model.edit {
            $0.name = "Aspirin"
            $0.amount = "100"
            $0.unit = "mg"
            $0.instructions = "with food"
            $0.schedule.times = "08:00,20:00"
            $0.schedule.selectWeekdays()
        }
        #expect(model.state.isValid)
        #expect(model.state.form.schedule.summary == "every weekday 08:00,20:00")
        let saved = try #require(model.save())
        #expect(saved.medication.name == "Aspirin")
        #expect(saved.medication.instructions == "with food")
        #expect(saved.schedules.filter(\.isEnabled).map(\.days) == [.weekdays])
        let state = model.state
        #expect(state.medicationID == saved.medication.id)
        #expect(state.lines.first == "\(saved.medication.id)  Aspirin (100 mg)")
        #expect(state.lines.contains("    Instructions: with food"))
        #expect(state.adherenceText == "Adherence, last 30 days: no doses due yet")
        // The family schedules its doses: the first at 08:00 today (a Monday).
        #expect(try h.book.nextDoseBySchedule("Aspirin").values.first == ViewModelHarness.instant(8, 0))
    }

    @Test func aNewMedicationTakesTheConfigsGraceAndMissedAfter() throws {
        let h = try ViewModelHarness(now: ViewModelHarness.instant(7, 0))
        defer { h.cleanUp() }
        let model = MedicationDetailViewModel(book: h.book, grace: 20 * 60, missedAfter: 3 * 3600)
        model.edit {
            $0.name = "Aspirin"
            $0.amount = "100"
            $0.unit = "mg"
        }
        let saved = try #require(model.save())
        #expect(saved.medication.grace == 20 * 60)
        #expect(saved.medication.missedAfter == 3 * 3600)
        // Without them: the family's defaults, as `chime med add` without a config.
        let plain = MedicationDetailViewModel(book: h.book)
        plain.edit {
            $0.name = "Vitamin D"
            $0.amount = "1"
            $0.unit = "tablet"
        }
        let other = try #require(plain.save())
        #expect(other.medication.grace != 20 * 60)
    }

    @Test func editingSavesOnlyWhatChangedAndTheScheduleEditorItsDays() throws {
        let h = try ViewModelHarness(now: ViewModelHarness.instant(7, 0))
        defer { h.cleanUp() }
        let added = try h.addMedication("Aspirin", at: "08:00,20:00")
        let id = added.medication.id
        let model = MedicationDetailViewModel(book: h.book, medicationID: id)
        let loaded = model.state
        #expect(loaded.form.name == "Aspirin")
        #expect(loaded.form.amount == "100")
        #expect(loaded.form.schedule.times == "08:00,20:00")
        #expect(loaded.form.schedule.isEveryday)
        #expect(loaded.isValid)
        // Nothing changed: nothing to write, the medication as it is.
        #expect(model.save()?.schedules == added.schedules)

        model.edit { $0.amount = "200" }
        let amount = try #require(model.save())
        #expect(amount.medication.amount == 200)
        // The schedule was not touched: the same one stays enabled.
        #expect(amount.schedules.filter(\.isEnabled).map(\.id) == added.schedules.filter(\.isEnabled).map(\.id))

        // The schedule editor: weekends only, then Monday as well.
        model.edit {
            $0.schedule.selectWeekends()
            $0.schedule.toggleDay(isoWeekday: 1)
        }
        #expect(!model.state.form.schedule.isWeekendsOnly)
        let days = try #require(model.save())
        #expect(days.schedules.filter(\.isEnabled).map(\.days) == [[.saturday, .sunday, .monday]])
        #expect(days.schedules.filter(\.isEnabled).map(\.summary) == ["every mon,sat,sun 08:00,20:00"])
        #expect(model.state.form.schedule.days == [.saturday, .sunday, .monday])

        // A problem in the form keeps the stored medication as it was.
        model.edit { $0.unit = "" }
        #expect(model.save() == nil)
        #expect(try h.book.medication("Aspirin").medication.unit == "mg")
        #expect(model.state.hasError(for: .unit))
    }

    @Test func aCycleScheduleKeepsItsRuleWhenItsTimesChangeAndDaysOfTheWeekReplaceIt() throws {
        let h = try ViewModelHarness(now: ViewModelHarness.instant(7, 0))
        defer { h.cleanUp() }
        let start = CivilDay.of(h.wall.now(), in: ViewModelHarness.utc)
        let rule = DoseDayRule.cycle(on: 21, off: 7, from: start)
        let added = try h.book.addMedication(
            MedicationDraft(name: "Pill", amount: "1", unit: "tablet", startDay: start),
            schedule: ScheduleDraft(times: [LocalTime(hour: 21, minute: 0)!], dayRule: rule)
        )
        let model = MedicationDetailViewModel(book: h.book, medicationID: added.medication.id)
        #expect(model.state.form.schedule.dayRule == rule)
        #expect(model.state.form.schedule.summary == "21 days on, 7 off from \(CivilDay.format(start)) 21:00")

        model.edit { $0.schedule.times = "20:00" }
        let times = try #require(model.save())
        #expect(times.schedules.filter(\.isEnabled).map(\.dayRule) == [rule])
        #expect(times.schedules.filter(\.isEnabled).map(\.times) == [[LocalTime(hour: 20, minute: 0)!]])

        model.edit { $0.schedule.selectWeekdays() }
        let weekdays = try #require(model.save())
        #expect(weekdays.schedules.filter(\.isEnabled).map(\.dayRule) == [nil])
        #expect(weekdays.schedules.filter(\.isEnabled).map(\.days) == [.weekdays])
    }

    /// An after-last medication (added with `chime med add --after-last`) edited in the app:
    /// other fields save and its schedule stays; times typed replace it with clock times.
    @Test func anAfterLastScheduleStaysWhenOtherFieldsChangeAndTimesReplaceIt() throws {
        let h = try ViewModelHarness(now: ViewModelHarness.instant(7, 0))
        defer { h.cleanUp() }
        let start = CivilDay.of(h.wall.now(), in: ViewModelHarness.utc)
        let added = try h.book.addMedication(
            MedicationDraft(name: "Pain", amount: "500", unit: "mg", startDay: start),
            schedule: ScheduleDraft(times: [], afterLast: 6 * 3_600, maxPerDay: 4)
        )
        let model = MedicationDetailViewModel(book: h.book, medicationID: added.medication.id)
        #expect(model.state.form.schedule.summary == "6h after each dose taken, at most 4 in 24h")
        model.edit { $0.instructions = "with water" }
        let saved = try #require(model.save())
        #expect(saved.medication.instructions == "with water")
        #expect(saved.schedules.filter(\.isEnabled).map(\.afterLast) == [6 * 3_600])
        #expect(saved.schedules.filter(\.isEnabled).map(\.maxPerDay) == [4])

        model.edit { $0.schedule.times = "09:00" }
        let timed = try #require(model.save())
        #expect(timed.schedules.filter(\.isEnabled).map(\.afterLast) == [nil])
        #expect(timed.schedules.filter(\.isEnabled).map(\.times) == [[LocalTime(hour: 9, minute: 0)!]])
    }

    @Test func deactivateReactivateAndDelete() throws {
        let h = try ViewModelHarness(now: ViewModelHarness.instant(7, 0))
        defer { h.cleanUp() }
        let id = try h.addMedication("Aspirin", at: "08:00").medication.id
        let model = MedicationDetailViewModel(book: h.book, medicationID: id)
        #expect(model.state.isActive)
        let off = model.deactivate()
        #expect(!off.isActive)
        #expect(off.lines.first == "\(id)  Aspirin (100 mg)  (inactive)")
        #expect(model.reactivate().isActive)
        #expect(model.delete())
        #expect(try h.book.medications(includeInactive: true).isEmpty)
        #expect(model.refresh().error?.code == .notFound)
    }

    @Test func theScheduleFormsQuickChoices() {
        var form = ScheduleForm(times: "08:00")
        #expect(form.isEveryday)
        #expect(form.summary == "every day 08:00")
        form.selectWeekdays()
        #expect(form.isWeekdaysOnly && !form.isEveryday)
        form.toggleDay(isoWeekday: 5)
        #expect(form.days == [.monday, .tuesday, .wednesday, .thursday])
        form.selectWeekends()
        #expect(form.isWeekendsOnly)
        form.clearDays()
        #expect(form.summary == nil)
        form.selectAllDays()
        form.asNeeded = true
        #expect(form.summary == "as needed")
    }
}
