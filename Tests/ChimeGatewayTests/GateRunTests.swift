import ChimeCore
import ChimeGateway
import ChimeStore
import ChimeTesting
import Foundation
import GRDB
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A gated program's runs (what the watching parent of `chime gate open` records), on an
/// injected clock: the minutes of a day, the minutes budget and its growing pause, the reminder
/// in use with Exit and Keep going, a watcher killed before the end, and the stats per program.
@Suite(.serialized) struct GateRunTests {
    static let zone = TimeZone(identifier: "Europe/Paris")!
    static let program = "firefox.desktop"

    /// The instant the wall clock in Paris reads this in November 2026 (the 23rd is a Monday).
    static func at(_ day: Int, _ hour: Int, _ minute: Int = 0) -> Date {
        ZoneMath.resolve(CivilDateTime(year: 2026, month: 11, day: day, hour: hour, minute: minute), in: zone).instant
    }

    final class Given: Sendable {
        let directory: URL
        let path: String
        let clock = ManualWallClock(now: GateRunTests.at(23, 10))
        let store: ReminderStore
        let book: GateBook
        let ticker = ManualTicker()

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("chime-run-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            path = directory.appendingPathComponent("chime.sqlite").path
            store = try ReminderStore(path: path, schemas: [.gateway])
            book = GateBook(store: store, clock: clock)
        }

        deinit { try? FileManager.default.removeItem(at: directory) }

        func launch() -> GateLaunch {
            GateLaunch(
                programID: GateRunTests.program,
                name: "Firefox",
                book: book,
                quotes: QuoteLibrary(),
                clock: clock,
                ticker: ticker,
                lockDirectory: directory.appendingPathComponent("run").path,
                zone: GateRunTests.zone
            )
        }

        /// A run from now for `minutes` minutes (the clock ends at its end).
        @discardableResult
        func run(minutes: Double, remindAfter: Int? = nil) throws -> GateRun {
            let run = try book.startRun(programID: GateRunTests.program, name: "Firefox", pid: 4242, remindAfter: remindAfter)
            clock.advance(by: minutes * 60)
            try book.endRun(id: run.id)
            return run
        }

        func used() throws -> Double { try book.usedToday(programID: GateRunTests.program, zone: GateRunTests.zone) / 60 }
    }

    // MARK: Parsing

