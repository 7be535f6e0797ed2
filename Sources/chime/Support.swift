import ArgumentParser
import ChimeApp
import ChimeConfig
import ChimeCore
import ChimeRunner
import ChimeStore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Options every command takes.
struct GlobalOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp("The store: a file or a postgresql:// URL (man chime).", valueName: "path|url"),
        completion: .file()
    )
    var store: String?

    @Flag(name: .long, help: "Print one JSON document instead of human text.")
    var json = false

    /// The store's path: `--store`, else `$CHIME_STORE`, else the config file's, else the
    /// default location (with a bad config file, as if there were none: the gate's launch).
    var storePath: String {
        if let store, !store.isEmpty { return store }
        return Settings.ifValid?.text(.store) ?? ReminderStore.defaultPath()
    }

    /// ``storePath`` as every message and report shows it: a password in it redacted (``Redaction``).
    var shownStorePath: String { Redaction.redacted(storePath) }

    /// Opens the store. The default location's directory is created; a path a person named is not.
    /// - Parameter access: what the command may do to the file: only the commands that schedule
    ///   (and the runner) create a store; the others read an empty one when there is none.
    /// - Parameter runner: the runner's connection, which defers WAL checkpoints to idle moments.
    ///   The other commands may read a store whose file system is read-only or full (`chime
    ///   list` works; a write fails with the reason); the runner must be able to write.
    func openStore(_ access: ReminderStore.Access, runner: Bool = false) throws(ChimeError) -> ReminderStore {
        if let store, store.isEmpty { throw ChimeError.invalid("store path", store, expected: "a file path") }
        let path = storePath
        if PostgresStoreOption.isURL(path) { throw PostgresStoreOption.refusal(path) }
        if PostgresStoreOption.isOtherURL(path) {
            throw ChimeError.invalid("store", Redaction.redacted(path), expected: "a SQLite file path or a postgresql:// URL")
        }
        let config = Settings.ifValid
        do {
            let opened = try ReminderStore(
                path: path,
                schemas: ChimeApp.schemas,
                access: access,
                // The default location's directory is made; a path a person named (flag,
                // $CHIME_STORE, the config file) is not.
                createDirectory: store == nil
                    && (config.map { !$0.storeIsNamed } ?? (ProcessInfo.processInfo.environment["CHIME_STORE"].map(\.isEmpty) ?? true)),
                deferCheckpoints: runner,
                readOnlyFallback: !runner
            )
            // The config file's quiet hours apply while 'chime quiet hours' stored none.
            opened.setQuietHoursDefault(config?.quietHours)
            return opened
        } catch {
            // The runner recovers from it at its next wake-up: wake it now (not from a command
            // that only reads, such as doctor, which changes nothing).
            if access != .read && ReminderStore.isRemovedLog(error) { _ = RunnerControl.poke(storePath: path) }
            throw error
        }
    }
}

