import ArgumentParser
import ChimeApp
import ChimeConfig
import ChimeCore
import ChimeFocus
import ChimeGateway
import ChimeRunner
import ChimeStore
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `chime gate`: the mindful gateway (the MIGA seed). A pause before a distracting program opens.
struct GateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gate",
        abstract: "A mindful pause before a distracting program opens.",
        discussion: """
            A gated program's launcher runs 'chime gate open ID -- …': a pause with a
            quote and a countdown, then Exit to Focus, Deepen the Pause or Proceed.
            Examples:
              chime gate add firefox-esr
              chime gate list
            More: man chime (chime gate)
            """,
        subcommands: [
            GateHub.self, GateSetup.self, GateAdd.self, GateEdit.self, GateList.self, GateRemove.self, GateOff.self, GateDoctor.self,
            GateOpen.self, GateStatsCommand.self,
        ],
        defaultSubcommand: GateHub.self
    )
}

/// What the gate commands share: the store, the gateway's book, the launcher overrides.
struct GateContext {
    let store: ReminderStore
    let book: GateBook

    init(_ global: GlobalOptions, _ access: ReminderStore.Access) throws(ChimeError) {
        store = try global.openStore(access)
        // Before 'chime gate setup': the config file's [gate] values (the defaults with a bad file: the launch goes on).
        book = GateBook(store: store, defaults: Settings.ifValid?.gateDefaults ?? .defaults)
    }

    static func overrides() throws(ChimeError) -> LauncherOverrides {
        do {
            var overrides = try LauncherOverrides(environment: ProcessInfo.processInfo.environment)
            #if DEBUG
            overrides.beforeChange = GateCrashHook.make(environment: ProcessInfo.processInfo.environment)
            #endif
            return overrides
        } catch {
            throw GateContext.chimeError(error)
        }
    }

    static func chimeError(_ error: any Error) -> ChimeError {
        error as? ChimeError ?? ChimeError(.failure, "\(error)")
    }

    /// This chime's absolute path, which the launcher overrides run.
    static func executable() -> String { DataDirectories.executablePath }

    static func desktopID(_ text: String) throws(ChimeError) -> DesktopFileID {
        do {
            return try DesktopFileID(text)
        } catch {
            throw chimeError(error)
        }
    }
}

#if DEBUG
/// Test-only, and in debug builds only (a release build has no such variable):
/// `CHIME_TEST_GATE_KILL_AT=N` kills this process with SIGKILL just before the gate's Nth change
/// to a file or directory (1 is the first), as a crash or a power cut would stop it there, after
/// naming the change on standard error. The crash tests (`GateCrashTests`) use it to kill each
/// gate command at every step in turn.
enum GateCrashHook {
    private final class Count: Sendable {
        let value = Mutex(0)
    }

    static func make(environment: [String: String]) -> (@Sendable (String) -> Void)? {
        guard let text = environment["CHIME_TEST_GATE_KILL_AT"], let step = Int(text), step > 0 else { return nil }
        let count = Count()
        return { change in
            let reached = count.value.withLock { count in
                count += 1
                return count
            }
            guard reached == step else { return }
            FileHandle.standardError.write(Data("chime: killed (CHIME_TEST_GATE_KILL_AT=\(step)) before: \(change)\n".utf8))
            raise(SIGKILL)
        }
    }
}
#endif

/// A gated program in the hub and `gate list`.
struct GatedProgramJSON: Encodable {
    var id: String
    var path: String
    var original: String
    var status: String
    @Nullable var advice: String?
    /// When the gate applies: "always", "09:00-17:00 mon-fri".
    var schedule: String
    @Nullable var hours: String?
    @Nullable var days: String?
    /// Opens per day before the pause grows; null for none.
    @Nullable var budgetPerDay: Int?
    /// Minutes per day before the pause grows; null for none.
    @Nullable var budgetMinutesPerDay: Int?
    /// Minutes in the program before the reminder in use; null for none.
    @Nullable var remindAfterMin: Int?
    enum CodingKeys: String, CodingKey {
        case id, path, original, status, advice, schedule, hours, days
        case budgetPerDay = "budget_per_day"
        case budgetMinutesPerDay = "budget_minutes_per_day"
        case remindAfterMin = "remind_after_min"
    }

    init(_ override: LauncherOverride, rule: GateRule? = nil) {
        id = override.id.rawValue
        path = override.path
        original = override.originalPath
        status = override.status.rawValue
        advice = override.status == .ok ? nil : override.advice
        let rule = rule ?? GateRule(programID: id)
        schedule = rule.schedule
        hours = rule.hours?.description
        days = rule.days.map(GateRule.daysText)
        budgetPerDay = rule.budget?.opensPerDay
        budgetMinutesPerDay = rule.minutesBudget?.minutesPerDay
        remindAfterMin = rule.remindAfter
        label = rule.label
    }

    /// The rule in words ("09:00-17:00 mon-fri, budget 3/day and 60m/day, reminder after 20 min").
    private var label: String?

    /// "  firefox-esr.desktop  09:00-17:00 mon-fri, budget 3/day".
    var line: String {
        var text = "  \(id)"
        if let label { text += "  " + label }
        return text + (status == "ok" ? "" : "  [\(status)] \(advice ?? "")")
    }
}

