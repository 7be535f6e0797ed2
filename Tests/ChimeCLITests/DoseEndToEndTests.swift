import ChimeCore
import ChimeStore
import Foundation
import GRDB
import Testing

/// Dose reminders through the real `chime` executable on a real SQLite file: medications,
/// answering doses, the history, adherence and the CSV export.
@Suite("End to end: dose reminders", .serialized)
struct DoseEndToEndTests {
    @Test("Bad medication input is refused (exit 64, one line naming the value) and nothing is stored")
    func validationRefusals() throws {
        let sandbox = try Sandbox()
        let base = ["--amount", "100", "--unit", "mg", "--at", "08:00"]
        let longName = String(repeating: "n", count: 101)
        let longUnit = String(repeating: "u", count: 21)
        let cases: [(arguments: [String], names: String)] = [
            (["med", "add", ""] + base, "invalid name ''"),
            (["med", "add", "   "] + base, "name"),
            (["med", "add", longName] + base, "at most 100 characters"),
            (["med", "add", "Aspirin", "--amount", "0", "--unit", "mg", "--at", "08:00"], "'0'"),
            (["med", "add", "Aspirin", "--amount", "abc", "--unit", "mg", "--at", "08:00"], "'abc'"),
            (["med", "add", "Aspirin", "--unit", "mg", "--at", "08:00"], "--amount"),
            (["med", "add", "Aspirin", "--amount", "100", "--at", "08:00"], "unit"),
            (["med", "add", "Aspirin", "--amount", "100", "--unit", longUnit, "--at", "08:00"], longUnit),
            (["med", "add", "Aspirin"] + base + ["--start", "2026-03-10", "--end", "2026-03-01"], "'2026-03-01'"),
            (["med", "add", "Aspirin"] + base + ["--end", "2026-02-30"], "'2026-02-30'"),
            (["med", "add", "Aspirin", "--amount", "100", "--unit", "mg"], "--at"),
            (["med", "add", "Aspirin"] + base + ["--days", "funday"], "'funday'"),
            (["med", "add", "Aspirin"] + base + ["--zone", "Mars/Olympus"], "'Mars/Olympus'"),
            (["med", "add", "Aspirin"] + base + ["--at", "25:00"], "'25:00'"),
            (["med", "add", "Aspirin"] + base + ["--grace", "soon"], "'soon'"),
            (["med", "add", "Aspirin"] + base + ["--as-needed"], "as-needed"),
        ]
        for (arguments, names) in cases {
            let result = try sandbox.chime(arguments)
            #expect(result.status == 64, "\(arguments): \(result.status) \(result.stderr)")
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1, "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasPrefix("chime: ") && result.stderr.contains(names), "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
        // With --json: the error document too
        let json = try sandbox.chime(["med", "add", "Aspirin", "--amount", "abc", "--unit", "mg", "--at", "08:00", "--json"])
        #expect(json.status == 64)
        let error = try #require(try jsonObject(json.stdout)["error"] as? [String: Any])
        #expect(error["code"] as? String == "usage")
        #expect((error["message"] as? String)?.contains("'abc'") == true)

        let list = try sandbox.chime("med", "list", "--all", "--json")
        #expect(list.status == 0, "\(list.stderr)")
        #expect(try jsonObject(list.stdout)["count"] as? Int == 0)
    }

    @Test("add, list, show, edit, deactivate, reactivate, delete")
    func medicationLifecycle() throws {
        let sandbox = try Sandbox()
        let added = try sandbox.chime(
            "med",
            "add",
            "Aspirin",
            "--amount",
            "100",
            "--unit",
            "mg",
            "--at",
            "20:00,08:00",
            "--days",
            "mon-fri",
            "--zone",
            "Europe/Berlin",
            "--instructions",
            "with water",
            "--stock",
            "30",
            "--json"
        )
        #expect(added.status == 0, "\(added.stderr)")
        let medication = try #require(try jsonObject(added.stdout)["medication"] as? [String: Any])
        let id = try #require(medication["id"] as? Int)
        #expect(medication["label"] as? String == "Aspirin (100 mg)")
        #expect(medication["stock"] as? Int == 30)
        #expect(medication["instructions"] as? String == "with water")
        #expect(medication["active"] as? Bool == true)
        #expect(medication["next_dose"] as? String != nil)
        let schedules = try #require(medication["schedules"] as? [[String: Any]])
        #expect(schedules.count == 1)
        #expect(schedules.first?["times"] as? [String] == ["08:00", "20:00"])
        #expect(schedules.first?["days"] as? String == "weekday")
        #expect(schedules.first?["zone"] as? String == "Europe/Berlin")

        // The same name again: a conflict
        let again = try sandbox.chime("med", "add", "aspirin", "--amount", "1", "--unit", "mg", "--at", "09:00")
        #expect(again.status == 4, "\(again.stderr)")

        #expect(
            try sandbox.chime("med", "add", "Ibuprofen", "--amount", "400", "--unit", "mg", "--as-needed", "--min-interval", "6h").status
                == 0
        )
        let list = try jsonObject(try sandbox.chime("med", "list", "--json").stdout)
        let names = (list["medications"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        #expect(names == ["Aspirin", "Ibuprofen"])
        let searched = try jsonObject(try sandbox.chime("med", "list", "--search", "ibu", "--json").stdout)
        #expect(searched["count"] as? Int == 1)

        let show = try sandbox.chime("med", "show", "aspirin", "--json")
        #expect(show.status == 0, "\(show.stderr)")
        let shown = try jsonObject(show.stdout)
        #expect((shown["medication"] as? [String: Any])?["id"] as? Int == id)
        let shownSchedule = try #require(((shown["medication"] as? [String: Any])?["schedules"] as? [[String: Any]])?.first)
        #expect(shownSchedule["next"] as? String != nil)
        let adherence = try #require(shown["adherence_30d"] as? [String: Any])
        #expect(adherence["rate"] is NSNull)
        let human = try sandbox.chime("med", "show", String(id))
        #expect(human.stdout.contains("Aspirin (100 mg)") && human.stdout.contains("Stock: 30 doses"), "\(human.stdout)")

        // Edit: a new time keeps the days and the zone; --no-stock stops counting
        let edited = try sandbox.chime("med", "edit", "Aspirin", "--at", "09:00", "--amount", "75", "--no-stock", "--json")
        #expect(edited.status == 0, "\(edited.stderr)")
        let changed = try #require(try jsonObject(edited.stdout)["medication"] as? [String: Any])
        #expect(changed["label"] as? String == "Aspirin (75 mg)")
        #expect(changed["stock"] is NSNull)
        let enabled = (changed["schedules"] as? [[String: Any]])?.filter { $0["enabled"] as? Bool == true }
        #expect(enabled?.count == 1)
        #expect(enabled?.first?["times"] as? [String] == ["09:00"])
        #expect(enabled?.first?["days"] as? String == "weekday")
        #expect(enabled?.first?["zone"] as? String == "Europe/Berlin")
        let nothing = try sandbox.chime("med", "edit", "Aspirin")
        #expect(nothing.status == 64, "\(nothing.stderr)")
        let badEdit = try sandbox.chime("med", "edit", "Aspirin", "--amount", "0")
        #expect(badEdit.status == 64 && badEdit.stderr.contains("'0'"), "\(badEdit.stderr)")
        #expect(try sandbox.chime("med", "edit", "Nope", "--amount", "3").status == 3)

        // Deactivate: gone from the default list, no next dose; reactivate brings it back
        let off = try sandbox.chime("med", "deactivate", "Aspirin", "--json")
        #expect(off.status == 0, "\(off.stderr)")
        let inactive = try #require(try jsonObject(off.stdout)["medication"] as? [String: Any])
        #expect(inactive["active"] as? Bool == false)
        #expect(inactive["next_dose"] is NSNull)
        #expect(try sandbox.chime("med", "deactivate", "Aspirin").status == 4)
        #expect(try jsonObject(try sandbox.chime("med", "list", "--json").stdout)["count"] as? Int == 1)
        #expect(try jsonObject(try sandbox.chime("med", "list", "--all", "--json").stdout)["count"] as? Int == 2)
        let on = try sandbox.chime("med", "reactivate", String(id), "--json")
        #expect(on.status == 0, "\(on.stderr)")
        #expect((try jsonObject(on.stdout)["medication"] as? [String: Any])?["active"] as? Bool == true)

        // next: the preview, with alert ids
        let next = try sandbox.chime("med", "next", "Aspirin", "--count", "3", "--json")
        #expect(next.status == 0, "\(next.stderr)")
        let planned = try #require(try jsonObject(next.stdout)["doses"] as? [[String: Any]])
        #expect(planned.count == 3)
        #expect(planned.allSatisfy { ($0["alert"] as? String)?.hasPrefix("med-") == true && $0["zone"] as? String == "Europe/Berlin" })

        // Delete: without a terminal and without --yes, refused and nothing deleted
        let refused = try sandbox.chime("med", "delete", "Aspirin")
        #expect(refused.status == 64, "\(refused.stderr)")
        #expect(refused.stderr.contains("--yes"))
        #expect(try sandbox.chime("med", "show", "Aspirin").status == 0)
        let deleted = try sandbox.chime("med", "delete", "Aspirin", "--yes", "--json")
        #expect(deleted.status == 0, "\(deleted.stderr)")
        let gone = try jsonObject(deleted.stdout)
        #expect(gone["name"] as? String == "Aspirin")
        #expect(gone["schedules"] as? Int == 2)
        #expect(try sandbox.chime("med", "show", "Aspirin").status == 3)
        #expect(try jsonObject(try sandbox.chime("med", "list", "--all", "--json").stdout)["count"] as? Int == 1)
        // Its alerts went with it
        let pending = try ReminderStore(path: sandbox.store, schemas: chimeSchemas).pending().filter { $0.kind == "dose" }
        #expect(pending.isEmpty, "\(pending)")
    }

    @Test("Answering doses by number and by alert id; conflicts, unknown doses, as needed")
    func answeringDoses() throws {
        let sandbox = try Sandbox()
        let first = try addScheduled(in: sandbox, name: "Aspirin", at: "08:00")
        try moveDose(first, to: Date().addingTimeInterval(-60), store: sandbox.store)

        // No DOSE: the one due
        let taken = try sandbox.chime("dose", "take", "--json", "--notes", "with breakfast")
        #expect(taken.status == 0, "\(taken.stderr)")
        let answer = try jsonObject(taken.stdout)
        let dose = try #require(answer["dose"] as? [String: Any])
        #expect(dose["status"] as? String == "taken")
        #expect(dose["occurrence"] as? String == first)
        #expect(dose["notes"] as? String == "with breakfast")
        #expect(dose["taken"] as? String != nil)
        #expect(answer["warning"] is NSNull && answer["refill"] is NSNull)
        #expect(answer["previous"] as? String == "pending")
        let number = try #require(dose["id"] as? Int)

        // Again: a conflict (exit 4) naming it; reset, then skip by alert id
        let twice = try sandbox.chime("dose", "take", String(number))
        #expect(twice.status == 4, "\(twice.stderr)")
        #expect(twice.stderr.contains("already taken"))
        #expect(try sandbox.chime("dose", "reset", first).status == 0)
        let skipped = try sandbox.chime("dose", "skip", first, "--json")
        #expect(skipped.status == 0, "\(skipped.stderr)")
        #expect((try jsonObject(skipped.stdout)["dose"] as? [String: Any])?["status"] as? String == "skipped")
        #expect((try jsonObject(skipped.stdout)["dose"] as? [String: Any])?["taken"] is NSNull)
        let byNumber = try sandbox.chime("dose", "take", String(number))
        #expect(byNumber.status == 0, "\(byNumber.stderr)")
        #expect(byNumber.stdout.contains("Dose \(number) taken: Aspirin (100 mg)"), "\(byNumber.stdout)")

        // Unknown doses: exit 3
        let unknown = try sandbox.chime("dose", "take", "9999")
        #expect(unknown.status == 3 && unknown.stderr.contains("9999"), "\(unknown.stderr)")
        #expect(try sandbox.chime("dose", "take", "med-77-20260101-0800").status == 3)
        #expect(try sandbox.chime("dose", "take", "Nothing").status == 3)
        // Nothing due: exit 3
        let none = try sandbox.chime("dose", "take")
        #expect(none.status == 3, "\(none.stderr)")

        // Two due and no terminal: the conflict (exit 4), nothing changed
        let second = try addScheduled(in: sandbox, name: "Metformin", at: "09:00")
        let third = try addScheduled(in: sandbox, name: "Zinc", at: "10:00")
        try moveDose(second, to: Date().addingTimeInterval(-120), store: sandbox.store)
        try moveDose(third, to: Date().addingTimeInterval(-30), store: sandbox.store)
        let ambiguous = try sandbox.chime("dose", "take")
        #expect(ambiguous.status == 4, "\(ambiguous.stderr)")
        #expect(ambiguous.stderr.contains("2 doses are due"), "\(ambiguous.stderr)")
        let byName = try sandbox.chime("dose", "snooze", "Metformin", "--json")
        #expect(byName.status == 0, "\(byName.stderr)")
        #expect((try jsonObject(byName.stdout)["dose"] as? [String: Any])?["snoozed_until"] as? String != nil)

        // As needed: twice within the minimum interval warns, and both are recorded
        let added = try sandbox.chime(
            "med",
            "add",
            "Ibuprofen",
            "--amount",
            "400",
            "--unit",
            "mg",
            "--as-needed",
            "--min-interval",
            "6h",
            "--stock",
            "3",
            "--refill-days",
            "0"
        )
        #expect(added.status == 0, "\(added.stderr)")
        let once = try sandbox.chime("dose", "take", "Ibuprofen")
        #expect(once.status == 0, "\(once.stderr)")
        #expect(!once.stderr.contains("Warning"))
        let sooner = try sandbox.chime("dose", "take", "ibuprofen")
        #expect(sooner.status == 0, "\(sooner.stderr)")
        #expect(sooner.stderr.contains("Warning: Ibuprofen was last taken"), "\(sooner.stderr)")
        #expect(sooner.stderr.contains("minimum interval of 6h"))
        let json = try sandbox.chime("dose", "take", "Ibuprofen", "--json")
        let thirdTake = try jsonObject(json.stdout)
        #expect((thirdTake["warning"] as? String)?.contains("6h") == true)
        #expect((thirdTake["refill"] as? String)?.contains("run out") == true, "\(thirdTake)")
        let history = try jsonObject(try sandbox.chime("doses", "--med", "Ibuprofen", "--json").stdout)
        let logged = try #require(history["doses"] as? [[String: Any]])
        #expect(logged.count == 3)
        #expect(logged.allSatisfy { $0["status"] as? String == "taken" && $0["occurrence"] is NSNull })
        #expect(
            (try jsonObject(try sandbox.chime("med", "show", "Ibuprofen", "--json").stdout)["medication"] as? [String: Any])?["stock"]
                as? Int == 0
        )
    }

    @Test("doses --json filters, adherence, and the CSV export reads back as the same doses")
    func historyAndExport() throws {
        let sandbox = try Sandbox()
        let aspirin = try addScheduled(in: sandbox, name: "Aspirin", at: "08:00")
        let metformin = try addScheduled(in: sandbox, name: "Metformin, retard", at: "09:00")
        let earliest = Date().addingTimeInterval(-600)
        try moveDose(aspirin, to: earliest, store: sandbox.store)
        try moveDose(metformin, to: earliest.addingTimeInterval(300), store: sandbox.store)
        let note = "after food, said \"half\"\nthen slept"
        #expect(try sandbox.chime("dose", "take", aspirin, "--notes", note).status == 0)
        #expect(try sandbox.chime("dose", "skip", metformin, "--notes", "nausea").status == 0)

        let all = try jsonObject(try sandbox.chime("doses", "--json").stdout)
        let doses = try #require(all["doses"] as? [[String: Any]])
        // The two answered ones (each schedule makes its next dose once the moved one's time has passed)
        #expect(doses.count == 2, "\(doses)")
        let counts = try #require(all["counts"] as? [String: Any])
        #expect(counts["taken"] as? Int == 1 && counts["skipped"] as? Int == 1 && counts["pending"] as? Int == 0)
        let taken = try jsonObject(try sandbox.chime("doses", "--status", "taken", "--json").stdout)["doses"] as? [[String: Any]]
        #expect(taken?.map { $0["notes"] as? String } == [note])
        let ofOne = try jsonObject(try sandbox.chime("doses", "--med", "Metformin, retard", "--json").stdout)["doses"] as? [[String: Any]]
        #expect(ofOne?.count == 1)
        #expect(ofOne?.allSatisfy { $0["label"] as? String == "Metformin, retard (100 mg)" } == true)
        let limited = try jsonObject(try sandbox.chime("doses", "--limit", "1", "--json").stdout)["doses"] as? [[String: Any]]
        #expect(limited?.count == 1)
        let overdue = try jsonObject(try sandbox.chime("doses", "--overdue", "--json").stdout)["doses"] as? [[String: Any]]
        #expect(overdue?.isEmpty == true)
        #expect(try sandbox.chime("doses", "--status", "eaten").status == 64)
        #expect(try sandbox.chime("doses", "--last", "7d", "--month").status == 64)
        #expect(try sandbox.chime("doses", "--med", "Nope").status == 3)
        let human = try sandbox.chime("doses")
        #expect(human.status == 0)
        #expect(human.stdout.contains("taken at") && human.stdout.contains("skipped"), "\(human.stdout)")
        #expect(!human.stdout.contains("\nthen slept"), "notes stay on one line")

        // Adherence: 1 taken of 2 counted; pending (future) doses do not count
        let adherence = try jsonObject(try sandbox.chime("adherence", "--json").stdout)
        let overall = try #require(adherence["overall"] as? [String: Any])
        #expect(overall["taken"] as? Int == 1 && overall["skipped"] as? Int == 1 && overall["counted"] as? Int == 2)
        #expect(overall["rate"] as? Double == 0.5)
        // From the first dose's day on, not 30 days of nothing before it: today, and yesterday too
        // when the test runs within ten minutes after midnight (the doses were moved ten minutes back).
        let calendar = Calendar.current
        let span = calendar.dateComponents([.day], from: calendar.startOfDay(for: earliest), to: calendar.startOfDay(for: Date())).day ?? 0
        #expect((adherence["days"] as? [[String: Any]])?.count == span + 1)
        let chart = try sandbox.chime("adherence")
        #expect(chart.stdout.contains("50%") && chart.stdout.contains("Per day"), "\(chart.stdout)")
        let empty = try Sandbox()
        let nothing = try empty.chime("adherence")
        #expect(nothing.stdout.contains("No doses due yet in this range"), "\(nothing.stdout)")
        #expect(
            try jsonObject(try empty.chime("adherence", "--json").stdout)["overall"].flatMap { ($0 as? [String: Any])?["rate"] } is NSNull
        )

        // The export: RFC 4180, read back field by field
        let export = try sandbox.chime("export", "doses", "--csv")
        #expect(export.status == 0, "\(export.stderr)")
        let records = try CSVReader.parse(export.stdout)
        #expect(
            records.first == ["date", "time", "zone", "medication", "amount", "unit", "status", "taken_at", "notes", "dose_id"]
        )
        let rows = records.dropFirst()
        #expect(rows.count == doses.count)
        for (row, dose) in zip(rows, doses) {
            #expect(row.count == 10)
            #expect(row[9] == String(dose["id"] as? Int ?? -1))
            #expect(row[3] == dose["medication"] as? String)
            #expect(row[4] == "100" && row[5] == "mg")
            #expect(row[6] == dose["status"] as? String)
            #expect(row[8] == dose["notes"] as? String)
            #expect(row[7] == (dose["taken"] as? String ?? ""))
            #expect(row[2] == dose["zone"] as? String)
            let local = try #require(dose["scheduled_local"] as? String)  // "Sun 2026-11-22 08:00 +00:00"
            #expect(local.contains("\(row[0]) \(row[1])"), "\(local) vs \(row)")
        }
        #expect(rows.contains { $0[8] == note })
        #expect(rows.contains { $0[3] == "Metformin, retard" })
        // CSV is the only format: the default, --csv still accepted.
        let noFormat = try sandbox.chime("export", "doses")
        #expect(noFormat.status == 0 && noFormat.stdout == export.stdout, "\(noFormat.stderr)")
        #expect(try sandbox.chime("export").stdout == export.stdout)
        #expect(try sandbox.chime("export", "medications").status == 64)
    }
}