    @Test func aMinutesBudgetIsADurationPerDayAndABadOneSaysWhatIsAccepted() throws {
        #expect(try GateMinutesBudget.parse("60m/day").minutesPerDay == 60)
        #expect(try GateMinutesBudget.parse("1h/day").minutesPerDay == 60)
        #expect(try GateMinutesBudget.parse("90min/d").minutesPerDay == 90)
        #expect(try GateMinutesBudget.parse("1h30m").minutesPerDay == 90)
        for bad in ["0m/day", "25h/day", "30s/day", "60m/week", "m/day", ""] {
            #expect(throws: ChimeError.self) { try GateMinutesBudget.parse(bad) }
        }
        do {
            _ = try GateMinutesBudget.parse("60m/week")
        } catch {
            #expect(error.code == .usage)
            #expect(
                error.message == "invalid budget '60m/week': expected Nm/day or Nh/day, minutes per day from 1m to 24h, e.g. 60m/day"
            )
        }
        #expect(try GateRule.parseRemindAfter("20m") == 20)
        #expect(try GateRule.parseRemindAfter("1h") == 60)
        for bad in ["0m", "90s", "25h", "soon"] {
            #expect(throws: ChimeError.self) { try GateRule.parseRemindAfter(bad) }
        }
    }

    @Test func pastTheMinutesBudgetThePauseGrowsByHalfPerStartedTenMinutesUpToThreeTimes() throws {
        let budget = try GateMinutesBudget.parse("60m/day")
        let factors = [0, 60, 60.5, 62, 70, 71, 80, 81, 100, 500].map { budget.pauseFactor(used: $0 * 60) }
        #expect(factors == [1, 1, 1.5, 1.5, 1.5, 2, 2, 2.5, 3, 3])
        #expect(budget.line(used: 62 * 60 + 59) == "62 of 60 min today")
        #expect(budget.description == "60m/day")
    }

    // MARK: Minutes

    @Test func overlappingRunsCountOnceAndEachDayKeepsItsOwnPart() {
        func run(_ start: Date, _ end: Date?) -> GateRun {
            GateRun(id: 1, programID: "p", name: "P", pid: 1, start: start, end: end)
        }
        let dayStart = Self.at(23, 0)
        let dayEnd = Self.at(24, 0)
        let runs = [
            run(Self.at(23, 9), Self.at(23, 10)),
            // Another window from 9:30 to 10:15: the union is 9:00-10:15.
            run(Self.at(23, 9, 30), Self.at(23, 10, 15)),
            // Across midnight from the day before: 00:00-00:30 is this day's.
            run(Self.at(22, 23), Self.at(23, 0, 30)),
            // Unfinished: until now.
            run(Self.at(23, 20), nil),
        ]
        #expect(GateRun.seconds(of: runs, from: dayStart, to: dayEnd, now: Self.at(23, 20, 10)) == (75 + 30 + 10) * 60)
        // A clock set back before a run's start counts nothing for it.
        #expect(GateRun.seconds(of: [run(Self.at(23, 12), nil)], from: dayStart, to: dayEnd, now: Self.at(23, 11)) == 0)
        #expect(GateRun.seconds(of: [], from: dayStart, to: dayEnd, now: Self.at(23, 11)) == 0)
    }

    @Test func aProcessRunsUntilItIsGoneOrAZombie() {
        #expect(GateRun.isRunning(getpid()))
        #expect(!GateRun.isRunning(0) && !GateRun.isRunning(-1))
        var child: pid_t = 0
        var argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/true"), nil]
        defer { free(argv[0]) }
        #expect(posix_spawn(&child, "/bin/true", nil, nil, &argv, environ) == 0)
        // The child has exited and is not reaped yet: a zombie.
        var state = ""
        for _ in 0..<500 where state != "Z" {
            state =
                (try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8))?.split(separator: ")").last?
                .split(separator: " ").first.map(String.init) ?? ""
            if state != "Z" { usleep(2_000) }
        }
        #expect(state == "Z")
        #expect(!GateRun.isRunning(child))
        var status: Int32 = 0
        waitpid(child, &status, 0)
        #expect(!GateRun.isRunning(child))
    }

    @Test func aRunCountsFromItsStartToItsEndAndOneStillGoingUntilNow() throws {
        let given = try Given()
        try given.run(minutes: 30)
        #expect(try given.used() == 30)
        given.clock.advance(by: 600)
        let running = try given.book.startRun(programID: Self.program, name: "Firefox", pid: 7, remindAfter: nil) { _ in false }
        given.clock.advance(by: 15 * 60)
        #expect(try given.used() == 45)
        #expect(try given.book.run(id: running.id)?.end == nil)
        // The next local day starts at zero, however long the run goes on.
        given.clock.set(to: Self.at(24, 0, 5))
        #expect(try given.used() == 5)
    }

    @Test func aRunWhoseWatcherWasKilledCountsUntilTheProgramsNextRunClosesIt() throws {
        let given = try Given()
        // The watcher was killed: no end was ever written.
        let orphan = try given.book.startRun(programID: Self.program, name: "Firefox", pid: 7, remindAfter: 20) { _ in false }
        given.clock.advance(by: 50 * 60)
        #expect(try given.used() == 50)
        // A run that starts while its process still runs (another window) leaves it open.
        let other = try given.book.startRun(programID: Self.program, name: "Firefox", pid: 9, remindAfter: nil) { $0 == 7 }
        #expect(try given.book.run(id: orphan.id)?.end == nil)
        #expect(try given.store.reminder(id: orphan.reminderID).kind == GateBook.kind)
        try given.book.endRun(id: other.id)
        #expect(try given.used() == 50)
        // Once it is gone, the next run closes it at its own start, and cancels its reminder.
        let next = try given.book.startRun(programID: Self.program, name: "Firefox", pid: 8, remindAfter: nil) { _ in false }
        #expect(try given.book.run(id: orphan.id)?.end == given.clock.now())
        #expect(throws: ChimeError.self) { try given.store.reminder(id: orphan.reminderID) }
        given.clock.advance(by: 10 * 60)
        try given.book.endRun(id: next.id)
        given.clock.advance(by: 60 * 60)
        #expect(try given.used() == 60)
    }

    // MARK: The budget at the gate

    @Test func pastTheMinutesBudgetTheGateSaysHowMuchWasUsedAndThePauseGrows() async throws {
        let given = try Given()
        try given.book.save(GateRule(programID: Self.program, minutesBudget: GateMinutesBudget(minutesPerDay: 60)))
        try given.run(minutes: 62)
        given.clock.advance(by: 3_600)
        let surface = RecordingSurface()
        let launch = Task { try await given.launch().run(surfaces: [{ _ in surface }]) }
        let screen = await surface.drawn(1)
        #expect(screen.budget == "62 of 60 min today")
        #expect(screen.remaining == 45)
        #expect(TerminalGateSurface.lines(screen, columns: 80).contains("62 of 60 min today"))
        // Never a lock-out.
        given.clock.advance(by: 45)
        surface.send(.proceed)
        #expect(try await launch.value == .start(notGated: nil))
    }

    @Test func withBothBudgetsTheGateSaysBothAndThePauseGrowsByTheLarger() async throws {
        let given = try Given()
        try given.book.save(
            GateRule(programID: Self.program, budget: GateBudget(opensPerDay: 5), minutesBudget: GateMinutesBudget(minutesPerDay: 10))
        )
        try given.run(minutes: 31)
        let surface = RecordingSurface()
        let launch = Task { try await given.launch().run(surfaces: [{ _ in surface }]) }
        let screen = await surface.drawn(1)
        #expect(screen.budget == "1st open today, budget 5 · 31 of 10 min today")
        // 21 minutes over: three started steps of 10, 2.5 × 30 s.
        #expect(screen.remaining == 75)
        surface.send(.exit)
        #expect(try await launch.value == .stay(.exit))
    }

    @Test func rulesKeepTheMinutesBudgetAndTheReminder() throws {
        let given = try Given()
        let rule = GateRule(programID: Self.program, minutesBudget: GateMinutesBudget(minutesPerDay: 60), remindAfter: 20)
        try given.book.save(rule)
        #expect(try given.book.rule(programID: Self.program) == rule)
        #expect(rule.label == "budget 60m/day, reminder after 20 min")
        #expect(!rule.isDefault)
        try given.run(minutes: 61)
        #expect(
            try given.book.today(zone: Self.zone) == [
                GateToday(programID: Self.program, used: 61 * 60, minutesBudget: GateMinutesBudget(minutesPerDay: 60))
            ]
        )
        #expect(
            try given.book.today(zone: Self.zone).first?.line == "0 opens today; 61 of 60 min today (over: the pause grows)"
        )
    }

    // MARK: The reminder in use

    @Test func theReminderComesAfterNMinutesAndIsCancelledWhenTheProgramEnds() throws {
        let given = try Given()
        let run = try given.book.startRun(programID: Self.program, name: "Firefox", pid: 7, remindAfter: 20)
        let reminder = try given.store.reminder(id: run.reminderID)
        #expect(reminder.kind == GateBook.kind)
        #expect(reminder.title == "20 min in Firefox")
        #expect(reminder.nextDue == given.clock.now().addingTimeInterval(20 * 60))
        given.clock.advance(by: 5 * 60)
        try given.book.endRun(id: run.id)
        #expect(throws: ChimeError.self) { try given.store.reminder(id: run.reminderID) }
        // Without --remind-after, none.
        let quiet = try given.book.startRun(programID: Self.program, name: "Firefox", pid: 8, remindAfter: nil)
        #expect(throws: ChimeError.self) { try given.store.reminder(id: quiet.reminderID) }
    }

    @Test func keepGoingRemindsAgainAfterAnotherIntervalAndExitClosesNothing() throws {
        let given = try Given()
        let family = GateFamily(book: given.book)
        let run = try given.book.startRun(programID: Self.program, name: "Firefox", pid: 7, remindAfter: 20)
        // The reminder fired at 20 min; Keep going pressed at 21.
        given.clock.advance(by: 21 * 60)
        let kept = try family.answer(
            NoteResponse(noteID: run.reminderID, kind: .action(GateFamily.keepGoingAction)),
            at: given.clock.now()
        )
        #expect(kept.changed)
        #expect(kept.confirmation?.title == "Keep going: Firefox")
        #expect(kept.confirmation?.body == "Another reminder in 20 min.")
        let next = try given.store.reminder(id: run.reminderID)
        #expect(next.nextDue == given.clock.now().addingTimeInterval(20 * 60))
        #expect(next.title == "41 min in Firefox")
        // Exit: no more reminders; the alert asks the person to close it; the run goes on.
        given.clock.advance(by: 20 * 60)
        let exited = try family.answer(NoteResponse(noteID: run.reminderID, kind: .action(GateFamily.exitAction)), at: given.clock.now())
        #expect(exited.changed)
        #expect(exited.confirmation?.title == "Close Firefox when you are ready.")
        #expect(throws: ChimeError.self) { try given.store.reminder(id: run.reminderID) }
        #expect(try given.book.run(id: run.id)?.end == nil)
        // Keep going once the program has ended schedules nothing.
        try given.book.endRun(id: run.id)
        let late = try family.answer(
            NoteResponse(noteID: run.reminderID, kind: .action(GateFamily.keepGoingAction)),
            at: given.clock.now()
        )
        #expect(!late.changed)
        #expect(throws: ChimeError.self) { try given.store.reminder(id: run.reminderID) }
        // Another family's alert, or a close, changes nothing.
        #expect(try !family.answer(NoteResponse(noteID: "focus-1", kind: .action(GateFamily.exitAction)), at: given.clock.now()).changed)
        #expect(try !family.answer(NoteResponse(noteID: run.reminderID, kind: .closed(.dismissed)), at: given.clock.now()).changed)
    }

    // MARK: Stats per program

    @Test func statsPerProgramCountOpensMinutesAndBudgetsKept() throws {
        let given = try Given()
        // The budget set on Friday the 20th: Friday to Monday the 23rd are four days with a budget.
        given.clock.set(to: Self.at(20, 8))
        try given.book.save(
            GateRule(programID: Self.program, budget: GateBudget(opensPerDay: 1), minutesBudget: GateMinutesBudget(minutesPerDay: 30))
        )
        func open(_ day: Int, _ hour: Int, minutes: Double) throws {
            given.clock.set(to: Self.at(day, hour))
            try given.book.record([GateEvent(programID: Self.program, at: given.clock.now(), pauseSeconds: 30, outcome: .proceed)])
            try given.run(minutes: minutes)
        }
        try open(20, 9, minutes: 20)  // kept
        try open(21, 9, minutes: 40)  // over in minutes
        try open(22, 9, minutes: 10)
        try open(22, 12, minutes: 10)  // over in opens
        try open(23, 9, minutes: 25)  // kept (today, as it stands)
        try given.book.record([
            GateEvent(programID: "code", at: given.clock.now(), pauseSeconds: 0, outcome: .notGated(reason: "grace after Proceed"))
        ])
        let stats = try given.book.programStats(zone: Self.zone)
        #expect(stats.map(\.programID) == [Self.program])
        let firefox = try #require(stats.first)
        #expect(firefox.opens == 5)
        #expect(firefox.minutes == 105)
        #expect(firefox.daysWithBudget == 4)
        #expect(firefox.daysWithinBudget == 2)
        #expect(firefox.trend.count == GateStats.trendDays)
        #expect(firefox.trend.last?.date == "2026-11-23")
        #expect(firefox.trend.suffix(4).map { Int($0.seconds / 60) } == [20, 40, 20, 25])
        #expect(firefox.line == "5 opens, 105 min; budget 1/day and 30m/day kept 2 of 4 days")
    }
}