/// `--hours`, `--days`, `--budget` of `chime gate add` and `chime gate edit`.
struct GateRuleOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Gate only in these hours, local time: HH:MM-HH:MM (09:00-17:00; 22:00-06:00 crosses midnight).",
            valueName: "start-end"
        )
    )
    var hours: String?
    @Option(help: ArgumentHelp("Gate only on these days: mon-fri, weekends, mon,wed,fri (as 'chime med add').", valueName: "days"))
    var days: String?
    @Option(
        help: ArgumentHelp(
            "Opens per day (3/day) or minutes per day (60m/day) with the usual pause; past it the pause grows, up to 3×. Both: give it twice.",
            valueName: "N/day|Nm/day"
        )
    )
    var budget: [String] = []
    @Option(
        help: ArgumentHelp(
            "After this long in the program, an alert says so (20 min in Firefox) with Exit / Keep going: 1m to 24h.",
            valueName: "duration"
        )
    )
    var remindAfter: String?

    var isEmpty: Bool { hours == nil && days == nil && budget.isEmpty && remindAfter == nil }

    /// These options' change (``GateRuleChange``); throws, before anything is written, on a bad value.
    func change() throws(ChimeError) -> GateRuleChange {
        try GateRuleChange.parse(hours: hours, days: days, budgets: budget, remindAfter: remindAfter)
    }
}

/// The streak banner: `days`, and its message (null with no banner).
struct StreakJSON: Encodable {
    var days: Int
    @Nullable var message: String?

    init(_ streak: GateStreak) {
        days = streak.count
        message = streak.showsBanner ? streak.message : nil
    }
}

/// The choices of `chime gate setup`.
struct ProfileJSON: Encodable {
    var determination: Int
    var pauseS: Int
    var interests: [String]
    var graceS: Int
    var focusOnExit: Bool
    var sessionS: Int
    var setUp: Bool
    enum CodingKeys: String, CodingKey {
        case determination, interests
        case pauseS = "pause_s"
        case graceS = "grace_s"
        case focusOnExit = "focus_on_exit"
        case sessionS = "session_s"
        case setUp = "set_up"
    }

    init(_ profile: GateProfile) {
        determination = profile.determination
        pauseS = Int(profile.pauseLength)
        interests = Interest.allCases.filter(profile.interests.contains).map(\.rawValue)
        graceS = Int(profile.grace.length)
        focusOnExit = profile.focusOnExit
        sessionS = Int(profile.sessionLength)
        setUp = profile.isSetUp
    }
}

struct GateHub: AsyncParsableCommand, RunsWithBadConfig {
    static let configuration = CommandConfiguration(
        commandName: "hub",
        abstract: "Your Mindful Hub: the streak, the gated programs; 'chime gate -- COMMAND…' gates a command line.",
        discussion: """
            Examples:
              chime gate
              chime gate -- code .
            More: man chime (chime gate)
            """
    )
    @OptionGroup var global: GlobalOptions
    @Flag(help: "Show the gate in a window (the default with a display).") var window = false
    @Flag(help: "Show the gate in this terminal.") var terminal = false
    @Argument(parsing: .postTerminator, help: ArgumentHelp("A command line to gate, after --.", valueName: "command"))
    var command: [String] = []

    func run() async throws {
        // The hub needs a valid config file; gating a command line (a launch) never stops on one.
        if command.isEmpty { _ = try Settings.current() }
        if !command.isEmpty {
            let name = (command[0] as NSString).lastPathComponent
            try await GateOpen.launch(
                programID: name,
                name: name,
                argv: command,
                surface: try GateOpen.Surface(window: window, terminal: terminal),
                focusOnExit: nil,
                global: global
            )
            return
        }
        let context = try GateContext(global, .read)
        let stats = try context.book.stats(zone: .current)
        let rules = try context.book.rules()
        let gated = (try GateContext.overrides().list()).map { GatedProgramJSON($0, rule: rules[$0.id.rawValue]) }
        emit(Hub(greeting: GateHub.greeting, streak: stats.streak, programs: gated, profile: try context.book.profile()), json: global.json)
    }

    static let greeting = ChimeGateway.GateHub.greeting

    struct Hub: Report {
        var greeting: String
        var streak: GateStreak
        var programs: [GatedProgramJSON]
        var profile: GateProfile

        func encode(to encoder: any Encoder) throws {
            struct Document: Encodable {
                var greeting: String
                var streak: StreakJSON
                var programs: [GatedProgramJSON]
                var profile: ProfileJSON
            }
            try Document(greeting: greeting, streak: StreakJSON(streak), programs: programs, profile: ProfileJSON(profile))
                .encode(to: encoder)
        }

        var lines: [String] {
            var lines = [greeting]
            if streak.showsBanner {
                lines.append("")
                lines.append(streak.message)
            }
            lines.append("")
            if programs.isEmpty {
                lines.append(ChimeGateway.GateHub.noPrograms + ": 'chime gate add ID' (ids: 'chime gate add --pick').")
            } else {
                lines.append("Gated programs:")
                lines += programs.map(\.line)
            }
            if !profile.isSetUp {
                lines.append("")
                lines.append("Set your pause and interests with 'chime gate setup'.")
            }
            return lines
        }
    }
}

