// Issue 31, item 8: `chime import` bounded. 200,000 reminders as a bare array and as the object
// that `chime list --json` prints (peak RSS of each, the object form against the array form
// measured in the same run), and 16 MB of white space before the array (wall time, against an
// import of the same one reminder without it).
import ArgumentParser
import ChimeCore
import Foundation

struct ImportBounds: Workload {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "chime import bounded: 200,000 reminders in both forms (peak RSS), 16 MB of leading white space (time)."
    )

    @OptionGroup var options: BenchOptions

    static func measure(_ options: BenchOptions) async throws {
        try benchImportBounds(runs: options.quick ? 1 : 3, count: options.quick ? 50_000 : 200_000)
    }
}

/// Issue 31's targets: peak RSS of either form under this many kB; the white space under this many seconds.
private let importFormsRSSTargetkB = 40 * 1024
private let leadingSpaceTargetSeconds = 0.5

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
}
