import ArgumentParser
import ChimeConfig
import ChimeCore
import ChimeLibnotify
import ChimePostgres
import ChimeRunner
import ChimeStore
import Foundation

/// The PostgreSQL store: `--store postgresql://…`, `$CHIME_STORE` or the config file's
/// store may name one. The reminder commands (in, at, every, import, list, next, show, history, edit, cancel),
/// `done`, `snooze`, `quiet`, `run`, `doctor` and `store init` serve it; the families (focus, doses, gateway) and the other
/// commands keep to the SQLite store and say so: a family's command before it does anything
/// (``SQLiteOnlyCommand``), the others as they open the store (``GlobalOptions/openStore(_:runner:)``).
enum PostgresStoreOption {
    /// Whether a store location is a PostgreSQL URL rather than a file path.
    static func isURL(_ location: String) -> Bool {
        let lowered = location.lowercased()
        return lowered.hasPrefix("postgresql:") || lowered.hasPrefix("postgres:")
    }

    /// Whether a store location is a URL of another kind (`mysql://…`, a misspelt scheme): not a
    /// file path anyone means, and it may carry a password, so it is refused before anything
    /// opens it or names it in a store's message.
    static func isOtherURL(_ location: String) -> Bool {
        guard !isURL(location), let separator = location.range(of: "://") else { return false }
        let scheme = location[..<separator.lowerBound]
        return scheme.first?.isLetter == true && scheme.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }
    }

    /// The commands that serve a PostgreSQL store, for the refusal of the others.
    static let commands = "in, at, every, import, list, next, show, history, edit, cancel, done, snooze, quiet, run, doctor and store init"

    /// The command running, as a person typed it ("gate add"), for the refusal: set by `main`
    /// once the line has parsed.
    nonisolated(unsafe) static var running: String?

    /// The command words of `arguments` (`chime --store URL gate add x`: "gate add"): the first
    /// word that is not an option or --store's value, and the command's own name when it is a
    /// subcommand as typed. Never an option's value, which may be a URL with a password.
    static func commandWords(_ arguments: [String], name: String?) -> String? {
        var skipNext = false
        var first: String?
        for argument in arguments {
            if skipNext {
                skipNext = false
                continue
            }
            if argument == "--store" {
                skipNext = true
                continue
            }
            if argument.hasPrefix("-") { continue }
            first = argument
            break
        }
        guard let first else { return name }
        // `chime gate` runs its default subcommand (the hub): named as typed.
        guard let name, name != first, arguments.contains(name) else { return first }
        return "\(first) \(name)"
    }

    /// The one line a command that keeps to SQLite says when pointed at PostgreSQL.
    static func refusal(_ location: String) -> ChimeError {
        let command = running ?? commandWords(Array(CommandLine.arguments.dropFirst()), name: nil) ?? "this command"
        return ChimeError(
            .usage,
            "'chime \(command)' works on a SQLite store only, not on the PostgreSQL store '\(Redaction.redacted(location))': on PostgreSQL Chime serves \(commands)"
        )
    }
}

/// A command of a family (focus, doses, gateway), which keep their tables in the SQLite store:
/// refused on a PostgreSQL store before it does anything (`gate add` would write a launcher
/// whose launches nothing gates; `med add` would ask its questions first).
protocol SQLiteOnlyCommand {
    var global: GlobalOptions { get }
}

extension SQLiteOnlyCommand {
    /// Throws the refusal when the store is a PostgreSQL URL.
    func refuseOnPostgres() throws(ChimeError) {
        let location = global.storePath
        if PostgresStoreOption.isURL(location) { throw PostgresStoreOption.refusal(location) }
    }
}

extension PostgresStoreOption {
    /// Refuses `command` when it is a family's and the store is a PostgreSQL URL. (Cast here,
    /// outside the main actor, so that no conformance isolated to it is taken.)
    nonisolated static func refuseFamily(_ command: any ParsableCommand) throws(ChimeError) {
        if let family = command as? any SQLiteOnlyCommand { try family.refuseOnPostgres() }
    }
}

