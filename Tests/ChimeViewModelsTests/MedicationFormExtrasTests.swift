import ChimeCore
import ChimeDoses
import ChimeTesting
import ChimeViewModels
import Foundation
import Testing

/// The medication form's fields that were CLI-only (issue 37): after the last dose with a daily
/// maximum, the taper, who is told, and Delete's question; each error in the CLI's words, and
/// nothing written while one shows.
struct MedicationFormExtrasTests {
    @Test func anAfterLastMedicationWithAMaximumAndSomeoneToldIsAddedEditedAndStopsTelling() throws {
        let h = try ViewModelHarness(now: ViewModelHarness.instant(7, 0))
        defer { h.cleanUp() }
        let model = MedicationDetailViewModel(book: h.book)
        let bad = model.edit {
            $0.name = "Pain"
            $0.amount = "500"
            $0.unit = "mg"
            $0.schedule.times = ""
            $0.schedule.afterLastText = "6x"
            $0.schedule.maxPerDay = "0/day"
            $0.tellChannel = "ftp://example.com"
            $0.tellWhen = "soon"
        }
        #expect(Set(bad.fieldErrors.keys) == [.afterLast, .maxPerDay, .tell, .tellAfter])
        #expect(bad.validationError(for: .afterLast)?.hasPrefix("invalid --after-last '6x': expected") == true)
        #expect(
            bad.validationError(for: .maxPerDay)
                == "invalid max '0/day': expected a count of doses in 24 hours from 1 to 100, such as 4/day (or 4)"
        )
        #expect(bad.validationError(for: .tell) == "invalid --tell 'ftp://example.com': expected \(DoseTellChannel.expected)")
        #expect(bad.validationError(for: .tellAfter) == "invalid --after 'soon': expected a duration from 1m to 7d such as 30m, or missed")
        #expect(model.save() == nil)
        #expect(try h.book.medications(includeInactive: true).isEmpty)

        let good = model.edit {
            $0.schedule.afterLastText = "6h"
            $0.schedule.maxPerDay = "4/day"
            $0.tellChannel = "ntfy:carers-alex"
            $0.tellWhen = "30m"
        }
        #expect(good.isValid)
        #expect(good.form.schedule.summary == "6h after each dose taken, at most 4 in 24h")
        let saved = try #require(model.save())
        let schedule = try #require(saved.schedules.last { $0.isEnabled })
        #expect(schedule.afterLast == 6 * 3_600)
        #expect(schedule.maxPerDay == 4)
        #expect(saved.tell == DoseTellRule(channel: .ntfy(topic: "carers-alex"), after: 30 * 60))
        #expect(model.state.tellText == "Tells ntfy:carers-alex, when a dose is unanswered 30m after its time")

        // Opened again: the form holds what was saved (the channel shows above, not in the entry).
        let again = MedicationDetailViewModel(book: h.book, medicationID: saved.medication.id)
        #expect(again.state.form.schedule.isAfterLast)
        #expect(again.state.form.schedule.afterLastText == "6h")
        #expect(again.state.form.schedule.maxPerDay == "4/day")
        #expect(again.state.form.tellChannel == "")
        #expect(again.state.form.tellWhen == "30m")

        // The maximum taken away, the interval kept; the time changed, the channel kept.
        again.edit {
            $0.schedule.maxPerDay = ""
            $0.tellWhen = "missed"
        }
        let edited = try #require(again.save())
        #expect(edited.schedules.filter(\.isEnabled).map(\.afterLast) == [6 * 3_600])
        #expect(edited.schedules.filter(\.isEnabled).map(\.maxPerDay) == [nil])
        #expect(edited.tell == DoseTellRule(channel: .ntfy(topic: "carers-alex"), after: nil))

