import ChimeCore
import ChimeGateway
import Foundation
import Synchronization

/// What the gateway's hub shows (the seed's `HubViewModel` outputs).
public struct GateHubState: Sendable, Hashable {
    /// One gated program, with what needs doing when its gate is not right.
    public struct Program: Sendable, Hashable, Identifiable {
        /// The desktop entry id: `firefox`.
        public var id: String
        public var isOK: Bool
        /// `ok`, `original-changed`, … (as `chime gate list` says it).
        public var status: String
        /// What to do, for a gate that is not right; nil when it is.
        public var advice: String?
        /// A repair (``GateHubViewModel/repair(_:chime:)``) mends it.
        public var canRepair: Bool = false
        /// How it stands in a few words (`Opens with a pause first`; `Its gate is missing`), ``advice`` saying more.
        public var summary: String = ""
    }

    /// `Your Mindful Hub.`
    public var greeting: String
    /// Consecutive mindful days (the seed's `streakCount`).
    public var streakCount: Int
    public var showStreakBanner: Bool
    /// `3 mindful days in a row. Keep going.`; empty with no banner.
    public var streakMessage: String
    public var programs: [Program]
    /// `No program is gated yet` with none.
    public var emptyText: String?
    /// The pause and interests are not chosen yet: the seed's first-run experience.
    public var shouldShowFRE: Bool
    /// How the gateway is set up, as `chime gate` and `chime gate doctor` say it: Pause,
    /// Quotes (with the `chime` the gates run), Not gated.
    public var setupRows: [LabeledValue] = []
    /// Some gate needs writing again (what `chime gate doctor` mends: ``LauncherOverrides/mendable``).
    public var needsRepair: Bool = false
    /// What the last action did (`Gated firefox.desktop.`), for a toast; nil after a read.
    public var notice: String?
    public var error: ChimeError?
}

/// The gateway's hub (the seed's `HubViewModel`) over ``GateBook`` and ``LauncherOverrides``:
/// the greeting, the streak banner and the gated programs.
public final class GateHubViewModel: Sendable {
    public let book: GateBook
    public let overrides: LauncherOverrides
    public let zone: TimeZone
    /// The `chime` program the gates run (nil: the quotes are not checked).
    public let chime: String?
    /// Where the quotes are looked for (the process's environment in the app).
    public let environment: [String: String]
    private let current: Mutex<GateHubState>

    public init(
        book: GateBook,
        overrides: LauncherOverrides,
        zone: TimeZone = .current,
        chime: String? = nil,
        environment: [String: String] = [:]
    ) {
        self.book = book
        self.overrides = overrides
        self.zone = zone
        self.chime = chime
        self.environment = environment
        current = Mutex(
            GateHubState(
                greeting: GateHub.greeting,
                streakCount: 0,
                showStreakBanner: false,
                streakMessage: "",
                programs: [],
                emptyText: nil,
                shouldShowFRE: false,
                error: nil
            )
        )
        loadHubData()
    }

    public var state: GateHubState { current.withLock { $0 } }

    /// Reads the streak, the gated programs and whether the profile is set up (the seed's
    /// `loadHubData`, on appearing and after a gate's event).
    @discardableResult
    public func loadHubData() -> GateHubState {
        do {
            let streak = try book.stats(zone: zone).streak
            let profile = try book.profile()
            let listed: [LauncherOverride]
            do {
                listed = try overrides.list()
            } catch {
                throw error as? ChimeError ?? ChimeError(.failure, "\(error)")
            }
            let rules = try book.rules()
            let programs = listed.map {
                GateHubState.Program(
                    id: $0.id.rawValue,
                    isOK: $0.status == .ok,
                    status: $0.status.rawValue,
                    advice: $0.status == .ok ? nil : $0.advice,
                    canRepair: LauncherOverrides.mendable.contains($0.status),
                    summary: Self.summary($0.status) + (rules[$0.id.rawValue]?.label.map { " · " + $0 } ?? "")
                )
            }
            let setupRows = try setup(profile: profile)
            let needsRepair = listed.contains { LauncherOverrides.mendable.contains($0.status) }
            current.withLock { state in
                state.setupRows = setupRows
                state.needsRepair = needsRepair
                state.notice = nil
                state.streakCount = streak.count
                state.showStreakBanner = streak.showsBanner
                state.streakMessage = streak.message
                state.programs = programs
                state.emptyText = programs.isEmpty ? GateHub.noPrograms : nil
                state.shouldShowFRE = !profile.isSetUp
                state.error = nil
            }
        } catch let error as ChimeError {
            current.withLock { $0.error = error }
        } catch {
            current.withLock { $0.error = ChimeError(.failure, "\(error)") }
        }
        return state
    }