/// Options of the commands that schedule a reminder.
struct ScheduleOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The reminder's identifier (letters, digits, . _ -).", valueName: "id"))
    var id: String?

    @Flag(name: .customLong("no-replace"), help: "Fail (exit 4) if a reminder with this --id is pending.")
    var noReplace = false

    @Flag(name: [.short, .long], help: "Print only the reminder's identifier.")
    var quiet = false

    // A string, checked in validate(), so that a bad value gets Chime's one line naming it.
    @Option(
        help: ArgumentHelp("low, normal or critical (stays until answered).", valueName: "urgency"),
        completion: .list(Note.Urgency.allCases.map(\.rawValue))
    )
    var urgency: String?
    @Flag(help: "Keep the alert up until it is answered.") var sticky = false
    @Option(
        help: ArgumentHelp("An icon name (appointment-soon) or an image's path.", valueName: "icon")
    )
    var icon: String?
    @Option(
        help: ArgumentHelp(
            "A sound name from the sound theme (bell).",
            valueName: "sound"
        )
    )
    var sound: String?
    @Option(
        help: ArgumentHelp(
            "Its channel on a PostgreSQL store (default: default).",
            valueName: "channel"
        )
    )
    var channel: String?
    @Option(
        name: .customLong("exec-shell"),
        help: ArgumentHelp("Run this command line with /bin/sh when it fires.", valueName: "cmd")
    )
    var execShell: String?
    @Option(
        name: .customLong("exec-timeout"),
        help: ArgumentHelp("The command's time limit (default 10m; 1s to 1d).", valueName: "duration")
    )
    var execTimeout: String?
    // Last: everything after --exec is the command's argv, options included.
    @Option(
        parsing: .remaining,
        help: ArgumentHelp("Run PROGRAM ARGS... when it fires, no shell; the last option.", valueName: "program")
    )
    var exec: [String] = []
    /// Whether --exec was given (with nothing after it, `exec` is empty all the same); the fast
    /// path sets it, argument-parser's path reads the command line.
    var execGiven: Bool?

    func validate() throws {
        if let id { try asValidation { () throws(ChimeError) in try ReminderIdentifier.validate(id) } }
        try asValidation { () throws(ChimeError) in _ = try presentation() }
        try asValidation { () throws(ChimeError) in _ = try command() }
    }

    /// The command to run when it fires, from --exec, --exec-shell and --exec-timeout, with
    /// an argv's program found in PATH now; nil when none is given.
    func command(path: String? = ProcessInfo.processInfo.environment["PATH"]) throws(ChimeError) -> ReminderCommand? {
        try Self.command(
            exec: exec,
            given: execGiven ?? !exec.isEmpty || Self.execOnCommandLine(),
            shell: execShell,
            timeout: execTimeout,
            path: path
        )
    }

    /// The command of --exec (`exec`, `given` whether --exec was given), --exec-shell (`shell`)
    /// and --exec-timeout (`timeout`), an argv's program found in `path`; nil when none is given.
    static func command(
        exec: [String],
        given: Bool,
        shell execShell: String?,
        timeout execTimeout: String?,
        path: String?
    ) throws(ChimeError) -> ReminderCommand? {
        if given && execShell != nil {
            throw ChimeError(.usage, "both --exec and --exec-shell: give one (--exec PROGRAM ARGS... runs without a shell)")
        }
        var timeout = ReminderCommand.defaultTimeout
        if let execTimeout {
            guard given || execShell != nil else {
                throw ChimeError(.usage, "--exec-timeout without a command: give --exec PROGRAM ARGS... or --exec-shell 'CMD'")
            }
            timeout = .seconds(try ReminderCommand.timeoutRule.seconds(execTimeout))
        }
        let program: ReminderCommand.Program
        if let execShell {
            program = .shell(execShell)
        } else if given {
            program = .argv(exec)
        } else {
            return nil
        }
        return try ReminderCommand(program, timeout: timeout).validated(searchPath: path ?? "/usr/local/bin:/usr/bin:/bin")
    }

    /// Whether this process's command line has `--exec` before any `--` (argument-parser leaves
    /// `exec` empty for a bare `--exec`).
    static func execOnCommandLine() -> Bool {
        CommandLine.arguments.dropFirst().prefix { $0 != "--" }.contains("--exec")
    }

    /// How the alert looks, from --urgency, --sticky, --icon and --sound.
    func presentation() throws(ChimeError) -> Presentation {
        let level = try urgency.map { text throws(ChimeError) in try Presentation.urgency(named: text) }
        return try Presentation(urgency: level, sticky: sticky, icon: icon, sound: sound).validated()
    }

    /// What `in`, `at` and `every` share once their input has parsed: check the reminder, then
    /// (only then) open the store, schedule it, wake the runner and print the result.
    /// - Parameter after: `in`'s duration, which on a PostgreSQL store counts from the database's clock.
    func schedule(title: String, body: String, trigger: Trigger, now: Date, global: GlobalOptions, after: TimeInterval? = nil) async throws
    {
        let new = try NewReminder(
            id: id,
            title: title,
            body: body,
            trigger: trigger,
            presentation: try presentation(),
            command: try command()
        ).validated()
        if let url = try global.postgresURL() {
            return try await schedulePostgres(url, new: new, after: after, global: global)
        }
        if let channel {
            throw ChimeError(
                .usage,
                "--channel '\(channel)' is for a PostgreSQL store, where runners share the work; a SQLite store has one runner"
            )
        }
        let store = try global.openStore(.create)
        let result = try store.schedule(new, replace: !noReplace, now: now, systemZone: .current)
        if quiet && !global.json {
            _ = RunnerControl.poke(storePath: store.path)
            Output.line(result.reminder.id)
            return
        }
        report(result, store: store, json: global.json)
    }
}

