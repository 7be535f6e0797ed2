// `chime import` bounded. 200,000 reminders as a bare array and as
// the object that `chime list --json` prints (peak RSS of each, the object form against the
// array form measured in the same run), and 16 MB of white space before the array (wall time,
// against an import of the same one reminder without it). Then `chime list` (table, --json,
// one page) and `chime history --json` on those 200,000 reminders with an alert each, written
// as they are read (peak RSS of each, against `chime list --limit 1` on the same store).
import ArgumentParser
import ChimeCore
import ChimeStore
import Foundation
import GRDB

struct ImportBounds: Workload {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract:
            "chime import bounded (200,000 reminders in both forms, 16 MB of leading white space); list and history --json of 200,000."
    )

    @OptionGroup var options: BenchOptions

    static func measure(_ options: BenchOptions) async throws {
        try benchImportBounds(runs: options.quick ? 1 : 3, count: options.quick ? 50_000 : 200_000)
    }
}

/// The targets: peak RSS of either form under this many kB; the white space under this many seconds.
private let importFormsRSSTargetkB = 40 * 1024
private let leadingSpaceTargetSeconds = 0.5
private let listingRSSTargetkB = 60 * 1024

func benchImportBounds(runs: Int, count: Int) throws {
    let directory = temporaryDirectory("import-bounds")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    // The reminders as `chime list --json` prints them (one a line), due over the next month.
    let now = Date()
    var lines: [String] = []
    lines.reserveCapacity(count)
    for index in 0..<count {
        let due = TimeText.iso(now.addingTimeInterval(3_600 + Double(index % 2_592_000)))
        lines.append(
            #"{"body":"","id":"r\#(index)","kind":"plain","next_due":"\#(due)","recurring":false,"sticky":false,"title":"Reminder \#(index)","trigger":"once","urgency":"normal"}"#
        )
    }
    let array = directory + "/array.json"
    let object = directory + "/object.json"
    try Data(("[" + lines.joined(separator: ",\n") + "]\n").utf8).write(to: URL(fileURLWithPath: array))
    try Data((#"{"reminders":["# + lines.joined(separator: ",\n") + #"],"runner":false}"# + "\n").utf8).write(
        to: URL(fileURLWithPath: object)
    )
    lines = []
    let one = #"[{"id":"one","title":"One","in":"1h"}]"#
    let spaced = directory + "/spaced.json"
    let bare = directory + "/bare.json"
    try Data((String(repeating: " ", count: 16_000_000) + one).utf8).write(to: URL(fileURLWithPath: spaced))
    try Data(one.utf8).write(to: URL(fileURLWithPath: bare))

    var arrayRSS: [Double] = []
    var objectRSS: [Double] = []
    var arrayTimes: [Double] = []
    var objectTimes: [Double] = []
    var spacedTimes: [Double] = []
    var bareTimes: [Double] = []
    var floors: [Double] = []
    func importInto(_ file: String) throws -> (seconds: Double, status: Int32, maxRSSkB: Int, floorkB: Int) {
        let store = temporaryDirectory("import-store")
        defer { try? FileManager.default.removeItem(atPath: store) }
        let run = try runMeasuredAlone(chimeExecutable, ["import", file, "--store", store + "/chime.sqlite"])
        guard run.status == 0 else { throw ChimeError(.failure, "chime import \(file) failed with status \(run.status)") }
        return run
    }
    // Alternating, so that a slow moment of the machine falls on each alike.
    for _ in 0..<runs {
        let arrayRun = try importInto(array)
        arrayRSS.append(Double(arrayRun.maxRSSkB))
        arrayTimes.append(arrayRun.seconds)
        floors.append(Double(arrayRun.floorkB))
        let objectRun = try importInto(object)
        objectRSS.append(Double(objectRun.maxRSSkB))
        objectTimes.append(objectRun.seconds)
        spacedTimes.append(try importInto(spaced).seconds)
        bareTimes.append(try importInto(bare).seconds)
    }
    print("\n## chime import bounded: \(count) reminders in both forms, 16 MB of leading white space (median of \(runs) alternating runs)")
    let widths = [52, 8, 12, 40]
    print(row(["what", "wall s", "peak RSS kB", "target"], widths: widths))
    func verdict(_ met: Bool, _ text: String) -> String { text + (met ? ": met" : ": OVER") }
    print(
        row(
            [
                "chime import: object form {\"reminders\": [...]}", fmt(median(objectTimes)), fmt(median(objectRSS), 0),
                verdict(median(objectRSS) < Double(importFormsRSSTargetkB), "peak RSS < \(importFormsRSSTargetkB / 1024) MB"),
            ],
            widths: widths
        )
    )
    print(
        row(
            [
                "baseline: the same reminders as a bare array", fmt(median(arrayTimes)), fmt(median(arrayRSS), 0),
                verdict(median(arrayRSS) < Double(importFormsRSSTargetkB), "peak RSS < \(importFormsRSSTargetkB / 1024) MB"),
            ],
            widths: widths
        )
    )
    print(
        row(
            [
                "chime import: 16 MB of white space, then 1 reminder", fmt(median(spacedTimes)), "-",
                verdict(median(spacedTimes) < leadingSpaceTargetSeconds, "< \(leadingSpaceTargetSeconds) s"),
            ],
            widths: widths
        )
    )
    print(row(["baseline: the same reminder alone", fmt(median(bareTimes)), "-", ""], widths: widths))
    print(
        "(peak RSS: the child's own, wait4's ru_maxrss taken by a small helper process that started it; "
            + "a figure below the helper's own \(fmt(median(floors), 0)) kB would read as that)"
    )
    try benchListing(runs: runs, file: array, count: count)
}

/// `chime list` and `chime history --json` on `count` reminders (imported from `file`), each
/// with one alert in the ledger, against `chime list --limit 1` on the same store.
func benchListing(runs: Int, file: String, count: Int) throws {
    let directory = temporaryDirectory("listing")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let store = directory + "/chime.sqlite"
    let imported = try runMeasuredAlone(chimeExecutable, ["import", file, "--store", store])
    guard imported.status == 0 else { throw ChimeError(.failure, "chime import failed with status \(imported.status)") }
    // One shown alert per reminder, as a runner records it (the ledger `history` reads).
    let raw = try rawConnection(store)
    try raw.write { db in
        try db.execute(
            sql: """
                INSERT INTO occurrence (reminder_key, due_us, state, recorded_us, posted_us, attempts, via)
                SELECT key, next_due_us - 86400000000, 'posted', next_due_us - 86400000000, next_due_us - 86399000000, 1, 'desktop'
                FROM reminder
                """
        )
    }
    try raw.close()
    let commands: [(String, [String])] = [
        ("chime list (a table)", ["list"]),
        ("chime list --json", ["list", "--json"]),
        ("chime list --limit 50 --json (one page)", ["list", "--limit", "50", "--json"]),
        ("chime history --json", ["history", "--json"]),
        ("baseline: chime list --limit 1", ["list", "--limit", "1"]),
    ]
    var times = Array(repeating: [Double](), count: commands.count)
    var peaks = Array(repeating: [Double](), count: commands.count)
    for _ in 0..<runs {
        for (index, command) in commands.enumerated() {
            let run = try runMeasuredAlone(chimeExecutable, command.1 + ["--store", store])
            guard run.status == 0 else {
                throw ChimeError(.failure, "chime \(command.1.joined(separator: " ")) failed with status \(run.status)")
            }
            times[index].append(run.seconds)
            peaks[index].append(Double(run.maxRSSkB))
        }
    }
    print("\n## chime list and history on \(count) reminders, one alert each, written as read (median of \(runs) runs)")
    let widths = [52, 8, 12, 40]
    print(row(["what", "wall s", "peak RSS kB", "target"], widths: widths))
    for (index, command) in commands.enumerated() {
        let peak = median(peaks[index])
        let target =
            index == commands.count - 1
            ? "" : "peak RSS < \(listingRSSTargetkB / 1024) MB" + (peak < Double(listingRSSTargetkB) ? ": met" : ": OVER")
        print(row([command.0, fmt(median(times[index])), fmt(peak, 0), target], widths: widths))
    }
}
