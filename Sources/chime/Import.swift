import ArgumentParser
import ChimeCore
import ChimeStore
import Foundation

struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Schedule many reminders from a JSON file, all of them or none.",
        discussion: """
            The file holds an array of reminders, or an object whose "reminders" is one (so the \
            output of 'chime list --json' imports as it is). Each reminder has a "title", optionally \
            an "id" and a "body", and one of:
              "at":    "14:30", "2026-12-24 18:00" or ISO 8601 ("2026-12-24T17:00:00Z")
              "in":    a duration such as "25m"
              "every": a rule such as "weekday 08:00" or "2h"
            and optionally "zone" (an IANA zone for "at" and "every" times of day). A reminder from \
            'chime list --json' ("trigger" and "next_due") keeps its rule and its next due time. \
            Other keys are refused (a misspelled "zon" is not ignored). A title has at most 500 \
            characters, a body at most 4,000.
            Nothing is scheduled when one reminder is bad: the error names it and its position, \
            or the line and column where the JSON goes wrong (exit 64).
            Example:
              [{"id": "tea", "title": "Tea", "in": "25m"},
               {"title": "Stand-up", "every": "weekday 09:30", "zone": "Europe/Berlin"}]
            """
    )

    @Argument(help: ArgumentHelp("The JSON file, or - for standard input.", valueName: "file"), completion: .file())
    var file: String = "-"
    @Flag(name: .customLong("no-replace"), help: "Fail (exit 4) instead of replacing pending reminders with the same ids.")
    var noReplace = false
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let source = file == "-" ? "standard input" : file
        let now = Date()
        // Read as a stream, a chunk at a time, all in one transaction: a bad reminder anywhere
        // rolls back what the chunks before it wrote. The first chunk is read before the store
        // is opened, so a file that is bad from the start never creates one.
        let reader = ReminderImport.Reader(try open(), source: source, now: now)
        let first = try reader.next()
        let store = try global.openStore(.create)
        let scheduled: ScheduledIds
        do {
            scheduled = try store.scheduleStream(
                replace: !noReplace,
                now: now,
                systemZone: .current,
                // The ids are printed only with --json.
                keepIds: global.json,
                // The reader hands over reminders that it checked (`validated()`).
                prevalidated: true,
                name: { "\(source): reminder \($0 + 1)" },
                produce: { deliver in
                    guard let first else { return }
                    try deliver(first)
                    while let chunk = try reader.next() { try deliver(chunk) }
                }
            )
        } catch {
            // Rolled back; a store this command made for it goes too: no trace of a bad file.
            store.discardIfUnused()
            throw error
        }
        let running = pokeRunner(store, json: global.json)
        let report = Imported(imported: scheduled.count, replaced: scheduled.replaced, ids: scheduled.ids, runner: running)
        emit(report, json: global.json)
    }

    /// How many reminders were imported, and which.
    struct Imported: Report {
        var imported: Int
        var replaced: Int
        var ids: [String]
        var runner: Bool

        var lines: [String] {
            let replacedText = replaced > 0 ? " (\(replaced) replaced pending reminders with the same id)" : ""
            return ["Imported \(imported) reminder\(imported == 1 ? "" : "s")\(replacedText)."]
        }
    }

    private func open() throws(ChimeError) -> FileHandle {
        if file == "-" { return FileHandle.standardInput }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory), !isDirectory.boolValue,
            let handle = FileHandle(forReadingAtPath: file)
        else {
            let reason = FileManager.default.fileExists(atPath: file) ? "cannot be read" : "does not exist"
            throw ChimeError(.usage, "import file '\(file)' \(reason): name a JSON file, or - for standard input")
        }
        return handle
    }
}