    /// The setup rows: the pause (the profile's, or the default until `chime gate setup`), the
    /// quotes found (as `chime gate doctor` counts them), the launches that showed no gate.
    private func setup(profile: GateProfile) throws(ChimeError) -> [LabeledValue] {
        let pause = "\(Int(profile.pauseLength)) s"
        var rows = [
            LabeledValue(
                "Pause",
                profile.isSetUp
                    ? "\(pause), determination \(profile.determination) of 10"
                    : "\(pause), the default: choose your pause and interests with 'chime gate setup'"
            )
        ]
        if let chime {
            do {
                let count = try QuoteLibrary.load(from: QuoteLibrary.directories(environment: environment, executable: chime)).all.count
                rows.append(
                    LabeledValue(
                        "Quotes",
                        count == 0 ? "no quote files found (scripts/quickstart installs Resources/quotes)" : "\(count) loaded"
                    )
                )
            } catch {
                rows.append(LabeledValue("Quotes", error.message))
            }
        }
        let notGated = try book.events().compactMap { event -> String? in
            if case .notGated(let reason) = event.outcome, !reason.hasPrefix("grace") { return reason }
            return nil
        }
        rows.append(
            LabeledValue(
                "Not gated",
                notGated.isEmpty
                    ? "every launch showed a gate (or was in the grace)"
                    : "\(notGated.count) launch\(notGated.count == 1 ? "" : "es") started without a gate; the last because: \(notGated.last ?? "")"
            )
        )
        return rows
    }

    /// A gate's status in a few words, for a row's subtitle.
    public static func summary(_ status: LauncherOverride.Status) -> String {
        switch status {
        case .ok: "Opens with a pause first"
        case .originalChanged: "Its launcher entry changed (an update?)"
        case .originalGone: "Its launcher entry is gone (uninstalled?)"
        case .overrideEdited: "Its gate was edited by hand"
        case .overrideMissing: "Its gate is missing: it opens without a pause"
        case .chimeMissing: "The chime its gate runs is missing"
        case .unfinished: "A change to its gate was cut short"
        }
    }

    /// Gates the program of desktop entry `id` (`firefox.desktop`) with `chime`, as `chime gate add ID` does.
    @discardableResult
    public func add(_ id: String, chime: String) -> GateHubState {
        act { () throws(ChimeError) in
            let desktopID = try Self.desktopID(id)
            let made = try Self.chimeErrors { try self.overrides.gate(desktopID, chime: chime) }
            return "Gated \(made.id): its launcher now opens a pause first."
        }
    }

    /// Un-gates `id`, as `chime gate remove ID` does: its launcher entry is put back as it was.
    @discardableResult
    public func remove(_ id: String) -> GateHubState {
        act { () throws(ChimeError) in
            let desktopID = try Self.desktopID(id)
            try Self.chimeErrors { try self.overrides.remove(desktopID) }
            // Its schedule and budget go with it, as with `chime gate remove`.
            try? self.book.removeRule(programID: desktopID.rawValue)
            return "Un-gated \(desktopID): its launcher is as it was."
        }
    }

    /// Writes `id`'s gate again from its original as it is now, running `chime` (what a refresh
    /// mends: ``LauncherOverrides/mendable``).
    @discardableResult
    public func repair(_ id: String, chime: String) -> GateHubState {
        act { () throws(ChimeError) in
            let desktopID = try Self.desktopID(id)
            let made = try Self.chimeErrors { try self.overrides.refresh(desktopID, chime: chime) }
            return "Repaired the gate of \(made.id): its launcher opens a pause first."
        }
    }

    /// Writes again the gates that need it (as `chime gate doctor` does), running `chime`.
    @discardableResult
    public func repair(chime: String) -> GateHubState {
        act { () throws(ChimeError) in
            let repaired = try Self.chimeErrors { try self.overrides.repair(chime: chime) }
            let left = repaired.filter { $0.status != .ok }.count
            return left == 0
                ? "Every gate is in place." : "\(left) gate\(left == 1 ? "" : "s") still need\(left == 1 ? "s" : "") you: see its advice."
        }
    }