struct GateSetup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "setup",
        abstract: "Choose your determination (the pause), your interests (the quotes), the grace, and what to gate.",
        discussion: """
            On a terminal, asks for what no option gives; without one, options not given
            keep their values.
            Examples:
              chime gate setup --determination 7 --interests stoicism,psychology
              chime gate setup --grace 5m --session 30m
            More: man chime (chime gate setup)
            """
    )
    @Option(help: ArgumentHelp("1 to 10: the higher, the longer the pause (15 to 45 s).", valueName: "level"))
    var determination: Int?
    @Option(
        help: ArgumentHelp(
            "A pause of your own, 1s to 2m, in place of the determination's; 'auto' for the determination's.",
            valueName: "duration"
        )
    )
    var pause: String?
    @Option(help: ArgumentHelp("stoicism, productivity, mindfulness, psychology (a,b).", valueName: "list"))
    var interests: String?
    @Option(
        help: ArgumentHelp(
            "After Proceed, the program opens without a gate this long: 10m (default), 0s for none, up to 1d.",
            valueName: "duration"
        )
    )
    var grace: DurationOption<GateGraceLength>?
    @Option(help: ArgumentHelp("A program's typical session, for hours reclaimed (20m).", valueName: "duration"))
    var session: DurationOption<GateSessionLength>?
    @Flag(inversion: .prefixedNo, help: "With no focus session running, Exit starts one.")
    var focusOnExit: Bool?
    @Option(help: ArgumentHelp("Gate this program too (a desktop entry id; repeatable).", valueName: "id"), completion: Completion.gateable)
    var gate: [String] = []
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let context = try GateContext(global, .create)
        var profile = try context.book.profile()
        let asking = isatty(STDIN_FILENO) == 1 && !global.json
        if let determination {
            profile.determination = determination
        } else if asking {
            profile.determination = try Self.ask("Determination, 1 to 10 (the pause: 1 → 15 s, 10 → 45 s)", default: profile.determination)
            { text throws(ChimeError) in
                guard let level = Int(text), (1...10).contains(level) else {
                    throw ChimeError.invalid("determination", text, expected: "a whole number from 1 to 10")
                }
                return level
            }
        }
        if let pause { profile.pause = pause == "auto" ? nil : TimeInterval(try TimeParsing.duration(pause)) }
        if let interests {
            profile.interests = try Self.interests(interests)
        } else if asking {
            let current = Interest.allCases.filter(profile.interests.contains).map(\.rawValue).joined(separator: ",")
            profile.interests = try Self.ask(
                "Interests (stoicism, productivity, mindfulness, psychology; comma-separated)",
                default: current.isEmpty ? "all" : current
            ) { text throws(ChimeError) in text == "all" ? [] : try Self.interests(text) }
        }
        // (0s, no grace, is a choice here.)
        if let grace { profile.grace = GateGrace(length: TimeInterval(grace.seconds)) }
        if let session { profile.sessionLength = TimeInterval(session.seconds) }
        if let focusOnExit { profile.focusOnExit = focusOnExit }
        let saved = try context.book.save(profile)
        var gated: [GatedProgramJSON] = []
        let overrides = try GateContext.overrides()
        var ids = gate
        if gate.isEmpty, asking {
            // The seed's first-run phase: which programs to gate (here the launchers are written
            // for the person; iOS needed Shortcuts set up by hand).
            let already = Set((try? overrides.list())?.map(\.id) ?? [])
            let installed = overrides.installed().keys.filter { !already.contains($0) }.sorted()
            let answer = try Self.ask(
                "Programs to gate now (desktop entry ids, comma-separated; 'list' shows them; Enter for none)",
                default: ""
            ) { text throws(ChimeError) -> [String] in
                if text == "list" {
                    for id in installed { FileHandle.standardError.write(Data("  \(id.rawValue)\n".utf8)) }
                    throw ChimeError(.usage, "choose from those")
                }
                return text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            }
            ids = answer
        }
        for id in ids {
            do {
                gated.append(GatedProgramJSON(try overrides.gate(try GateContext.desktopID(id), chime: GateContext.executable())))
            } catch {
                throw GateContext.chimeError(error)
            }
        }
        emit(SetUp(profile: saved, gated: gated), json: global.json)
    }

    static func interests(_ text: String) throws(ChimeError) -> Set<Interest> {
        var chosen: Set<Interest> = []
        for word in text.split(separator: ",", omittingEmptySubsequences: false) {
            let name = word.trimmingCharacters(in: .whitespaces).lowercased()
            guard let interest = Interest(rawValue: name) else {
                throw ChimeError.invalid(
                    "interest",
                    String(word),
                    expected: "stoicism, productivity, mindfulness or psychology, comma-separated"
                )
            }
            chosen.insert(interest)
        }
        return chosen
    }

    static func ask<T>(
        _ question: String,
        default value: some CustomStringConvertible,
        interrupted: String = "setup was interrupted: nothing was changed",
        parse: (String) throws(ChimeError) -> T
    ) throws(ChimeError) -> T {
        while true {
            // No default: no brackets (an empty answer asks again).
            let shown = value.description.isEmpty ? "" : " [\(value)]"
            FileHandle.standardError.write(Data("\(question)\(shown): ".utf8))
            guard let line = readLine() else { throw ChimeError(.usage, interrupted) }
            let text = line.trimmingCharacters(in: .whitespaces)
            do throws(ChimeError) {
                return try parse(text.isEmpty ? value.description : text)
            } catch {
                FileHandle.standardError.write(Data("\(error.message)\n".utf8))
            }
        }
    }

    struct SetUp: Report {
        var profile: GateProfile
        var gated: [GatedProgramJSON]

        func encode(to encoder: any Encoder) throws {
            struct Document: Encodable {
                var profile: ProfileJSON
                var gated: [GatedProgramJSON]
            }
            try Document(profile: ProfileJSON(profile), gated: gated).encode(to: encoder)
        }

        var lines: [String] {
            let interests = Interest.allCases.filter(profile.interests.contains).map(\.title)
            return [
                "Your pause: \(Int(profile.pauseLength)) s ("
                    + (profile.pause == nil ? "determination \(profile.determination)" : "your own") + ").",
                "Quotes: \(interests.isEmpty ? "every interest" : interests.joined(separator: ", ")).",
                "Grace after Proceed: \(Trigger.formatInterval(Int64(profile.grace.length))).",
                "Exit starts a focus session: \(profile.focusOnExit ? "yes" : "no").",
            ] + gated.map { "Gated \($0.id)." }
        }
    }
}