        again.edit { $0.tellOff = true }
        let off = try #require(again.save())
        #expect(off.tell == nil)
        #expect(again.state.tellText == "No one is told")
    }

    @Test func anAsNeededMedicationTakesADailyMaximumAndClockTimesDropIt() throws {
        let h = try ViewModelHarness(now: ViewModelHarness.instant(7, 0))
        defer { h.cleanUp() }
        let model = MedicationDetailViewModel(book: h.book)
        model.edit {
            $0.name = "Ibuprofen"
            $0.amount = "400"
            $0.unit = "mg"
            $0.schedule.asNeeded = true
            $0.schedule.maxPerDay = "3"
        }
        #expect(model.state.form.schedule.summary == "as needed, at most 3 in 24h")
        let saved = try #require(model.save())
        #expect(saved.schedules.filter(\.isEnabled).map(\.maxPerDay) == [3])
        #expect(model.state.form.schedule.maxPerDay == "3/day")
        // Clock times (the form sends no maximum with them): the maximum is not theirs.
        model.edit {
            $0.schedule.asNeeded = false
            $0.schedule.maxPerDay = ""
            $0.schedule.times = "08:00"
        }
        let timed = try #require(model.save())
        #expect(timed.schedules.filter(\.isEnabled).map(\.maxPerDay) == [nil])
        #expect(timed.schedules.filter(\.isEnabled).map(\.frequency) == [.daily])
    }

    @Test func aTimeToTellWithNoOneToTellIsRefusedBeforeAnythingIsWritten() throws {
        let h = try ViewModelHarness(now: ViewModelHarness.instant(7, 0))
        defer { h.cleanUp() }
        let model = MedicationDetailViewModel(book: h.book)
        model.edit {
            $0.name = "Iron"
            $0.amount = "14"
            $0.unit = "mg"
            $0.tellWhen = "1h"
        }
        #expect(model.save() == nil)
        #expect(model.state.validationError(for: .tell)?.hasPrefix("missing a channel") == true)
        #expect(try h.book.medications(includeInactive: true).isEmpty)
    }

    @Test func aWebhookIsShownByItsOriginAndOneWithAQueryIsRefused() throws {
        let h = try ViewModelHarness(now: ViewModelHarness.instant(7, 0))
        defer { h.cleanUp() }
        let model = MedicationDetailViewModel(book: h.book)
        model.edit {
            $0.name = "Iron"
            $0.amount = "14"
            $0.unit = "mg"
            $0.tellChannel = "https://hooks.example.com/hook?token=s3cret"
        }
        #expect(model.state.validationError(for: .tell)?.contains("s3cret") == false)
        #expect(model.state.validationError(for: .tell)?.hasPrefix("invalid --tell") == true)
        model.edit { $0.tellChannel = "https://hooks.example.com/services/T0/B0/s3cret" }
        #expect(model.save() != nil)
        #expect(model.state.tellText.hasPrefix("Tells webhook https://hooks.example.com"))
        #expect(!model.state.tellText.contains("s3cret"))
    }

    @Test func aTaperIsReadAsTheCLIReadsItAndCanBeTakenAway() throws {
        let h = try ViewModelHarness(now: ViewModelHarness.instant(7, 0))
        defer { h.cleanUp() }
        let model = MedicationDetailViewModel(book: h.book)
        let bad = model.edit {
            $0.name = "Prednisone"
            $0.amount = ""
            $0.unit = "mg"
            $0.taper = "10mg until 01-10, 5ml until 01-20"
        }
        #expect(bad.validationError(for: .taper) == "invalid taper piece '5ml': expected amounts in the medication's unit, mg")
        #expect(!bad.hasError(for: .amount))
        #expect(bad.taperSummary == nil)
        let worse = model.edit { $0.taper = "10mg soon" }
        #expect(worse.validationError(for: .taper)?.hasPrefix("invalid taper piece '10mg soon': expected") == true)
        #expect(model.save() == nil)
        #expect(try h.book.medications(includeInactive: true).isEmpty)

        let good = model.edit { $0.taper = "10mg until 01-10, 5mg until 01-20, then stop" }
        #expect(good.isValid)
        #expect(good.taperSummary == "10 mg until 2026-01-10, 5 mg until 2026-01-20, then stop")
        let saved = try #require(model.save())
        #expect(saved.medication.taper?.stops == true)
        let lastDay = try CivilDay.parse("2026-01-20", field: "date")
        #expect(saved.medication.endDay == lastDay)
        #expect(model.state.form.taper == "10 mg until 2026-01-10, 5 mg until 2026-01-20, then stop")

        // Taken away: the amount every day, and the end the taper set goes with it.
        model.edit { $0.taper = "" }
        let plain = try #require(model.save())
        #expect(plain.medication.taper == nil)
        #expect(plain.medication.endDay == nil)
    }

    @Test func deleteAsksAsTheCLIAsks() throws {
        let h = try ViewModelHarness(now: ViewModelHarness.instant(7, 0))
        defer { h.cleanUp() }
        let id = try h.addMedication("Aspirin", at: "08:00").medication.id
        let model = MedicationDetailViewModel(book: h.book, medicationID: id)
        #expect(model.deletionQuestion()?.hasPrefix("Delete Aspirin with its 1 schedule and ") == true)
        #expect(MedicationDetailViewModel(book: h.book).deletionQuestion() == nil)
    }
}