extension FocusStart: SQLiteOnlyCommand {}
extension FocusPause: SQLiteOnlyCommand {}
extension FocusResume: SQLiteOnlyCommand {}
extension FocusGiveUp: SQLiteOnlyCommand {}
extension FocusStatus: SQLiteOnlyCommand {}
extension ForestGrid: SQLiteOnlyCommand {}
extension ForestShow: SQLiteOnlyCommand {}
extension Stats: SQLiteOnlyCommand {}
extension DoseTake: SQLiteOnlyCommand {}
extension DoseSkip: SQLiteOnlyCommand {}
extension DoseMiss: SQLiteOnlyCommand {}
extension DoseReset: SQLiteOnlyCommand {}
extension DoseSnooze: SQLiteOnlyCommand {}
extension DosesCommand: SQLiteOnlyCommand {}
extension AdherenceCommand: SQLiteOnlyCommand {}
extension ExportCommand: SQLiteOnlyCommand {}
extension MedAdd: SQLiteOnlyCommand {}
extension MedList: SQLiteOnlyCommand {}
extension MedShow: SQLiteOnlyCommand {}
extension MedEdit: SQLiteOnlyCommand {}
extension MedRefill: SQLiteOnlyCommand {}
extension MedDeactivate: SQLiteOnlyCommand {}
extension MedReactivate: SQLiteOnlyCommand {}
extension MedDelete: SQLiteOnlyCommand {}
extension MedNext: SQLiteOnlyCommand {}
// Not `gate open`, the launch: a gate never locks a person out.
extension GateHub: SQLiteOnlyCommand {}
extension GateSetup: SQLiteOnlyCommand {}
extension GateAdd: SQLiteOnlyCommand {}
extension GateList: SQLiteOnlyCommand {}
extension GateRemove: SQLiteOnlyCommand {}
extension GateOff: SQLiteOnlyCommand {}
extension GateDoctor: SQLiteOnlyCommand {}
extension GateStatsCommand: SQLiteOnlyCommand {}

extension GlobalOptions {
    /// The PostgreSQL store these options name, or nil when the store is a SQLite file.
    /// - Throws: `.usage` for a bad URL, naming it.
    func postgresURL() throws(ChimeError) -> PostgresURL? {
        let location = storePath
        guard PostgresStoreOption.isURL(location) else { return nil }
        return try PostgresURL(location)
    }

    /// Runs `body` on the PostgreSQL store `url` (one connection, checked first: a server that
    /// is down is one line and exit 5, not a wait). Database errors become one line.
    func withPostgres<Result: Sendable>(
        _ url: PostgresURL,
        _ body: @Sendable (PostgresStore) async throws -> Result
    ) async throws -> Result {
        do {
            return try await PostgresStore.withCheckedStore(url, body)
        } catch let error as ChimeError {
            throw error
        } catch {
            throw PostgresStore.storeError(error, url: url)
        }
    }
}

extension ScheduleOptions {
    /// `in`, `at` and `every` on a PostgreSQL store. `after`: `in`'s duration, counted from the
    /// database's clock (the runners' clock), not this host's, which may be minutes off.
    func schedulePostgres(
        _ url: PostgresURL,
        new: NewReminder,
        after: TimeInterval?,
        global: GlobalOptions
    ) async throws {
        let replace = !noReplace
        let channel = channel ?? PostgresStore.defaultChannel
        try PostgresStore.validateChannel(channel)
        let (result, runners) = try await global.withPostgres(url) { store in
            var checked = new
            if let after { checked.trigger = .once(try store.databaseNow().addingTimeInterval(after)) }
            let result = try store.schedule(checked, replace: replace, systemZone: .current, channel: channel)
            return (result, try store.runnerCount())
        }
        if quiet && !global.json {
            Output.line(result.reminder.id)
            return
        }
        if runners == 0 && !global.json { Output.note(RunnerNote.fires) }
        emit(Scheduled(result, runner: runners > 0, zone: .current, now: Date()), json: global.json)
    }
}