struct GateAdd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Gate a program by its desktop entry id (firefox-esr, org.mozilla.firefox…); --pick lists them by name.",
        discussion: """
            A launcher of your own that is a link is refused (exit 4).
            --hours and --days gate it only then (outside them it opens at once);
            --budget lets it open N times (3/day) or run N minutes (60m/day) a
            day with the usual pause, then the pause grows (never a lock-out);
            --remind-after 20m: an alert after 20 min in it (Exit / Keep going).
            'chime gate edit' changes them later.
            Examples:
              chime gate add firefox-esr --hours 09:00-17:00 --days mon-fri
              chime gate add --pick
            More: man chime (chime gate add)
            """
    )
    @Argument(help: ArgumentHelp("The program's desktop entry id.", valueName: "id"), completion: Completion.gateable) var id: String?
    @Flag(help: "List the installed programs by name to choose one.")
    var pick = false
    @OptionGroup var rule: GateRuleOptions
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        // Bad values stop here, before anything is written.
        let checked = try rule.change().applied(to: GateRule(programID: ""))
        // A new gate starts from these options alone (no rule left from an earlier gate).
        let context = try GateContext(global, rule.isEmpty ? .update : .create)
        let overrides = try GateContext.overrides()
        var chosen = id
        if pick {
            guard isatty(STDIN_FILENO) == 1 else {
                throw ChimeError(.usage, "--pick needs a terminal to choose on: name the id instead (chime gate add ID)")
            }
            let gated: Set<DesktopFileID>
            do {
                gated = Set(try overrides.list().map(\.id))
            } catch {
                throw GateContext.chimeError(error)
            }
            let programs = overrides.pickable(gated: gated)
            guard !programs.isEmpty else {
                throw ChimeError(
                    .notFound,
                    gated.isEmpty
                        ? "no installed program to gate: no desktop entry found under the XDG data directories' applications/"
                        : "every installed program is gated already: see 'chime gate list'"
                )
            }
            Output.line("Programs you can gate (\(gated.isEmpty ? "none gated yet" : "\(gated.count) already gated, not listed")):")
            let digits = String(programs.count).count
            for (number, program) in programs.enumerated() {
                Output.line("  " + DisplayWidth.leftPadded(String(number + 1), to: digits) + ". " + program.label)
            }
            chosen = try GateSetup.ask(
                "Gate which program? Type its number, 1 to \(programs.count)",
                default: "",
                interrupted: "no program chosen: nothing was gated"
            ) { text throws(ChimeError) in
                guard let number = Int(text), programs.indices.contains(number - 1) else {
                    throw ChimeError.invalid("choice", text, expected: "a number from 1 to \(programs.count), as listed above")
                }
                return programs[number - 1].id.rawValue
            }
        }
        guard let chosen else { throw ChimeError(.usage, "missing the program's desktop entry id: chime gate add ID, or --pick") }
        let made: LauncherOverride
        do {
            made = try overrides.gate(try GateContext.desktopID(chosen), chime: GateContext.executable())
        } catch {
            throw GateContext.chimeError(error)
        }
        var saved = checked
        saved.programID = made.id.rawValue
        try context.book.save(saved)
        emit(Gated(program: GatedProgramJSON(made, rule: saved)), json: global.json)
    }

    struct Gated: Report {
        var program: GatedProgramJSON
        var lines: [String] {
            ["Gated \(program.id): its launcher now opens a pause first (\(program.path))."] + GateEdit.ruleLines(program)
        }
    }
}