/// One JSON document or human text on standard output; human notes on standard error.
enum Output {
    static func json<T: Encodable>(_ value: T) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        // JSONEncoder leaves DEL and the C1 controls raw: escape them as the runner's stream does.
        FileHandle.standardOutput.write(JSONText.escapingRawControls(data) + Data("\n".utf8))
    }

    static func line(_ text: String) {
        write(text + "\n", to: STDOUT_FILENO)
    }

    /// `text` on standard output as it is (no newline added): for a long output written in parts.
    static func text(_ text: String) {
        write(text, to: STDOUT_FILENO)
    }

    static func note(_ text: String) {
        write(text + "\n", to: STDERR_FILENO)
    }

    /// The text's UTF-8 bytes, written whole with write(2) as FileHandle writes them, but without
    /// making a `Data` of them first: `Data(String.UTF8View)` asks at run time whether the view is
    /// contiguous bytes (a dynamic cast, whose first conformance lookup scans the binary's every
    /// conformance record), 0.31 M of the 14.5 M instructions of a whole `chime list` (callgrind).
    private static func write(_ text: String, to fd: Int32) {
        var text = text
        text.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return }
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(fd, base + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return  // a closed or full output: nothing else to do with the line (as FileHandle)
                }
                offset += written
            }
        }
    }
}

/// A long output written as it is made, in parts of about 64 KiB: `chime list` and `chime
/// history` of 200,000 entries hold one entry at a time, not a document of all of them.
struct StreamedOutput {
    private var buffer = ""
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// Adds a line of human text.
    mutating func line(_ text: String) {
        buffer += text
        buffer += "\n"
        flushIfFull()
    }

    /// Adds raw JSON text.
    mutating func raw(_ text: String) {
        buffer += text
        flushIfFull()
    }

    /// Adds `value` as JSON, as ``Output/json(_:)`` writes it (keys sorted, controls escaped).
    mutating func json(_ value: some Encodable) {
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        buffer += String(decoding: JSONText.escapingRawControls(data), as: UTF8.self)
        flushIfFull()
    }

    private mutating func flushIfFull() {
        if buffer.utf8.count >= 1 << 16 { flush() }
    }

    /// Writes what is held.
    mutating func flush() {
        guard !buffer.isEmpty else { return }
        Output.text(buffer)
        buffer.removeAll(keepingCapacity: true)
    }
}

/// How a reminder appears in `--json` output.
struct ReminderJSON: Encodable {
    var id: String
    var title: String
    var body: String
    var kind: String
    var trigger: String
    var recurring: Bool
    var zone: String?
    var nextDue: String?
    var nextDueLocal: String?
    var created: String
    /// How the alert looks: urgency (normal unless set), sticky, icon and sound (null unless set).
    var urgency: String
    var sticky: Bool
    @Nullable var icon: String?
    @Nullable var sound: String?
    /// The command it runs when it fires; absent when none.
    var command: CommandJSON?
    /// The app that scheduled it over D-Bus, and its own buttons; absent when none.
    var appID: String?
    var actions: [Note.Action]?

    enum CodingKeys: String, CodingKey {
        case id, title, body, kind, trigger, recurring, zone, created, urgency, sticky, icon, sound, command, actions
        case appID = "app_id"
        case nextDue = "next_due"
        case nextDueLocal = "next_due_local"
    }

