import ChimeCore
import ChimeDoses
import ChimeStore
import ChimeTesting
import Foundation
import Testing

/// The seed's rules for a medication and its schedule, one by one: each refusal is a usage
/// error naming the field and the rule, and nothing is stored after it.
struct DoseValidationTests {
    /// Monday 2026-01-05 07:00 UTC.
    static let now = DoseHarness.instant(2026, 1, 5, 7, 0)
    static let today = CivilDay.of(now, in: DoseHarness.utc)

    static func draft(_ change: (inout MedicationDraft) -> Void) -> MedicationDraft {
        var draft = MedicationDraft(name: "Aspirin", amount: "100", unit: "mg", startDay: today)
        change(&draft)
        return draft
    }

    /// A draft breaking one rule, and the exact message.
    static let medicationCases: [(String, MedicationDraft, String)] = [
        ("empty name", draft { $0.name = "   " }, "invalid name '   ': expected a name (required)"),
        (
            "name over 100",
            draft { $0.name = String(repeating: "a", count: 101) },
            "invalid name '\(String(repeating: "a", count: 40))…': expected at most 100 characters (it has 101)"
        ),
        (
            "amount not a number", draft { $0.amount = "abc" },
            "invalid amount 'abc': expected a plain decimal number from 0.000001 to 1000000 with at most 6 decimal places, such as 100 or 2.5"
        ),
        (
            "amount infinite", draft { $0.amount = "inf" },
            "invalid amount 'inf': expected a plain decimal number from 0.000001 to 1000000 with at most 6 decimal places, such as 100 or 2.5"
        ),
        (
            "amount zero", draft { $0.amount = "0" },
            "invalid amount '0': expected a plain decimal number from 0.000001 to 1000000 with at most 6 decimal places, such as 100 or 2.5"
        ),
        (
            "amount negative", draft { $0.amount = "-2.5" },
            "invalid amount '-2.5': expected a plain decimal number from 0.000001 to 1000000 with at most 6 decimal places, such as 100 or 2.5"
        ),
        ("empty unit", draft { $0.unit = " " }, "invalid unit ' ': expected a unit such as mg, ml or tablet (required)"),
        (
            "unit over 20",
            draft { $0.unit = String(repeating: "u", count: 21) },
            "invalid unit '\(String(repeating: "u", count: 21))': expected at most 20 characters"
        ),
        (
            "instructions over 500",
            draft { $0.instructions = String(repeating: "i", count: 501) },
            "invalid instructions '\(String(repeating: "i", count: 40))…': expected at most 500 characters"
        ),
        (
            "end date on the start date",
            draft { $0.endDay = today },
            "invalid end date '2026-01-05': expected a date after the start date 2026-01-05"
        ),
        (
            "end date before the start date",
            draft { $0.endDay = today - 1 },
            "invalid end date '2026-01-04': expected a date after the start date 2026-01-05"
        ),
        ("grace too short", draft { $0.grace = 30 }, "invalid grace '30s': expected from 1m to 24h (default 30m)"),
        (
            "missed window shorter than grace",
            draft { $0.missedAfter = 600 },
            "invalid missed after '10m': expected at least the grace window (30m) and at most 7d (default 4h)"
        ),
        ("negative stock", draft { $0.stock = -1 }, "invalid stock '-1': expected a count of doses, 0 or more"),
        (
            "refill days over 365", draft { $0.refillDays = 366 },
            "invalid refill days '366': expected a number of days from 0 to 365 (default 7)"
        ),
    ]

    @Test func eachMedicationRuleIsAUsageErrorNamingTheFieldAndTheRule() {
        for (rule, draft, message) in Self.medicationCases {
            let error = #expect(throws: ChimeError.self, "\(rule)") { try draft.validated() }
            #expect(error?.code == .usage, "\(rule)")
            #expect(error?.message == message, "\(rule)")
        }
    }

    @Test func theLimitsThemselvesAreAccepted() throws {
        let (checked, amount) = try Self.draft {
            $0.name = "  " + String(repeating: "a", count: 100) + "  "
            $0.amount = " 2.5 "
            $0.unit = String(repeating: "u", count: 20)
            $0.endDay = Self.today + 1
            $0.grace = 60
            $0.missedAfter = 60
            $0.stock = 0
            $0.refillDays = 0
        }.validated()
        #expect(checked.name == String(repeating: "a", count: 100))
        #expect(amount == 2.5)
        #expect(checked.endDay == Self.today + 1)
    }