    /// Runs `change`, reads everything again, and keeps the change's notice or error.
    func act(_ change: () throws(ChimeError) -> String) -> GateHubState {
        let outcome: Result<String, ChimeError>
        do {
            outcome = .success(try change())
        } catch {
            outcome = .failure(error)
        }
        loadHubData()
        current.withLock { state in
            switch outcome {
            case .success(let notice): state.notice = notice
            case .failure(let error): state.error = error
            }
        }
        return state
    }

    private static func desktopID(_ text: String) throws(ChimeError) -> DesktopFileID {
        try chimeErrors { try DesktopFileID(text) }
    }

    private static func chimeErrors<T>(_ body: () throws -> T) throws(ChimeError) -> T {
        do {
            return try body()
        } catch {
            throw error as? ChimeError ?? ChimeError(.failure, "\(error)")
        }
    }

    /// The `chime` beside the app's executable `window` (`chime-gate-window`): in the same
    /// directory (a build), or `bin/chime` for one installed in `libexec/chime/` (the inverse
    /// of ``GateWindowProcess/helperPath(executable:)``).
    public static func chimePath(window: String) -> String {
        let directory = (window as NSString).deletingLastPathComponent
        if directory.hasSuffix("/libexec/chime") {
            let prefix = ((directory as NSString).deletingLastPathComponent as NSString).deletingLastPathComponent
            return prefix + "/bin/chime"
        }
        return directory + "/chime"
    }
}

/// A program the app's chooser offers: an installed application a launcher shows.
public struct GateProgramChoice: Sendable, Hashable, Identifiable {
    /// The desktop entry id: `firefox.desktop`.
    public var id: String
    /// Its name as launchers show it.
    public var name: String

    public init(id: String, name: String) {
        (self.id, self.name) = (id, name)
    }

    /// The programs to offer: `installed` but those `gated`, those whose name or id contains
    /// every word of `query` (any case), by name then id.
    public static func offered(_ installed: [GateProgramChoice], gated: Set<String>, query: String) -> [GateProgramChoice] {
        let words = query.lowercased().split(whereSeparator: \.isWhitespace).map(String.init)
        return installed.filter { choice in
            guard !gated.contains(choice.id) else { return false }
            let text = (choice.name + " " + choice.id).lowercased()
            return words.allSatisfy { text.contains($0) }
        }
        .sorted { ($0.name.lowercased(), $0.id) < ($1.name.lowercased(), $1.id) }
    }
}

/// What the gateway's statistics show (the seed's `StatisticsViewModel` outputs).
public struct GateStatsState: Sendable, Hashable {
    /// `Proof It's Working.`
    public var headerTitle: String
    public var hoursReclaimed: Double
    public var totalConsciousExits: Int
    /// Seconds; nil while no gate has ended.
    public var averagePauseTime: TimeInterval?
    /// 0 to 1; nil with neither exits nor proceeds.
    public var intentionalityScore: Double?
    /// As `chime gate stats` prints them: Hours reclaimed, Conscious exits, Average pause,
    /// Intentionality score (and Streak while one runs).
    public var rows: [LabeledValue]
    /// The last 30 local days, oldest first.
    public var dailyTrends: [GateDay]
    /// Each program over those days, as `chime gate stats` lists them: its id, and "5 opens,
    /// 105 min; budget 1/day and 30m/day kept 2 of 4 days".
    public var programs: [LabeledValue] = []
    /// The trend's days again (oldest first): the minutes run in gated programs, all together
    /// and by program (``GateProgramStats/trend``), for the minutes chart.
    public var minutesTrend: [GateMinutesDay] = []
    public var error: ChimeError?

    /// The minutes chart's tallest bar: the most minutes in a day (at least 1).
    public var minutesPeak: Int { max(minutesTrend.map(\.minutes).max() ?? 0, 1) }

    /// The minutes chart's figures in words (its accessible description): each day with
    /// minutes, `2026-01-05: 45 min (firefox.desktop 30, org.gnome.Chess.desktop 15)`, or that
    /// there were none.
    public var minutesDescription: String {
        let days = minutesTrend.filter { $0.minutes > 0 }
        guard !days.isEmpty else { return "Last \(minutesTrend.count) days: no minutes in gated programs yet." }
        let listed = days.map { day in
            "\(day.date): \(day.minutes) min"
                + (day.programs.count > 1 ? " (" + day.programs.map { "\($0.programID) \($0.minutes)" }.joined(separator: ", ") + ")" : "")
                + (day.programs.count == 1 ? " (\(day.programs[0].programID))" : "")
        }
        let quiet = minutesTrend.count - days.count
        return "Last \(minutesTrend.count) days, minutes in gated programs: " + listed.joined(separator: "; ")
            + (quiet == 0 ? "." : "; none on the other \(quiet) day\(quiet == 1 ? "" : "s").")
    }