/// Adds a medication of 100 mg taken daily at `at`; returns its first dose's alert id.
func addScheduled(in sandbox: borrowing Sandbox, name: String, at time: String) throws -> String {
    let added = try sandbox.chime("med", "add", name, "--amount", "100", "--unit", "mg", "--at", time)
    #expect(added.status == 0, "\(added.stderr)")
    return try nextAlert(of: name, in: sandbox)
}

/// The alert id of a medication's next dose (`chime med next`).
func nextAlert(of name: String, in sandbox: borrowing Sandbox) throws -> String {
    let next = try sandbox.chime("med", "next", name, "--count", "1", "--json")
    let doses = try #require(try jsonObject(next.stdout)["doses"] as? [[String: Any]], "\(next.stderr)")
    return try #require(doses.first?["alert"] as? String)
}

/// Moves the dose `occurrence` (already made: the next one of its schedule) to `due`, with its
/// grace and missed windows (30 minutes, 4 hours), and its alert with it: a dose that falls due
/// in seconds, or fell due a moment ago, without waiting for the clock.
func moveDose(_ occurrence: String, to due: Date, store path: String) throws {
    let store = try ReminderStore(path: path, schemas: chimeSchemas)
    try store.write { db in
        try db.execute(
            sql: "UPDATE dose SET scheduled_us = ?, overdue_us = ?, missed_us = ? WHERE occurrence = ?",
            arguments: [due.micros, due.addingTimeInterval(1_800).micros, due.addingTimeInterval(14_400).micros, occurrence]
        )
        #expect(db.changesCount == 1, "no dose \(occurrence)")
        #expect(try ReminderStore.moveOnce(id: occurrence, to: due, in: db), "no pending alert \(occurrence)")
    }
}

