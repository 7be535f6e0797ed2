import ArgumentParser
import ChimeCore
import ChimeStore
import Foundation

struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Schedule reminders from a JSON file (all or none).",
        discussion: """
            A JSON array of reminders, each with a "title", optionally "id", "body",
            "zone", and one of "at", "in" or "every" (as the commands read them);
            'chime list --json' output imports as it is (an app's reminder with its
            "app_id" and "actions"). All of them or none (exit 64).
            Example file:
              [{"id": "tea", "title": "Tea", "in": "25m"}]
            More: man chime (chime import)
            """
    )

    @Argument(help: ArgumentHelp("The JSON file, or - for standard input.", valueName: "file"), completion: .file())
    var file: String = "-"
    @Flag(name: .customLong("no-replace"), help: "Fail (exit 4) if a reminder with one of the ids is pending.")
    var noReplace = false
    @Option(
        name: .customLong("past"),
        help: ArgumentHelp(
            "What becomes of a one-shot whose time has passed: skip (leave it out) or fire (show it at once, late). Without --past it is left out, and the output says how to have it fire.",
            valueName: "skip|fire"
        )
    )
    var past: ReminderImport.PastOneShots?
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let source = file == "-" ? "standard input" : file
        if let url = try global.postgresURL() { return try await runPostgres(url, source: source) }
        let now = Date()
        // Read as a stream, a chunk at a time, all in one transaction: a bad reminder anywhere
        // rolls back what the chunks before it wrote. The first chunk is read before the store
        // is opened, so a file that is bad from the start never creates one.
        let reader = ReminderImport.Reader(try open(), source: source, now: now, past: past)
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
                pastOneShots: past == .fire,
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
        let report = Imported(
            imported: scheduled.count,
            replaced: scheduled.replaced,
            ids: scheduled.ids,
            runner: running,
            passed: reader.adjustments.map { Passed($0, now: now) }
        )
        emit(report, json: global.json)
    }

    /// How many reminders were imported, and which; and those whose time had passed.
    struct Imported: Report {
        var imported: Int
        var replaced: Int
        var ids: [String]
        var runner: Bool
        var passed: [Passed]

        var lines: [String] {
            let replacedText = replaced > 0 ? " (\(replaced) replaced pending reminders with the same id)" : ""
            return passed.map(\.line) + ["Imported \(imported) reminder\(imported == 1 ? "" : "s")\(replacedText)."]
        }

        var notes: [String] {
            let unchosen = passed.filter { $0.what == .skipped && !$0.chosen }.count
            guard unchosen > 0 else { return [] }
            return [
                "\(unchosen == 1 ? "A one-shot reminder" : "\(unchosen) one-shot reminders") whose time had passed \(unchosen == 1 ? "was" : "were") left out: "
                    + "to have \(unchosen == 1 ? "it" : "them") fire now, import the file again with --past fire (the others are replaced, not doubled); --past skip leaves them out without this note"
            ]
        }
    }

    /// A reminder of the file whose time had passed, and what became of it.
    struct Passed: Encodable {
        /// Its 1-based position in the file.
        var reminder: Int
        var id: String?
        var title: String
        var what: ReminderImport.Adjustment.Kind
        /// When it was due, as the file said.
        var due: String
        /// Its next time, when it was moved there.
        var nextDue: String?
        /// Whether --past was given.
        var chosen: Bool
        let line: String

        enum CodingKeys: String, CodingKey {
            case reminder, id, title, what, due, chosen
            case nextDue = "next_due"
        }

        init(_ adjustment: ReminderImport.Adjustment, now: Date) {
            reminder = adjustment.index + 1
            id = adjustment.id
            title = adjustment.title
            what = adjustment.kind
            due = TimeText.iso(adjustment.due)
            nextDue = adjustment.next.map(TimeText.iso)
            chosen = adjustment.chosen
            let name = "Reminder \(reminder) (\(id.map { "'\($0)', " } ?? "")\"\(title)\")"
            let was = "was due \(TimeText.local(adjustment.due, in: .current)), \(TimeText.relative(adjustment.due, from: now))"
            switch adjustment.kind {
            case .moved:
                line = "\(name) \(was): moved to its next time, \(TimeText.local(adjustment.next ?? now, in: .current))."
            case .fires:
                line = "\(name) \(was): fires now, late (--past fire)."
            case .skipped:
                line = "\(name) \(was): left out\(adjustment.chosen ? " (--past skip)" : "")."
            case .ended:
                line = "\(name) \(was): its rule has ended since, so it is left out."
            }
        }
    }

    /// The file named, when it is a regular file (a device such as /dev/zero never ends, and
    /// opening a FIFO would wait for a writer), or standard input.
    func open() throws(ChimeError) -> FileHandle {
        if file == "-" { return FileHandle.standardInput }
        var info = stat()
        guard stat(file, &info) == 0 else {
            let reason = errno == ENOENT ? "does not exist" : "cannot be read (\(String(cString: strerror(errno))))"
            throw ChimeError(.usage, "import file '\(file)' \(reason): name a JSON file, or - for standard input")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw ChimeError(
                .usage,
                "import file '\(file)' is \(FileKind.describe(info.st_mode)), not a regular file: name a JSON file, or - for standard input (chime import - < \(file))"
            )
        }
        guard let handle = FileHandle(forReadingAtPath: file) else {
            throw ChimeError(.usage, "import file '\(file)' cannot be read: name a JSON file, or - for standard input")
        }
        return handle
    }
}

extension ReminderImport.PastOneShots: ExpressibleByArgument {}
extension ReminderImport.Adjustment.Kind: Encodable {}