struct GateEdit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "edit",
        abstract:
            "Change when a gated program is gated (--hours, --days, --always), its budgets (--budget, --no-budget) and reminder (--remind-after).",
        discussion: """
            Options not given keep their values. Past the budget, each open's pause
            is half the usual one longer than the last, up to 3 times the usual one;
            past a minutes budget, half longer per started 10 minutes over.
            Examples:
              chime gate add firefox-esr
              chime gate edit firefox-esr --budget 3/day --hours 22:00-06:00
              chime gate edit firefox-esr --budget 60m/day --remind-after 20m
              chime gate edit firefox-esr --always --no-budget --no-remind
            More: man chime (chime gate edit)
            """
    )
    @Argument(help: ArgumentHelp("The program's desktop entry id.", valueName: "id"), completion: Completion.gated) var id: String
    @OptionGroup var rule: GateRuleOptions
    @Flag(help: "Gate at all hours on every day (clears --hours and --days).") var always = false
    @Flag(help: "No budget (of opens nor of minutes): every open gets the usual pause.") var noBudget = false
    @Flag(help: "No reminder in use.") var noRemind = false
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        if always, rule.hours != nil || rule.days != nil {
            throw ChimeError(.usage, "--always and --hours/--days: choose one")
        }
        if noBudget, !rule.budget.isEmpty { throw ChimeError(.usage, "--budget and --no-budget: choose one") }
        if noRemind, rule.remindAfter != nil { throw ChimeError(.usage, "--remind-after and --no-remind: choose one") }
        guard !rule.isEmpty || always || noBudget || noRemind else {
            throw ChimeError(
                .usage,
                "nothing to change: give --hours, --days, --always, --budget, --no-budget, --remind-after or --no-remind"
            )
        }
        var change = try rule.change()
        if always { (change.hours, change.days) = (.some(nil), .some(nil)) }
        if noBudget { (change.budget, change.minutesBudget) = (.some(nil), .some(nil)) }
        if noRemind { change.remindAfter = .some(nil) }
        let desktopID = try GateContext.desktopID(id)
        let overrides = try GateContext.overrides()
        // Not gated: refused before the store is opened.
        do {
            guard try overrides.list().contains(where: { $0.id == desktopID }) else {
                throw ChimeError(.notFound, "'\(desktopID)' is not gated: 'chime gate add \(id)' gates it")
            }
        } catch {
            throw GateContext.chimeError(error)
        }
        let context = try GateContext(global, .create)
        // The use case the app's Gateway form saves through.
        let (gated, changed) = try context.book.edit(desktopID, change, overrides: overrides)
        emit(Edited(program: GatedProgramJSON(gated, rule: changed)), json: global.json)
    }

    /// "Gated 09:00-17:00 mon-fri; outside them it opens at once." and "Budget: 3 opens a day…".
    static func ruleLines(_ program: GatedProgramJSON) -> [String] {
        var lines: [String] = []
        if program.schedule != "always" { lines.append("Gated \(program.schedule); outside them it opens at once.") }
        if let budget = program.budgetPerDay {
            lines.append("Budget: \(budget) open\(budget == 1 ? "" : "s") a day with the usual pause; past it the pause grows.")
        }
        if let minutes = program.budgetMinutesPerDay {
            lines.append("Budget: \(minutes) min a day with the usual pause; past it the pause grows.")
        }
        if let remind = program.remindAfterMin {
            lines.append("Reminder: after \(remind) min in it, an alert (Exit / Keep going); it closes nothing.")
        }
        return lines
    }

    struct Edited: Report {
        var program: GatedProgramJSON
        var lines: [String] {
            var lines = GateEdit.ruleLines(program)
            if program.schedule == "always" { lines.insert("\(program.id) is gated at all times.", at: 0) }
            if program.budgetPerDay == nil, program.budgetMinutesPerDay == nil {
                lines.append("No budget: every open gets the usual pause.")
            }
            return lines
        }
    }
}

struct GateList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "The gated programs, with what needs doing.",
        discussion: """
            More: man chime (chime gate list)
            """
    )
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let rules = try GateContext(global, .read).book.rules()
        let programs = try GateContext.overrides().list().map { GatedProgramJSON($0, rule: rules[$0.id.rawValue]) }
        emit(Programs(programs: programs), json: global.json)
    }

    struct Programs: Report {
        var programs: [GatedProgramJSON]
        var lines: [String] { programs.isEmpty ? ["No program is gated."] : programs.map(\.line) }
    }
}

struct GateRemove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Un-gate a program: its launcher entry is put back exactly as it was.",
        discussion: """
            More: man chime (chime gate remove)
            """
    )
    @Argument(help: ArgumentHelp("The program's desktop entry id.", valueName: "id"), completion: Completion.gated) var id: String
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let desktopID = try GateContext.desktopID(id)
        do {
            try GateContext.overrides().remove(desktopID)
        } catch {
            throw GateContext.chimeError(error)
        }
        try? GateContext(global, .update).book.removeRule(programID: desktopID.rawValue)
        emit(Removed(removed: [desktopID.rawValue]), json: global.json)
    }

    struct Removed: Report {
        var removed: [String]
        var lines: [String] { removed.isEmpty ? ["No program was gated."] : removed.map { "Un-gated \($0): its launcher is as it was." } }
    }
}

struct GateOff: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "off",
        abstract: "Remove every launcher override Chime wrote.",
        discussion: """
            More: man chime (chime gate off)
            """
    )
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let report: LauncherOverrides.OffReport
        do {
            report = try GateContext.overrides().off()
        } catch {
            throw GateContext.chimeError(error)
        }
        if let book = try? GateContext(global, .update).book {
            for id in report.removed { try? book.removeRule(programID: id.rawValue) }
        }
        emit(Off(removed: report.removed.map(\.rawValue), refused: report.refused.keys.map(\.rawValue).sorted()), json: global.json)
        if let (id, error) = report.refused.sorted(by: { $0.key < $1.key }).first {
            throw ChimeError(
                error.code,
                "\(id.rawValue): \(error.message)" + (report.refused.count > 1 ? " (and \(report.refused.count - 1) more)" : "")
            )
        }
    }

    /// The ids un-gated and those left gated (each refusal's error follows, on standard error).
    struct Off: Report {
        var removed: [String]
        var refused: [String]
        var lines: [String] {
            removed.isEmpty && refused.isEmpty ? ["No program was gated."] : removed.map { "Un-gated \($0): its launcher is as it was." }
        }
    }
}