    init(_ reminder: Reminder, zone systemZone: TimeZone) {
        id = reminder.id
        title = reminder.title
        body = reminder.body
        kind = reminder.kind
        trigger = reminder.trigger.summary
        recurring = reminder.trigger.isRecurring
        let displayZone = reminder.trigger.displayZone(system: systemZone)
        if let rule = reminder.trigger.zoneRule {
            zone = if case .fixed(let name) = rule { name } else { "floating" }
        }
        nextDue = reminder.nextDue.map(TimeText.iso)
        nextDueLocal = reminder.nextDue.map { TimeText.local($0, in: displayZone) }
        created = TimeText.iso(reminder.createdAt)
        urgency = (reminder.presentation.urgency ?? .normal).rawValue
        sticky = reminder.presentation.sticky
        icon = reminder.presentation.icon
        sound = reminder.presentation.sound
        command = reminder.command.map(CommandJSON.init)
        appID = reminder.appID
        actions = reminder.presentation.actions.isEmpty ? nil : reminder.presentation.actions
    }
}

/// A reminder's command in --json: `argv` (no shell) or `shell`, and its time limit in seconds.
struct CommandJSON: Encodable {
    var argv: [String]?
    var shell: String?
    var timeoutSeconds: Int64

    enum CodingKeys: String, CodingKey {
        case argv, shell
        case timeoutSeconds = "timeout_s"
    }

    init(_ command: ReminderCommand) {
        switch command.program {
        case .argv(let argv): self.argv = argv
        case .shell(let line): shell = line
        }
        timeoutSeconds = command.timeout.components.seconds
    }
}

/// What a command says on standard error when no runner is running for its store.
enum RunnerNote {
    /// After a change that schedules alerts.
    static let fires = "No runner is running for this store: the change is saved and fires once 'chime run' starts."
    /// After a change that only removes or records (a cancel, a medication stopped): nothing is to fire.
    static let saved = "No runner is running for this store: the change is saved (start one with 'chime run')."
}

/// After a change to the store: wake the runner, and say so when none is running.
/// - Parameter note: what to say then (``RunnerNote``).
func pokeRunner(_ store: ReminderStore, json: Bool, note: String = RunnerNote.fires) -> Bool {
    let running = RunnerControl.poke(storePath: store.path)
    if !running && !json { Output.note(note) }
    return running
}

/// The result of scheduling, printed by `in`, `at` and `every`.
func report(_ result: ScheduleResult, store: ReminderStore, json: Bool) {
    let running = pokeRunner(store, json: json)
    emit(Scheduled(result, runner: running, zone: .current, now: Date()), json: json)
}

/// A reminder just scheduled: the reminder, whether it replaced a pending one, whether a runner
/// was woken.
struct Scheduled: Report {
    var reminder: ReminderJSON
    var replaced: Bool
    var runner: Bool
    private var scheduled: Reminder
    private var zone: TimeZone
    private var now: Date

    enum CodingKeys: String, CodingKey { case reminder, replaced, runner }

    init(_ result: ScheduleResult, runner: Bool, zone: TimeZone, now: Date) {
        reminder = ReminderJSON(result.reminder, zone: zone)
        replaced = result.replaced
        self.runner = runner
        scheduled = result.reminder
        self.zone = zone
        self.now = now
    }

    var lines: [String] {
        var text = "\(scheduled.id)"
        if let due = scheduled.nextDue {
            let displayZone = scheduled.trigger.displayZone(system: zone)
            text += "  \(TimeText.local(due, in: displayZone)) (\(TimeText.relative(due, from: now)))"
        }
        if scheduled.trigger.isRecurring { text += "  \(scheduled.trigger.summary)" }
        text += "  \(UserText.oneLine(scheduled.title))"
        if replaced { text += "  (replaced the pending reminder with this id)" }
        guard let command = scheduled.command else { return [text] }
        return [text, "  runs: \(UserText.oneLine(command.display))\(command.isShell ? " (sh)" : "")"]
    }
}

/// argument-parser reports errors thrown from `validate()` as usage errors (exit 64) only when
/// they are `ValidationError`s: keep the message, change the type.
func asValidation(_ body: () throws(ChimeError) -> Void) throws {
    do {
        try body()
    } catch {
        throw ValidationError(error.message)
    }
}