/// A small RFC 4180 reader: quoted fields may hold commas, doubled quotes and line breaks;
/// records end with CRLF (a lone LF is accepted too).
enum CSVReader {
    struct Malformed: Error { var at: Int }

    static func parse(_ text: String) throws -> [[String]] {
        var records: [[String]] = []
        var record: [String] = []
        var field = ""
        var quoted = false
        var characters = Array(text.unicodeScalars)[...]
        var position = 0
        while let scalar = characters.popFirst() {
            position += 1
            if quoted {
                if scalar == "\"" {
                    if characters.first == "\"" {
                        field.unicodeScalars.append("\"")
                        characters.removeFirst()
                    } else {
                        quoted = false
                        guard characters.first.map({ $0 == "," || $0 == "\r" || $0 == "\n" }) ?? true else {
                            throw Malformed(at: position)
                        }
                    }
                } else {
                    field.unicodeScalars.append(scalar)
                }
                continue
            }
            switch scalar {
            case "\"":
                guard field.isEmpty else { throw Malformed(at: position) }
                quoted = true
            case ",":
                record.append(field)
                field = ""
            case "\r":
                guard characters.first == "\n" else { throw Malformed(at: position) }
            case "\n":
                record.append(field)
                records.append(record)
                record = []
                field = ""
            default:
                field.unicodeScalars.append(scalar)
            }
        }
        guard !quoted else { throw Malformed(at: position) }
        if !field.isEmpty || !record.isEmpty {
            record.append(field)
            records.append(record)
        }
        return records
    }
}