extension Import {
    /// As on SQLite: the file read as a stream by the same reader, every reminder in one
    /// transaction (a bad one anywhere changes nothing), each due by the database's clock.
    func runPostgres(_ url: PostgresURL, source: String) async throws {
        let handle = try open()
        let (replace, json, past) = (!noReplace, global.json, past)
        let (streamed, adjustments, now, runners) = try await global.withPostgres(url) { store in
            let now = try store.databaseNow()
            let reader = ReminderImport.Reader(handle, source: source, now: now, past: past)
            let streamed = try store.scheduleStream(
                replace: replace,
                now: now,
                systemZone: .current,
                // The ids are printed only with --json.
                keepIds: json,
                pastOneShots: past == .fire,
                name: { "\(source): reminder \($0 + 1)" },
                produce: { deliver in
                    while let chunk = try reader.next() { try deliver(chunk) }
                }
            )
            return (streamed, reader.adjustments, now, try store.runnerCount())
        }
        if runners == 0 && !json { Output.note(RunnerNote.fires) }
        let report = Imported(
            imported: streamed.count,
            replaced: streamed.replaced,
            ids: streamed.ids,
            runner: runners > 0,
            passed: adjustments.map { Passed($0, now: now) }
        )
        emit(report, json: json)
    }
}

extension List {
    /// As on SQLite, the rows written as they arrive. The table's widths come from a first
    /// query of its own (not in one transaction with the second: a reminder that changes between
    /// the two may shift a column, nothing else).
    func runPostgres(_ url: PostgresURL) async throws {
        let quietHours = Settings.ifValid?.quietHours
        let page = try await global.withPostgres(url) { [json = global.json, limit, after, fetchLimit] store in
            store.setQuietHoursDefault(quietHours)
            // The first page shows the snoozed and held alerts too, with what holds each, as on SQLite.
            var waiting: [HoldStatus.Entry] = []
            if after == nil {
                waiting = try HoldStatus(
                    quiet: store.quietState(),
                    waiting: store.waitingAlerts(),
                    families: [],
                    desktopDoNotDisturb: nil,
                    now: try store.databaseNow(),
                    zone: .current
                ).waiting
            }
            var page = ListPage(json: json, limit: limit, after: after, zone: .current, waiting: waiting)
            if !json { try store.eachPending(after: after, limit: fetchLimit) { page.measure($0) } }
            try store.eachPending(after: after, limit: fetchLimit) { page.add($0) }
            let runners = try store.runnerCount()
            return (page, runners)
        }
        var (listed, runners) = page
        listed.finish(runner: runners > 0)
    }
}

extension Next {
    func runPostgres(_ url: PostgresURL) async throws {
        let reminder = try await global.withPostgres(url) { [id] store in try store.reminder(id: id) }
        emit(preview(reminder), json: global.json)
    }
}

extension Cancel {
    /// All of them or none, for every runner; an occurrence a runner was posting as the cancel
    /// committed is waited for (as the SQLite runner is asked): shown means too late (exit 8).
    func runPostgres(_ url: PostgresURL) async throws {
        let (cancelledAndClosed, settled, runners) = try await global.withPostgres(url) { [ids] store in
            let outcome = try store.cancelReporting(ids: ids)
            let settled = try await store.settle(outcome.inFlight, timeout: .seconds(RunnerControl.answerTimeout))
            return ((outcome.cancelled, outcome.closed), Array(zip(outcome.inFlight, settled)), try store.runnerCount())
        }
        let (cancelled, closed) = cancelledAndClosed
        if runners == 0 && !global.json { Output.note(RunnerNote.saved) }
        let zone = TimeZone.current
        // A one-shot that had fired and was still showing: too late, as on SQLite (its alert is
        // not closed here: see PostgresStore.cancelShown).
        let showing = closed.map {
            "'\($0.reminderID)' was shown at \(TimeText.local($0.posted, in: zone, seconds: true)) (due \(TimeText.local($0.due, in: zone, seconds: true)))"
        }
        let shown =
            showing
            + settled.compactMap { item, settled -> String? in
                guard case .posted(let at) = settled else { return nil }
                let due = Date(micros: item.key.dueMicros)
                return
                    "'\(item.reminderID)' was shown at \(TimeText.local(at, in: zone, seconds: true)) (due \(TimeText.local(due, in: zone, seconds: true)))"
            }
        if !shown.isEmpty {
            let rest = cancelled.count > 1 || cancelled.contains { $0.trigger.isRecurring } ? "; the rest is cancelled" : ""
            throw ChimeError(.tooLate, "too late: " + shown.joined(separator: ", ") + rest)
        }
        let unsettled = Set(settled.filter { $0.1 == .unknown }.map(\.0.reminderID)).sorted().map { "'\($0)'" }
        if !unsettled.isEmpty {
            throw ChimeError(
                .failure,
                "cancelled \(unsettled.joined(separator: ", ")), but a runner was posting it and did not settle within \(Int(RunnerControl.answerTimeout)) s whether it showed it"
            )
        }
        emit(Cancelled(cancelled, runner: runners > 0), json: global.json)
    }
}