struct GateDoctor: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract:
            "Check the gateway: every gated launcher (refreshing those that need it), the window, the quotes, launches that were not gated.",
        discussion: """
            Exit status 1 when something needs doing; each line says what.
            More: man chime (chime gate doctor)
            """
    )
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let overrides = try GateContext.overrides()
        let programs: [GatedProgramJSON]
        do {
            programs = try overrides.repair(chime: GateContext.executable()).map { GatedProgramJSON($0) }
        } catch {
            throw GateContext.chimeError(error)
        }
        let executable = GateContext.executable()
        let helper = GateWindowProcess.helperPath(executable: executable)
        let environment = ProcessInfo.processInfo.environment
        var quotes = 0
        var quoteProblem: String?
        do {
            quotes = try QuoteLibrary.load(from: QuoteLibrary.directories(environment: environment, executable: executable)).all.count
            if quotes == 0 { quoteProblem = "no quote files found (scripts/quickstart installs Resources/quotes)" }
        } catch {
            quoteProblem = error.message
        }
        let events = try GateContext(global, .read).book.events()
        let notGated = events.compactMap { event -> (Date, String)? in
            if case .notGated(let reason) = event.outcome, !reason.hasPrefix("grace") { return (event.at, reason) }
            return nil
        }
        let report = Checkup(
            programs: programs,
            window: access(helper, X_OK) == 0 ? helper : nil,
            quotes: quotes,
            quoteProblem: quoteProblem,
            notGated: notGated.count,
            lastNotGated: notGated.last?.1
        )
        emit(report, json: global.json)
        if programs.contains(where: { $0.status != "ok" }) || report.window == nil || quoteProblem != nil { throw ExitCode(1) }
    }

    struct Checkup: Report {
        var programs: [GatedProgramJSON]
        @Nullable var window: String?
        var quotes: Int
        @Nullable var quoteProblem: String?
        var notGated: Int
        @Nullable var lastNotGated: String?
        enum CodingKeys: String, CodingKey {
            case programs, window, quotes
            case quoteProblem = "quote_problem"
            case notGated = "not_gated"
            case lastNotGated = "last_not_gated"
        }

        var lines: [String] {
            var lines = programs.isEmpty ? ["Gated programs: none ('chime gate add ID')."] : ["Gated programs:"] + programs.map(\.line)
            lines.append(
                "Gate window:    " + (window ?? "missing: install chime-gate-window (scripts/quickstart); a terminal gate shows meanwhile")
            )
            lines.append("Quotes:         " + (quoteProblem ?? "\(quotes) loaded"))
            lines.append(
                "Not gated:      "
                    + (notGated == 0
                        ? "every launch showed a gate (or was in the grace)"
                        : "\(notGated) launch\(notGated == 1 ? "" : "es") started without a gate; the last because: \(lastNotGated ?? "")")
            )
            return lines
        }
    }
}

struct GateOpen: AsyncParsableCommand, RunsWithBadConfig {
    static let configuration = CommandConfiguration(
        commandName: "open",
        abstract: "What a gated launcher runs: the pause, then (on Proceed) the program, with its arguments.",
        discussion: """
            chime stays as the program's parent until it exits, to count its
            minutes: signals sent to chime go on to it; chime exits as it did.
              chime gate open firefox-esr.desktop -- firefox-esr https://example.org
            More: man chime (chime gate open)
            """
    )
    @Argument(help: ArgumentHelp("The program's desktop entry id.", valueName: "id"), completion: Completion.gated) var id: String
    @Option(help: ArgumentHelp("The desktop action the launcher ran (new-window…).", valueName: "name")) var action: String?
    @Flag(help: "Show the gate in a window (the default with a display).") var window = false
    @Flag(help: "Show the gate in this terminal.") var terminal = false
    @Flag(inversion: .prefixedNo, help: "With no focus session running, Exit starts one.")
    var focusOnExit: Bool?
    @Argument(parsing: .postTerminator, help: ArgumentHelp("The program's command line, after --.", valueName: "command"))
    var command: [String] = []
    @OptionGroup var global: GlobalOptions

    enum Surface {
        case automatic, window, terminal
        init(window: Bool, terminal: Bool) throws(ChimeError) {
            switch (window, terminal) {
            case (true, true): throw ChimeError(.usage, "--window and --terminal: choose one")
            case (true, false): self = .window
            case (false, true): self = .terminal
            case (false, false): self = .automatic
            }
        }
    }

    func run() async throws {
        guard !command.isEmpty else {
            throw ChimeError(.usage, "missing the program's command line after --: chime gate open ID -- PROGRAM [ARGUMENTS…]")
        }
        let desktopID = try GateContext.desktopID(id)
        let overrides = try? GateContext.overrides()
        let entry = overrides?.find(desktopID).flatMap { location in
            FileManager.default.contents(atPath: location.path).flatMap { try? DesktopEntry(data: $0, path: location.path) }
        }
        let name = entry?.value("Name", locale: Locale.current.identifier) ?? entry?.value("Name") ?? desktopID.rawValue
        try await Self.launch(
            programID: desktopID.rawValue,
            name: name,
            argv: command,
            surface: try Surface(window: window, terminal: terminal),
            focusOnExit: focusOnExit,
            global: global
        )
    }