    /// The chart's tallest bar: the most exits or proceeds in a day (at least 1).
    public var trendPeak: Int { max(dailyTrends.map { max($0.exits, $0.proceeds) }.max() ?? 0, 1) }

    /// The chart's figures in words (its accessible description): each day with exits or
    /// proceeds, `2026-01-05: 3 exits, 1 proceed`, or that there were none.
    public var trendDescription: String {
        let days = dailyTrends.filter { $0.exits + $0.proceeds > 0 }
        guard !days.isEmpty else { return "Last \(dailyTrends.count) days: no exits or proceeds yet." }
        func count(_ n: Int, _ word: String) -> String { "\(n) \(word)\(n == 1 ? "" : "s")" }
        let listed = days.map { "\($0.date): \(count($0.exits, "exit")), \(count($0.proceeds, "proceed"))" }
        let quiet = dailyTrends.count - days.count
        return "Last \(dailyTrends.count) days, exits and proceeds: " + listed.joined(separator: "; ")
            + (quiet == 0 ? "." : "; none on the other \(count(quiet, "day")).")
    }
}

/// One day of the minutes chart: the whole minutes run in gated programs, and by program.
public struct GateMinutesDay: Sendable, Hashable {
    public struct Program: Sendable, Hashable {
        public var programID: String
        public var minutes: Int

        public init(programID: String, minutes: Int) {
            (self.programID, self.minutes) = (programID, minutes)
        }
    }

    /// "2026-03-08".
    public var date: String
    /// The day's running time of every program together, in whole minutes.
    public var minutes: Int
    /// Each program that ran that day (a whole minute or more), by id.
    public var programs: [Program]

    public init(date: String, minutes: Int, programs: [Program] = []) {
        (self.date, self.minutes, self.programs) = (date, minutes, programs)
    }

    /// The days `dates` (the trend's), each with `programs`' minutes that day.
    public static func trend(of programs: [GateProgramStats], dates: [String]) -> [GateMinutesDay] {
        var seconds: [String: [String: TimeInterval]] = [:]
        for program in programs {
            for day in program.trend where day.seconds > 0 { seconds[day.date, default: [:]][program.programID] = day.seconds }
        }
        return dates.map { date in
            let byProgram = seconds[date] ?? [:]
            return GateMinutesDay(
                date: date,
                minutes: Int(byProgram.values.reduce(0, +) / 60),
                programs: byProgram.map { Program(programID: $0.key, minutes: Int($0.value / 60)) }
                    .filter { $0.minutes > 0 }.sorted { $0.programID < $1.programID }
            )
        }
    }
}

/// The gateway's statistics (the seed's `StatisticsViewModel`) over ``GateBook/stats(zone:)``.
public final class GateStatsViewModel: Sendable {
    public let book: GateBook
    public let zone: TimeZone
    private let current: Mutex<GateStatsState>

    public init(book: GateBook, zone: TimeZone = .current) {
        self.book = book
        self.zone = zone
        current = Mutex(
            GateStatsState(
                headerTitle: GateStats.header,
                hoursReclaimed: 0,
                totalConsciousExits: 0,
                averagePauseTime: nil,
                intentionalityScore: nil,
                rows: [],
                dailyTrends: [],
                error: nil
            )
        )
        loadStatistics()
    }

    public var state: GateStatsState { current.withLock { $0 } }

    /// Reads the statistics again at the book's clock's now (the seed's `loadStatistics`,
    /// `refreshStatistics`).
    @discardableResult
    public func loadStatistics() -> GateStatsState {
        do {
            let stats = try book.stats(zone: zone)
            let programs = try book.programStats(zone: zone)
            current.withLock { state in
                state.hoursReclaimed = stats.hoursReclaimed
                state.totalConsciousExits = stats.consciousExits
                state.averagePauseTime = stats.averagePauseSeconds
                state.intentionalityScore = stats.intentionalityScore
                state.rows = [LabeledValue](stats.summaryRows)
                state.dailyTrends = stats.trend
                state.programs = programs.map { LabeledValue($0.programID, $0.line) }
                state.minutesTrend = GateMinutesDay.trend(of: programs, dates: stats.trend.map(\.date))
                state.error = nil
            }
        } catch {
            current.withLock { $0.error = error }
        }
        return state
    }
}
