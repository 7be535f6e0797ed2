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
    private var session: FocusSession

    enum CodingKeys: String, CodingKey {
        case number, id, started, completed
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
            lists every tree.
            More: man chime (chime forest)
            """
    )
    @Flag(help: "Draw every tree.") var all = false
    @Option(parsing: .unconditional, help: ArgumentHelp("Draw (or list) at most this many trees.", valueName: "count"))
    var limit: Int?
    @OptionGroup var global: GlobalOptions

    func validate() throws {
        if let limit, limit < 1 {
            throw ValidationError(ChimeError.invalid("limit", String(limit), expected: "a number from 1 up").message)
        }
    }

    func run() async throws {
        let store = try global.openStore(.read)
        try FocusTimer(store: store, breaks: Settings.ifValid?.focusBreaks ?? FocusBreaks()).settle()
        let forest = Forest(store: store)
        let count = try forest.treeCount()
        let (columns, rows) = TerminalSize.current()
        if global.json {
            Self.writeJSON(count: count, trees: try forest.trees(limit: limit))
            return
        }
        guard count > 0 else {
            Output.line(FocusText.emptyForestTitle)
            Output.line(FocusText.emptyForestMessage + ": chime focus start")
            return
        }
        let perRow = max(1, columns / (TreeArt.width + 2))
        // One screen: each row of trees takes the art, two label lines and a blank one.
        let screenful = max(1, (rows - 3) / (TreeArt.height + 3)) * perRow
        let shown = all ? count : min(count, limit ?? screenful)
        let trees = try forest.trees(limit: shown)
        Output.line(FocusText.forestHeading(count: count))
        Output.line("")
        var text = ""
        for line in FocusText.grid(trees, newest: count, width: columns, zone: .current) { text += line + "\n" }
        FileHandle.standardOutput.write(Data(text.utf8))
        if trees.count < count {
            Output.line("The newest \(trees.count) of \(count): 'chime forest --all' draws them all; 'chime forest show N' tree #N.")
        } else {
            Output.line("'chime forest show N' shows tree #N.")
        }
    }
}

extension ForestGrid {
    /// `{"count":N,"trees":[…]}` with each tree as ``TreeJSON`` encodes it (keys sorted, as
    /// every `--json` output), written by hand rather than through JSONEncoder: the fields are
    /// numbers and ISO instants (nothing to escape), and JSONEncoder took 300 ms of the 430 ms
    /// that listing 85,000 trees took (`chime-bench focus`).
    static func writeJSON(count: Int, trees: [FocusSession]) {
        var text = "{\"count\":\(count),\"trees\":["
        text.reserveCapacity(40 + trees.count * 120)
        for (index, tree) in trees.enumerated() {
            if index > 0 { text += "," }
            let json = TreeJSON(tree, number: count - index)
            text += "{\"completed\":\"\(json.completed)\",\"focus_s\":\(json.focusSeconds),\"id\":\(json.id),"
            text += "\"number\":\(json.number),\"paused_s\":\(json.pausedSeconds),\"started\":\"\(json.started)\"}"
        }
        text += "]}\n"
        FileHandle.standardOutput.write(Data(text.utf8))
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
            rate: completed / (completed + abandoned).
            Examples:
              chime stats --json
            More: man chime (chime stats)
            """
    )
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let store = try global.openStore(.read)
        let timer = FocusTimer(store: store, breaks: Settings.ifValid?.focusBreaks ?? FocusBreaks())
        try timer.settle()
        let zone = TimeZone.current
        let now = Date()
        let (stats, days) = try Forest(store: store).stats(now: now, zone: zone)
        var localDays = LocalDays(zone: zone)
        let today = localDays.number(of: now)
        emit(Summary(stats, days: days, today: today, breaks: try timer.breakCounts()), json: global.json)
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
        }

        init(_ stats: ForestStats, days: [Int: DayTotals], today: Int, breaks: BreakCounts) {
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
            (stats.summaryRows + [(label: "Breaks", value: "\(breaksTaken) taken, \(breaksSkipped) skipped")])
                .map { $0.label.padding(toLength: 17, withPad: " ", startingAt: 0) + $0.value }
                + ["", "Trees per day, last 30 days"] + FocusText.chart(days: days, today: today)
        }
    }
}
