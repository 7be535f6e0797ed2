import ArgumentParser
import ChimeApp
import ChimeCore
import ChimeFocus
import ChimeStore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The terminal's size: stdout's window when it is a terminal, else $COLUMNS and $LINES, else 80×24.
enum TerminalSize {
    static func current() -> (columns: Int, rows: Int) {
        var size = winsize()
        if isatty(STDOUT_FILENO) == 1, ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 {
            return (Int(size.ws_col), Int(size.ws_row))
        }
        let environment = ProcessInfo.processInfo.environment
        return (environment["COLUMNS"].flatMap(Int.init) ?? 80, environment["LINES"].flatMap(Int.init) ?? 24)
    }
}

/// How a tree appears in `--json` output.
/// One tree of the forest: its `--json` form (also each element of `forest --json`), and the
/// tree drawn with its times for `forest show`.
struct TreeJSON: Report {
    /// The tree's number in the forest (1: the first planted), as the grid labels it.
    var number: Int
    /// The focus session's id (its alert was focus-ID).
    var id: Int64
    var started: String
    var completed: String
    var focusSeconds: Int64
    var pausedSeconds: Int64
    /// The session's label; absent without one.
    var label: String?
    private var session: FocusSession

    enum CodingKeys: String, CodingKey {
        case number, id, started, completed, label
        case focusSeconds = "focus_s"
        case pausedSeconds = "paused_s"
    }

    init(_ session: FocusSession, number: Int) {
        self.number = number
        id = session.id
        started = TimeText.iso(session.startedAt)
        completed = TimeText.iso(session.endedAt!)
        focusSeconds = session.focusMicros / 1_000_000
        pausedSeconds = session.pausedMicros / 1_000_000
        label = session.label
        self.session = session
    }

    var lines: [String] {
        let zone = TimeZone.current
        var lines = TreeArt.lines(stage: TreeStage.grown).map { "    " + $0 }
        lines.append(FocusText.treeTitle(session, number: number))
        lines += FocusText.treeDetail(session, zone: zone).map {
            "  " + $0.label.padding(toLength: 12, withPad: " ", startingAt: 0) + $0.value
        }
        return lines
    }
}

struct ForestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "forest",
        abstract: "Your forest: each completed focus session as a tree.",
        discussion: """
            Examples:
              chime forest
              chime forest --label thesis
              chime forest --json
            More: man chime (chime forest)
            """,
        subcommands: [ForestGrid.self, ForestShow.self],
        defaultSubcommand: ForestGrid.self
    )
}

struct ForestGrid: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "grid",
        abstract: "Draw the forest as a grid that fits the terminal (the default).",
        discussion: """
            Shows the newest trees that fit one screen unless --all or --limit; --json
            lists every tree. With --label, only the trees of sessions with that label
            (matched exactly), each keeping its number in the whole forest.
            More: man chime (chime forest)
            """
    )
    @Flag(help: "Draw every tree.") var all = false
    @Option(parsing: .unconditional, help: ArgumentHelp("Draw (or list) at most this many trees.", valueName: "count"))
    var limit: Int?
    @Option(parsing: .unconditional, help: ArgumentHelp("Only the trees of sessions with this label (thesis).", valueName: "text"))
    var label: String?
    @OptionGroup var global: GlobalOptions

    func validate() throws {
        if let limit, limit < 1 {
            throw ValidationError(ChimeError.invalid("limit", String(limit), expected: "a number from 1 up").message)
        }
    }

    func run() async throws {
        let label = try FocusLabel.validate(label)
        let store = try global.openStore(.read)
        try FocusTimer(store: store, breaks: Settings.ifValid?.focusBreaks ?? FocusBreaks()).settle()
        let forest = Forest(store: store)
        let count = try forest.treeCount(label: label)
        let (columns, rows) = TerminalSize.current()
        if global.json {
            if let label {
                Self.writeJSON(count: count, numbered: try forest.trees(label: label, limit: limit))
            } else {
                Self.writeJSON(count: count, trees: try forest.trees(limit: limit))
            }
            return
        }
        guard count > 0 else {
            if let label {
                Output.line("No tree has the label '\(label)'" + (try Self.knownLabels(forest)))
                return
            }
            Output.line(FocusText.emptyForestTitle)
            Output.line(FocusText.emptyForestMessage + ": chime focus start")
            return
        }
        let perRow = max(1, columns / (TreeArt.width + 2))
        // One screen: each row of trees takes the art, two label lines and a blank one.
        let screenful = max(1, (rows - 3) / (TreeArt.height + 3)) * perRow
        let shown = all ? count : min(count, limit ?? screenful)
        var text = ""
        let drawn: Int
        if let label {
            let numbered = try forest.trees(label: label, limit: shown)
            drawn = numbered.count
            Output.line(FocusText.forestHeading(count: count, label: label))
            Output.line("")
            let grid = FocusText.grid(numbered.map(\.tree), numbers: numbered.map(\.number), width: columns, zone: .current)
            for line in grid { text += line + "\n" }
        } else {
            let trees = try forest.trees(limit: shown)
            drawn = trees.count
            Output.line(FocusText.forestHeading(count: count))
            Output.line("")
            for line in FocusText.grid(trees, newest: count, width: columns, zone: .current) { text += line + "\n" }
        }
        FileHandle.standardOutput.write(Data(text.utf8))
        if drawn < count {
            Output.line("The newest \(drawn) of \(count): 'chime forest --all' draws them all; 'chime forest show N' tree #N.")
        } else {
            Output.line("'chime forest show N' shows tree #N.")
        }
    }

    /// `: the labels are thesis, email` (the labels that have trees, or with `trees` false, ended
    /// sessions), or `: no tree has a label` (`no session`).
    static func knownLabels(_ forest: Forest, trees: Bool = true) throws(ChimeError) -> String {
        let labels = try forest.labelTotals().filter { !trees || $0.trees > 0 }.compactMap(\.label)
        return labels.isEmpty
            ? ": no \(trees ? "tree" : "ended session") has a label" : ": the labels are " + labels.joined(separator: ", ")
    }
}