    /// Shows the gate and starts the program when it should. Never locks a person out: when no
    /// gate can be shown, or the store cannot be used, the program starts and the reason is
    /// said (and recorded when the store can be used).
    static func launch(
        programID: String,
        name: String,
        argv: [String],
        surface: Surface,
        focusOnExit: Bool?,
        global: GlobalOptions
    ) async throws {
        let context: GateContext
        do {
            context = try GateContext(global, .create)
        } catch {
            Output.note("chime: \(error.message): starting \(name) without a gate")
            try start(argv)
        }
        // A bad config file never keeps a program from starting: it starts, and the event says why.
        do {
            _ = try Settings.current()
        } catch {
            let reason = "bad config file: \(error.message)"
            try? context.book.record([GateEvent(programID: programID, at: Date(), pauseSeconds: 0, outcome: .notGated(reason: reason))])
            Output.note("chime: \(error.message): starting \(name) without a gate")
            try watch(argv, programID: programID, name: name, context: context)
        }
        let environment = ProcessInfo.processInfo.environment
        let executable = GateContext.executable()
        var quotes = QuoteLibrary()
        do {
            quotes = try QuoteLibrary.load(from: QuoteLibrary.directories(environment: environment, executable: executable))
        } catch {
            Output.note("chime: \(error.message): the gate shows no quote")
        }
        let timer = FocusTimer(store: context.store, breaks: Settings.ifValid?.focusBreaks ?? FocusBreaks())
        var focusEndsAt: Date?
        if case .open(let session) = try timer.current(), session.state == .active {
            focusEndsAt = (try? context.store.reminder(id: session.reminderID))?.nextDue
        }
        let launch = GateLaunch(
            programID: programID,
            name: name,
            book: context.book,
            quotes: quotes,
            focusEndsAt: focusEndsAt,
            lockDirectory: GateLock.directory(environment: environment)
        )
        var surfaces: [(GateScreen) throws -> any GateSurface] = []
        let display = !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
        if surface == .automatic && !display {
            surfaces.append { _ in throw ChimeError(.failure, "no display (DISPLAY and WAYLAND_DISPLAY are unset)") }
        }
        if surface == .window || (surface == .automatic && display) {
            // With CHIME_LOG_LEVEL=debug: how long from chime's start to the gate drawn (the
            // benchmark reads it).
            let report: (@Sendable () -> Void)? =
                environment["CHIME_LOG_LEVEL"] == "debug"
                ? { @Sendable in
                    Output.note(String(format: "chime: gate drawn %.0f ms after chime started", (ProcessStat.age() ?? 0) * 1000))
                }
                : nil
            surfaces.append { screen in
                try GateWindowProcess.open(
                    helper: GateWindowProcess.helperPath(executable: executable),
                    screen: screen,
                    onFirstFrame: report
                )
            }
        }
        if surface == .terminal || surface == .automatic {
            surfaces.append { _ in try TerminalGateSurface() }
        }
        let decision = try await launch.run(surfaces: surfaces)
        // The runner runs the hooks of Exit and Proceed (the `[hooks]` table): it looks now.
        _ = RunnerControl.poke(storePath: context.store.path)
        switch decision {
        case .start(let reason):
            if let reason { Output.note("chime: \(name) starts without a gate: \(reason)") }
            try watch(argv, programID: programID, name: name, context: context)
        case .stay(let outcome):
            let profile = try context.book.profile()
            if outcome == .exit, focusOnExit ?? profile.focusOnExit, focusEndsAt == nil {
                let minutes = Settings.ifValid.map { Int($0.seconds(.focusLength) / 60) } ?? FocusTimer.defaultMinutes
                let session = try timer.start(minutes: minutes)
                _ = RunnerControl.poke(storePath: context.store.path)
                Output.note("Exited: \(name) did not start. Focus session #\(session.id) started: \(minutes) minutes.")
            } else {
                Output.note(outcome == .exit ? "Exited: \(name) did not start." : "The gate was closed: \(name) did not start.")
            }
        case .alreadyOpen(let pid):
            Output.note("A gate for \(name) is already open (process \(pid)): it was raised; its Proceed opens \(name).")
        }
    }

    /// Starts the program and stays as its watching parent (``WatchingParent``): records the
    /// run's start and end (``GateBook/startRun(programID:name:pid:remindAfter:)``), so its
    /// minutes count, with the reminder in use its rule asks for; then ends as the program
    /// ended. When the run cannot be recorded (the store cannot be written), the program runs
    /// all the same, unmeasured. Returns only when it cannot be started.
    static func watch(_ argv: [String], programID: String, name: String, context: GateContext) throws(ChimeError) -> Never {
        let remindAfter = (try? context.book.rule(programID: programID))?.remindAfter
        let pid = try WatchingParent.start(argv)
        let run: GateRun?
        do {
            run = try context.book.startRun(programID: programID, name: name, pid: pid, remindAfter: remindAfter)
        } catch {
            Output.note("chime: \(error.message): \(name)'s minutes are not counted this time")
            run = nil
        }
        // The runner schedules the reminder in use now.
        if run?.remindAfter != nil { _ = RunnerControl.poke(storePath: context.store.path) }
        let ending = WatchingParent.wait(pid)
        if let run {
            do {
                try context.book.endRun(id: run.id)
            } catch {
                Output.note("chime: \(error.message): the end of \(name)'s run was not recorded")
            }
            // Its reminder in use was cancelled: the runner looks again.
            if run.remindAfter != nil { _ = RunnerControl.poke(storePath: context.store.path) }
        }
        WatchingParent.exit(as: ending)
    }

    /// Replaces this process with the program (its arguments, this environment: the launcher's
    /// activation token included), when the store cannot be opened (no run can be recorded).
    /// Returns only when it cannot be started.
    static func start(_ argv: [String]) throws(ChimeError) -> Never {
        let arguments = argv.map { strdup($0) } + [nil]
        // The program gets the signals a launcher would give it: chime's blocked and ignored
        // ones stay so across exec (the window's pipe had SIGPIPE ignored; chime blocks SIGTERM).
        ExecSignals.reset()
        execvp(argv[0], arguments)
        let reason = String(cString: strerror(errno))
        throw ChimeError(.notFound, "cannot start '\(argv[0])': \(reason); check the launcher's command line")
    }
}