    @Test func eachScheduleRuleIsAUsageError() throws {
        let eight = try LocalTime.parse("08:00")
        let cases: [(ScheduleDraft, String)] = [
            (ScheduleDraft(times: []), "missing times: give --at 08:00[,20:00…] (24-hour HH:MM), or --as-needed"),
            (
                ScheduleDraft(times: [eight], days: []),
                "invalid days '': expected at least one day: every day, weekdays, weekends, or days such as mon,wed,fri"
            ),
            (ScheduleDraft(times: [eight], minInterval: 3_600), "invalid schedule: --min-interval is for as-needed medications"),
            (
                ScheduleDraft(times: [eight], asNeeded: true),
                "invalid schedule: an as-needed medication has no times (leave out --at, or --as-needed)"
            ),
            (ScheduleDraft(times: [], asNeeded: true, minInterval: 30), "invalid min interval '30s': expected from 1m to 7d"),
        ]
        for (schedule, message) in cases {
            let error = #expect(throws: ChimeError.self) { try schedule.validated() }
            #expect(error?.code == .usage)
            #expect(error?.message == message)
        }
        // Times are sorted and duplicates dropped.
        let checked = try ScheduleDraft(times: [try LocalTime.parse("20:00"), eight, eight]).validated()
        #expect(checked.times == [eight, try LocalTime.parse("20:00")])
    }

    @Test func aRefusedMedicationStoresNothing() throws {
        let h = try DoseHarness(now: Self.now)
        defer { h.cleanUp() }
        let eight = try LocalTime.parse("08:00")
        for (rule, draft, message) in Self.medicationCases {
            let error = #expect(throws: ChimeError.self, "\(rule)") {
                try h.book.addMedication(draft, schedule: ScheduleDraft(times: [eight]))
            }
            #expect(error?.code == .usage, "\(rule)")
            #expect(error?.message == message, "\(rule)")
        }
        let badSchedule = #expect(throws: ChimeError.self) {
            try h.book.addMedication(Self.draft { _ in }, schedule: ScheduleDraft(times: [eight], days: []))
        }
        #expect(badSchedule?.code == .usage)
        #expect(try h.book.medications(includeInactive: true).isEmpty)
        #expect(try h.storedDoses().isEmpty)
        #expect(try h.store.pendingCount() == 0)
    }

    @Test func aSecondMedicationWithTheSameNameInAnyCaseIsAConflict() throws {
        let h = try DoseHarness(now: Self.now)
        defer { h.cleanUp() }
        let first = try h.add("Aspirin", at: "08:00")
        let dosesBefore = try h.storedDoses()
        let error = #expect(throws: ChimeError.self) { try h.add(" aspirin ", at: "09:00") }
        #expect(error?.code == .conflict)
        #expect(error?.message.contains("a medication named 'Aspirin' exists already (number \(first.medication.id))") == true)
        #expect(try h.book.medications(includeInactive: true).map(\.medication.name) == ["Aspirin"])
        #expect(try h.storedDoses() == dosesBefore)
        #expect(try h.pendingAlerts().map(\.id) == ["med-1-20260105-0800"])
    }
}

/// Amounts are plain decimals that read back as they were typed: `1e-320` showed as
/// "0 mg" and `0x10` was taken as 16.
struct DoseAmountTests {
    @Test(
        "Amounts that are not plain decimals, or would not show as typed, are refused naming them",
        arguments: [
            "1e-320", "1e3", "0x10", "0X1p4", "nan", "+5", "-5", ".5", "5.", "1,5", "0.0000001", "2.1234567", "1000001", "0.000000",
        ]
    )
    func refused(_ amount: String) {
        let draft = MedicationDraft(name: "Aspirin", amount: amount, unit: "mg", startDay: 0)
        let error = #expect(throws: ChimeError.self, "\(amount)") { try draft.validated() }
        #expect(error?.code == .usage)
        #expect(error?.message.hasPrefix("invalid amount '\(amount)': expected ") == true, "\(error?.message ?? "")")
    }

    @Test(
        "Plain decimals from 0.000001 to 1,000,000 read back as typed",
        arguments: [
            ("100", "100"), ("2.5", "2.5"), ("0.125", "0.125"), ("0.000001", "0.000001"), ("1000000", "1000000"), ("007.50", "7.5"),
        ]
    )
    func accepted(_ amount: String, _ shown: String) throws {
        let (_, value) = try MedicationDraft(name: "Aspirin", amount: amount, unit: "mg", startDay: 0).validated()
        #expect(Medication.format(amount: value) == shown)
    }
}