extension ForestGrid {
    /// `{"count":N,"trees":[…]}` with each tree as ``TreeJSON`` encodes it (keys sorted, as
    /// every `--json` output), written by hand rather than through JSONEncoder: the fields are
    /// numbers and ISO instants (nothing to escape), and JSONEncoder took 300 ms of the 430 ms
    /// that listing 85,000 trees took (`chime-bench focus`).
    static func writeJSON(count: Int, trees: [FocusSession]) {
        writeJSON(count: count, numbered: trees.enumerated().map { (number: count - $0.offset, tree: $0.element) })
    }

    /// As above, each tree with its number (a forest filtered by label).
    static func writeJSON(count: Int, numbered trees: [(number: Int, tree: FocusSession)]) {
        var text = "{\"count\":\(count),\"trees\":["
        text.reserveCapacity(40 + trees.count * 120)
        for (index, (number, tree)) in trees.enumerated() {
            if index > 0 { text += "," }
            let json = TreeJSON(tree, number: number)
            text += "{\"completed\":\"\(json.completed)\",\"focus_s\":\(json.focusSeconds),\"id\":\(json.id),"
            if let label = json.label { text += "\"label\":\(jsonString(label))," }
            text += "\"number\":\(json.number),\"paused_s\":\(json.pausedSeconds),\"started\":\"\(json.started)\"}"
        }
        text += "]}\n"
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    /// `text` as a JSON string, quoted and escaped.
    static func jsonString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

struct ForestShow: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "One tree: when it was completed, its focus time, when it was started.",
        discussion: """
            Trees are numbered in the order they were planted: #1 is the first.
            More: man chime (chime forest show)
            """
    )
    @Argument(help: ArgumentHelp("The tree's number in the forest (as the forest labels it: 3 or #3).", valueName: "number"))
    var number: String
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let digits = number.hasPrefix("#") ? String(number.dropFirst()) : number
        guard let wanted = Int(digits), wanted > 0 else {
            throw ChimeError.invalid("tree number", number, expected: "a number such as 3 (see 'chime forest')")
        }
        let store = try global.openStore(.read)
        try FocusTimer(store: store, breaks: Settings.ifValid?.focusBreaks ?? FocusBreaks()).settle()
        let forest = Forest(store: store)
        let tree = try forest.requireTree(number: wanted)
        emit(TreeJSON(tree, number: wanted), json: global.json)
    }
}