struct GateStatsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract:
            "Proof It's Working: hours reclaimed, conscious exits, average pause, intentionality, a 30-day trend; per program: opens, minutes, budgets kept.",
        discussion: """
            Intentionality: exits / (exits + proceeds), from 0 to 1. Minutes: how long each
            program ran after 'chime gate open' started it (it stays as the program's parent).
            More: man chime (chime gate stats)
            """
    )
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let context = try GateContext(global, .read)
        emit(
            Proof(
                stats: try context.book.stats(zone: .current),
                today: try context.book.today(zone: .current),
                programs: try context.book.programStats(zone: .current)
            ),
            json: global.json
        )
    }

    struct Proof: Report {
        var stats: GateStats
        /// Each program's opens today against its budget.
        var today: [GateToday]
        /// Each program's opens, minutes and budgets kept over the trend.
        var programs: [GateProgramStats]

        func encode(to encoder: any Encoder) throws {
            struct Day: Encodable {
                var date: String
                var exits, proceeds, deepens, closed, notGated: Int
                enum CodingKeys: String, CodingKey {
                    case date, exits, proceeds, deepens, closed
                    case notGated = "not_gated"
                }
            }
            struct Today: Encodable {
                var program: String
                var opens: Int
                @Nullable var budgetPerDay: Int?
                var minutes: Int
                @Nullable var budgetMinutesPerDay: Int?
                var outsideSchedule: Int
                enum CodingKeys: String, CodingKey {
                    case program, opens, minutes
                    case budgetPerDay = "budget_per_day"
                    case budgetMinutesPerDay = "budget_minutes_per_day"
                    case outsideSchedule = "outside_schedule"
                }
            }
            struct ProgramDay: Encodable {
                var date: String
                var opens: Int
                var minutes: Int
            }
            struct Program: Encodable {
                var program: String
                var opens: Int
                var minutes: Int
                @Nullable var budgetPerDay: Int?
                @Nullable var budgetMinutesPerDay: Int?
                var daysWithBudget: Int
                var daysWithinBudget: Int
                var trend: [ProgramDay]
                enum CodingKeys: String, CodingKey {
                    case program, opens, minutes, trend
                    case budgetPerDay = "budget_per_day"
                    case budgetMinutesPerDay = "budget_minutes_per_day"
                    case daysWithBudget = "days_with_budget"
                    case daysWithinBudget = "days_within_budget"
                }
            }
            struct Document: Encodable {
                var header: String
                var hoursReclaimed: Double
                var consciousExits: Int
                var proceeds: Int
                @Nullable var averagePauseS: Double?
                @Nullable var intentionalityScore: Double?
                var streak: StreakJSON
                var trend: [Day]
                var today: [Today]
                var programs: [Program]
                enum CodingKeys: String, CodingKey {
                    case header, proceeds, streak, trend, today, programs
                    case hoursReclaimed = "hours_reclaimed"
                    case consciousExits = "conscious_exits"
                    case averagePauseS = "average_pause_s"
                    case intentionalityScore = "intentionality_score"
                }
            }
            try Document(
                header: GateStats.header,
                hoursReclaimed: stats.hoursReclaimed,
                consciousExits: stats.consciousExits,
                proceeds: stats.proceeds,
                averagePauseS: stats.averagePauseSeconds,
                intentionalityScore: stats.intentionalityScore,
                streak: StreakJSON(stats.streak),
                trend: stats.trend.map {
                    Day(
                        date: $0.date,
                        exits: $0.exits,
                        proceeds: $0.proceeds,
                        deepens: $0.deepens,
                        closed: $0.closed,
                        notGated: $0.notGated
                    )
                },
                today: today.map {
                    Today(
                        program: $0.programID,
                        opens: $0.opens,
                        budgetPerDay: $0.budget?.opensPerDay,
                        minutes: Int($0.used / 60),
                        budgetMinutesPerDay: $0.minutesBudget?.minutesPerDay,
                        outsideSchedule: $0.outsideSchedule
                    )
                },
                programs: programs.map { program in
                    Program(
                        program: program.programID,
                        opens: program.opens,
                        minutes: program.minutes,
                        budgetPerDay: program.budget?.opensPerDay,
                        budgetMinutesPerDay: program.minutesBudget?.minutesPerDay,
                        daysWithBudget: program.daysWithBudget,
                        daysWithinBudget: program.daysWithinBudget,
                        trend: program.trend.map { ProgramDay(date: $0.date, opens: $0.opens, minutes: Int($0.seconds / 60)) }
                    )
                }
            ).encode(to: encoder)
        }

        var lines: [String] {
            var lines = [GateStats.header, ""]
            lines += stats.summaryRows.map { ($0.label + ":").padding(toLength: 23, withPad: " ", startingAt: 0) + $0.value }
            lines.append("")
            lines.append("Last 30 days (exits ▇, proceeds ░):")
            let peak = max(stats.trend.map { max($0.exits, $0.proceeds) }.max() ?? 0, 1)
            if stats.trend.allSatisfy({ $0.exits + $0.proceeds == 0 }) { lines.append("  (no exits or proceeds yet)") }
            for day in stats.trend where day.exits + day.proceeds > 0 {
                let exits = String(repeating: "▇", count: (day.exits * 20 + peak - 1) / peak)
                let proceeds = String(repeating: "░", count: (day.proceeds * 20 + peak - 1) / peak)
                lines.append("  \(day.date)  \(exits)\(proceeds)  \(day.exits)/\(day.proceeds)")
            }
            if !today.isEmpty {
                lines.append("")
                lines.append("Today:")
                lines += today.map { "  \($0.programID)  \($0.line)" }
            }
            if !programs.isEmpty {
                lines.append("")
                lines.append("Per program, last 30 days:")
                lines += programs.map { "  \($0.programID)  \($0.line)" }
            }
            return lines
        }
    }
}
