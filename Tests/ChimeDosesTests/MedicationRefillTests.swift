import ChimeCore
import ChimeStore
import ChimeTesting
import Foundation
import Testing

@testable import ChimeDoses

/// `chime med refill`'s use case (a new box adds to the stock, and the refill
/// reminder comes again when it next runs low) and the low-stock rule `med add`/`edit` warn by.
struct MedicationRefillTests {
    /// 2026-01-05 (a Monday) plus `day` days, at `hour`:`minute` UTC.
    static func at(day: Int = 0, _ hour: Int, _ minute: Int) -> Date {
        DoseHarness.instant(2026, 1, 5, hour, minute).addingTimeInterval(TimeInterval(day * 86_400))
    }

    @Test func refillAddsToTheStockAndTheRefillReminderComesAgain() throws {
        let h = try DoseHarness(now: Self.at(7, 59))
        defer { h.cleanUp() }
        let id = try h.add("Aspirin", at: "08:00") {
            $0.stock = 8
            $0.refillDays = 7
        }.medication.id
        let reminder = "refill-\(id)"
        // One dose taken: 7 left, at the threshold: the refill reminder is scheduled.
        h.clock.advance(to: Self.at(8, 1))
        #expect(try h.book.answer(.take, .medication("Aspirin")).refill != nil)
        #expect(try h.pendingAlerts().map(\.id).contains(reminder))

        // A new box of 30.
        let refill = try h.book.refill("aspirin", adding: 30)
        #expect(refill.previous == 7)
        #expect(refill.added == 30)
        #expect(refill.detail.medication.stock == 37)
        #expect(refill.detail.stockDaysLeft == 37)
        #expect(!refill.detail.isLowOnStock)
        #expect(refill.detail.lowStockWarning == nil)
        #expect(try h.book.medication("Aspirin").medication.stock == 37)
        // The pending refill reminder is moot: cancelled.
        #expect(try !h.pendingAlerts().map(\.id).contains(reminder))

        // Taken down to the threshold again: a second refill reminder (not held back by the first).
        for day in 1...30 {
            h.clock.advance(to: Self.at(day: day, 8, 1))
            _ = try h.book.answer(.take, .medication("Aspirin"))
        }
        #expect(try h.book.medication("Aspirin").medication.stock == 7)
        #expect(try h.reminderRows(id: reminder) == 2)
        #expect(try h.pendingAlerts().map(\.id).contains(reminder))
    }

    @Test(
        "The count N: a whole number from 1 to 100000, else one line naming it",
        arguments: ["0", "-5", "2.5", "30x", "", " ", "+3", "100001", "99999999999999999999999", "0x10", "３０"]
    )
    func badCounts(_ text: String) {
        let error = thrownError { _ = try Refill.count(text) }
        #expect(error?.code == .usage)
        #expect(
            error?.message == "invalid refill count '\(text)': expected a whole number of doses from 1 to 100000, such as 30",
            "\(error?.message ?? "no error")"
        )
    }

    @Test func goodCounts() throws {
        #expect(try Refill.count("30") == 30)
        #expect(try Refill.count("1") == 1)
        #expect(try Refill.count("100000") == 100_000)
        #expect(try Refill.count("007") == 7)
        #expect(Refill.missingCount("Aspirin").message.contains("'chime med refill Aspirin 30'"))
        #expect(Refill.missingCount("Aspirin").code == .usage)
    }

    @Test func refusedRefillsChangeNothing() throws {
        let h = try DoseHarness(now: Self.at(7, 0))
        defer { h.cleanUp() }
        try h.add("Aspirin", at: "08:00") { $0.stock = 10 }
        try h.add("Zinc", at: "08:00")
        try h.add("Huge", at: "08:00") { $0.stock = Int.max - 5 }

        #expect(thrownError { _ = try h.book.refill("Aspirin", adding: 0) }?.code == .usage)
        #expect(thrownError { _ = try h.book.refill("Aspirin", adding: -5) }?.code == .usage)
        #expect(thrownError { _ = try h.book.refill("Aspirin", adding: 100_001) }?.code == .usage)
        #expect(try h.book.medication("Aspirin").medication.stock == 10)

        let unknown = thrownError { _ = try h.book.refill("Aspirn", adding: 30) }
        #expect(unknown?.code == .notFound)
        #expect(unknown?.message.hasPrefix("no medication is named or numbered 'Aspirn'") == true)

        let uncounted = thrownError { _ = try h.book.refill("Zinc", adding: 30) }
        #expect(uncounted?.code == .conflict)
        #expect(uncounted?.message.contains("--stock N") == true)
        #expect(try h.book.medication("Zinc").medication.stock == nil)

        let overflow = thrownError { _ = try h.book.refill("Huge", adding: 30) }
        #expect(overflow?.code == .usage)
        #expect(try h.book.medication("Huge").medication.stock == Int.max - 5)
    }

    @Test func lowStockIsTheRefillRemindersRule() throws {
        let h = try DoseHarness(now: Self.at(7, 0))
        defer { h.cleanUp() }
        // Twice a day, refill 7 days ahead: 14 doses is the threshold.
        let atThreshold = try h.add("Aspirin", at: "08:00,20:00") {
            $0.stock = 14
            $0.refillDays = 7
        }
        #expect(atThreshold.isLowOnStock)
        #expect(
            atThreshold.lowStockWarning
                == "Aspirin is low: 14 doses, about 7 days left, at or below its refill threshold of 7 days: "
                + "'chime med refill \(atThreshold.medication.id) N' adds a box"
        )
        let above = try h.add("Zinc", at: "08:00,20:00") {
            $0.stock = 15
            $0.refillDays = 7
        }
        #expect(!above.isLowOnStock)
        #expect(above.lowStockWarning == nil)
        let none = try h.add("Iron", at: "08:00") { $0.stock = 0 }
        #expect(none.lowStockWarning == "Iron has no doses in stock: 'chime med refill \(none.medication.id) N' adds a box")
        #expect(try !h.add("Calcium", at: "08:00").isLowOnStock)  // not counted
        var ibuprofen = h.draft("Ibuprofen")
        ibuprofen.stock = 1
        let asNeeded = try h.book.addMedication(ibuprofen, schedule: ScheduleDraft(times: [], asNeeded: true))
        #expect(!asNeeded.isLowOnStock)  // no pace to count days by: low only when none is left

        // Edited low: the detail the edit returns says so.
        var changes = MedicationChanges()
        changes.stock = .some(3)
        #expect(try h.book.editMedication("Zinc", changes).isLowOnStock)
        // A schedule that takes more a day makes the same stock low.
        var pace = MedicationChanges()
        pace.scheduleChange = ScheduleChange(times: try LocalTime.spokenList("8am,2pm,8pm"))
        changes.stock = .some(20)
        #expect(try !h.book.editMedication("Zinc", changes).isLowOnStock)
        #expect(try h.book.editMedication("Zinc", pace).isLowOnStock)
    }

    /// The ChimeError thrown by `body`, or nil.
    func thrownError(_ body: () throws -> Void) -> ChimeError? {
        do {
            try body()
            return nil
        } catch {
            return error as? ChimeError
        }
    }
}