struct Stats: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Focus stats: trees, focus time, streaks, completion.",
        discussion: """
            A streak counts consecutive local days with a completed session. Completion
            rate: completed / (completed + abandoned). Breaks: taken (ran to their end)
            and skipped. By label: each label's sessions, focus time (of completed
            sessions) and abandoned ones; --label counts that label's sessions only
            (and the breaks after them).
            Examples:
              chime stats --json
              chime stats --label thesis
            More: man chime (chime stats)
            """
    )
    @Option(parsing: .unconditional, help: ArgumentHelp("Only the sessions with this label (thesis).", valueName: "text"))
    var label: String?
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let label = try FocusLabel.validate(label)
        let store = try global.openStore(.read)
        let timer = FocusTimer(store: store, breaks: Settings.ifValid?.focusBreaks ?? FocusBreaks())
        try timer.settle()
        let zone = TimeZone.current
        let now = Date()
        let forest = Forest(store: store)
        let (stats, days) = try forest.stats(now: now, zone: zone, label: label)
        var localDays = LocalDays(zone: zone)
        let today = localDays.number(of: now)
        let labels = try forest.labelTotals(label: label)
        if let label, labels.isEmpty {
            Output.note("chime: no ended session has the label '\(label)'" + (try ForestGrid.knownLabels(forest, trees: false)))
        }
        emit(
            Summary(stats, days: days, today: today, breaks: try timer.breakCounts(label: label), label: label, labels: labels),
            json: global.json
        )
    }

    /// The focus stats and the trees per day of the last 30 days.
    struct Summary: Report {
        struct Day: Encodable {
            var date: String
            var trees: Int
            var focusSeconds: Int64
            enum CodingKeys: String, CodingKey {
                case date, trees
                case focusSeconds = "focus_s"
            }
        }
        var totalTrees: Int
        var totalFocusSeconds: Int64
        var totalFocus: String
        var totalSessions: Int
        var todaysTrees: Int
        var todaysFocusSeconds: Int64
        var currentStreak: Int
        var longestStreak: Int
        var abandoned: Int
        var completionRate: Double
        /// Breaks that ran to their end, and breaks ended early (the forest counts sessions only).
        var breaksTaken: Int
        var breaksSkipped: Int
        var last30Days: [Day]
        /// The label the stats are of (`--label`); absent for all sessions.
        var label: String?
        /// The ended sessions per label (see ``LabelTotals``), the unlabelled ones as `"label": null`.
        var labels: [LabelJSON]
        private var stats: ForestStats
        private var days: [Int: DayTotals]
        private var today: Int

        enum CodingKeys: String, CodingKey {
            case abandoned
            case totalTrees = "total_trees"
            case totalFocusSeconds = "total_focus_s"
            case totalFocus = "total_focus"
            case totalSessions = "total_sessions"
            case todaysTrees = "todays_trees"
            case todaysFocusSeconds = "todays_focus_s"
            case currentStreak = "current_streak"
            case longestStreak = "longest_streak"
            case completionRate = "completion_rate"
            case last30Days = "last_30_days"
            case breaksTaken = "breaks_taken"
            case breaksSkipped = "breaks_skipped"
            case label, labels
        }

        /// One label's line of the breakdown.
        struct LabelJSON: Encodable {
            var label: String?
            var sessions: Int
            var trees: Int
            var abandoned: Int
            var focusSeconds: Int64
            enum CodingKeys: String, CodingKey {
                case label, sessions, trees, abandoned
                case focusSeconds = "focus_s"
            }
            init(_ totals: LabelTotals) {
                label = totals.label
                sessions = totals.sessions
                trees = totals.trees
                abandoned = totals.abandoned
                focusSeconds = totals.focusMicros / 1_000_000
            }
            /// `label` is written as null for the sessions without one.
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(label, forKey: .label)
                try container.encode(sessions, forKey: .sessions)
                try container.encode(trees, forKey: .trees)
                try container.encode(abandoned, forKey: .abandoned)
                try container.encode(focusSeconds, forKey: .focusSeconds)
            }
        }

        init(
            _ stats: ForestStats,
            days: [Int: DayTotals],
            today: Int,
            breaks: BreakCounts,
            label: String? = nil,
            labels: [LabelTotals] = []
        ) {
            self.label = label
            self.labels = labels.map(LabelJSON.init)
            breaksTaken = breaks.taken
            breaksSkipped = breaks.skipped
            totalTrees = stats.totalTrees
            totalFocusSeconds = stats.totalFocusMicros / 1_000_000
            totalFocus = stats.formattedTotalFocusTime
            totalSessions = stats.totalSessions
            todaysTrees = stats.todaysTrees
            todaysFocusSeconds = stats.todaysFocusMicros / 1_000_000
            currentStreak = stats.currentStreak
            longestStreak = stats.longestStreak
            abandoned = stats.abandonedCount
            completionRate = (stats.completionRate * 10).rounded() / 10
            last30Days = ForestStats.lastDays(days, today: today).map {
                Day(date: $0.date, trees: $0.trees, focusSeconds: $0.focusMicros / 1_000_000)
            }
            self.stats = stats
            self.days = days
            self.today = today
        }

        var lines: [String] {
            (label.map { ["Label: \($0)", ""] } ?? [])
                + (stats.summaryRows + [(label: "Breaks", value: "\(breaksTaken) taken, \(breaksSkipped) skipped")])
                .map { $0.label.padding(toLength: 17, withPad: " ", startingAt: 0) + $0.value }
                + byLabel
                + ["", "Trees per day, last 30 days"] + FocusText.chart(days: days, today: today)
        }

        /// The breakdown by label, as a table; nothing while no session has a label.
        private var byLabel: [String] {
            guard labels.contains(where: { $0.label != nil }) else { return [] }
            let names = labels.map { $0.label ?? "(no label)" }
            let width = max(names.map(\.count).max() ?? 0, "By label".count) + 2
            func row(_ name: String, _ cells: [String]) -> String {
                name.padding(toLength: width, withPad: " ", startingAt: 0)
                    + cells.map { String(repeating: " ", count: max(0, 10 - $0.count)) + $0 }.joined()
            }
            return ["", row("By label", ["Sessions", "Focus", "Abandoned"])]
                + zip(names, labels).map { name, totals in
                    row(name, ["\(totals.sessions)", ForestStats.formatFocus(totals.focusSeconds * 1_000_000), "\(totals.abandoned)"])
                }
        }
    }
}