extension History {
    /// As on SQLite, from the PostgreSQL ledger; `--last` counts back from the database's clock
    /// (the runners'). What that ledger does not keep is null (see ``HistoryEntry/init(_:)``).
    func runPostgres(_ url: PostgresURL) async throws {
        try await global.withPostgres(url) { [id, last, limit, json = global.json] store in
            let since = try History.since(last, now: try store.databaseNow())
            if let id, !(try store.hasEverHad(id: id)) { throw History.neverHad(id) }
            try History.render(json: json, zone: .current) { body in
                try store.eachHistory(id: id, since: since, limit: limit, body)
            }
        }
    }
}

extension Show {
    func runPostgres(_ url: PostgresURL) async throws {
        let detail = try await global.withPostgres(url) { [id] store in try store.detail(id: id) }
        emit(Show.shown(detail), json: global.json)
    }
}

extension Done {
    /// As on SQLite, on the database's clock; the runner that showed the alert replaces it by
    /// "✓ Done" (told over `NOTIFY chime_alerts`, at commit).
    func runPostgres(_ url: PostgresURL) async throws {
        let (answered, runners) = try await global.withPostgres(url) { [id] store in
            if let shown = try store.lastShown(id: id), shown.kind != PlainReminders.plainKind {
                throw ChimeError(.conflict, "'\(id)' is a \(shown.kind) alert, not a reminder's")
            }
            let answered = try store.answerShown(id: id, action: PlainReminders.done, snoozeFor: nil) {
                PlainReminders.doneConfirmation(title: $0.alert.title)
            }
            return (answered, try store.runnerCount())
        }
        emit(AlertAnswered(answered, runner: runners > 0), json: global.json)
    }
}

extension Snooze {
    /// As on SQLite, the snooze counted from the database's clock; the re-alert is one more
    /// occurrence, for whichever runner serves its channel.
    func runPostgres(_ url: PostgresURL, seconds: Int64) async throws {
        let (answered, runners) = try await global.withPostgres(url) { [id] store in
            if let shown = try store.lastShown(id: id), shown.kind != PlainReminders.plainKind {
                throw ChimeError(
                    .conflict,
                    "'\(id)' is a \(shown.kind) alert: only reminders (chime in|at|every) are snoozed on PostgreSQL"
                )
            }
            let answered = try store.answerShown(id: id, action: PlainReminders.snooze, snoozeFor: TimeInterval(seconds)) {
                PlainReminders.snoozedConfirmation(until: $0.snoozedUntil ?? Date(), title: $0.alert.title, zone: .current)
            }
            return (answered, try store.runnerCount())
        }
        if runners == 0 && !global.json { Output.note(RunnerNote.saved) }
        emit(AlertAnswered(answered, runner: runners > 0), json: global.json)
    }
}

extension Quiet {
    /// As on SQLite: the settings in the database, for every runner; times on its clock.
    func runPostgres(_ url: PostgresURL) async throws {
        // The words are checked before anything connects.
        let asked = try Self.change(words, now: Date(), zone: .current)
        let zone = TimeZone.current
        let quietHours = Settings.ifValid?.quietHours
        let dnd = DesktopDoNotDisturb.read()
        let read = try await global.withPostgres(url) { [words] store in
            store.setQuietHoursDefault(quietHours)
            let now = try store.databaseNow()
            if let change = try Self.change(words, now: now, zone: zone) { try store.updateQuiet(change) }
            let quiet = try store.quietState()
            // No family holds on PostgreSQL (the families keep to SQLite).
            let status = try HoldStatus(
                quiet: quiet,
                waiting: store.waitingAlerts(),
                families: [],
                desktopDoNotDisturb: dnd.active,
                now: now,
                zone: zone
            )
            return (quiet, status, try store.storedQuietHours(), now, try store.runnerCount())
        }
        let (quiet, status, stored, now, runners) = read
        if asked != nil && runners == 0 && !global.json {
            Output.note("No runner is running for this store: the change is saved; a runner follows it once 'chime run' starts.")
        }
        emit(QuietReport(state: quiet, status: status, stored: stored, desktop: dnd, now: now, zone: zone), json: global.json)
    }
}
