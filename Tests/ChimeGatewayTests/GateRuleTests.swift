import ChimeCore
import ChimeGateway
import ChimeStore
import ChimeTesting
import Foundation
import GRDB
import Testing

/// A gate's schedule (hours and days, local time) and its budget of opens per day, on an
/// injected clock: when the gate applies, how opens are counted per local day, how the pause
/// grows past the budget, and what a launch outside the schedule records.
@Suite(.serialized) struct GateRuleTests {
    static let zone = TimeZone(identifier: "Europe/Paris")!

    /// The instant the wall clock in Paris reads this (2026-11-23 is a Monday).
    static func at(_ day: Int, _ hour: Int, _ minute: Int = 0, month: Int = 11) -> Date {
        ZoneMath.resolve(CivilDateTime(year: 2026, month: month, day: day, hour: hour, minute: minute), in: zone).instant
    }

    static let monday = 23, friday = 27, saturday = 28

    static let office = GateRule(
        programID: "firefox.desktop",
        hours: try! GateHours.parse("09:00-17:00"),
        days: .weekdays
    )

    final class Given: Sendable {
        let directory: URL
        let path: String
        let clock = ManualWallClock(now: GateRuleTests.at(GateRuleTests.monday, 10))
        let book: GateBook
        let ticker = ManualTicker()

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("chime-rule-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            path = directory.appendingPathComponent("chime.sqlite").path
            book = GateBook(store: try ReminderStore(path: path, schemas: [.gateway]), clock: clock)
        }

        deinit { try? FileManager.default.removeItem(at: directory) }

        func launch() -> GateLaunch {
            GateLaunch(
                programID: "firefox.desktop",
                name: "Firefox",
                book: book,
                quotes: QuoteLibrary(),
                clock: clock,
                ticker: ticker,
                lockDirectory: directory.appendingPathComponent("run").path,
                zone: GateRuleTests.zone
            )
        }

        func event(_ outcome: GateEvent.Outcome, at date: Date) throws {
            try book.record([GateEvent(programID: "firefox.desktop", at: date, pauseSeconds: 0, outcome: outcome)])
        }
    }

    // MARK: Parsing

    @Test func hoursAreTwoTimesOfDayAndABadValueSaysWhatIsAccepted() throws {
        #expect(try GateHours.parse("09:00-17:00").description == "09:00-17:00")
        #expect(try GateHours.parse("9am-5pm").description == "09:00-17:00")
        #expect(try GateHours.parse("22:00-06:00").crossesMidnight)
        for bad in ["9-5", "09:00", "09:00-09:00", "25:00-26:00", "09:00-17:00-18:00", ""] {
            #expect(throws: ChimeError.self) { try GateHours.parse(bad) }
        }
        do {
            _ = try GateHours.parse("9-5")
        } catch {
            #expect(error.code == .usage)
            #expect(error.message.hasPrefix("invalid hours '9-5': expected HH:MM-HH:MM, e.g. 09:00-17:00"))
        }
    }

    @Test func daysAreReadAsMedAddReadsThem() throws {
        #expect(try WeekdaySet.spoken("mon-fri") == .weekdays)
        #expect(try WeekdaySet.spoken("every day") == .everyDay)
        #expect(try WeekdaySet.spoken("sat,sun") == .weekend)
        #expect(throws: ChimeError.self) { try WeekdaySet.spoken("someday") }
    }

    @Test func aBudgetIsOpensPerDay() throws {
        #expect(try GateBudget.parse("3/day").opensPerDay == 3)
        #expect(try GateBudget.parse("12").opensPerDay == 12)
        for bad in ["0/day", "3/week", "-1/day", "x", "", "1001/day"] {
            #expect(throws: ChimeError.self) { try GateBudget.parse(bad) }
        }
        do {
            _ = try GateBudget.parse("3/week")
        } catch {
            #expect(error.message == "invalid budget '3/week': expected N/day, opens per day from 1 to 1000, e.g. 3/day")
        }
    }

    // MARK: The schedule

    @Test func officeHoursApplyOnWeekdaysFromTheStartUpToTheEnd() {
        let rule = Self.office
        #expect(!rule.applies(at: Self.at(Self.monday, 8, 59), zone: Self.zone))
        #expect(rule.applies(at: Self.at(Self.monday, 9), zone: Self.zone))
        #expect(rule.applies(at: Self.at(Self.friday, 16, 59), zone: Self.zone))
        #expect(!rule.applies(at: Self.at(Self.friday, 17), zone: Self.zone))
        #expect(!rule.applies(at: Self.at(Self.saturday, 10), zone: Self.zone))
        #expect(rule.schedule == "09:00-17:00 mon-fri")
        #expect(rule.outsideReason == "outside its hours (09:00-17:00 mon-fri)")
        // The same instant in another zone is another local time.
        #expect(!rule.applies(at: Self.at(Self.monday, 9), zone: TimeZone(identifier: "America/New_York")!))
    }

    @Test func hoursAcrossMidnightBelongToTheDayTheyStartOn() throws {
        let night = GateRule(programID: "p", hours: try GateHours.parse("22:00-06:00"), days: [.friday])
        #expect(night.applies(at: Self.at(Self.friday, 22), zone: Self.zone))
        #expect(night.applies(at: Self.at(Self.friday, 23, 30), zone: Self.zone))
        #expect(night.applies(at: Self.at(Self.saturday, 2), zone: Self.zone))
        #expect(!night.applies(at: Self.at(Self.saturday, 6), zone: Self.zone))
        #expect(!night.applies(at: Self.at(Self.saturday, 22, 30), zone: Self.zone))
        // Friday's small hours belong to Thursday's night.
        #expect(!night.applies(at: Self.at(Self.friday, 2), zone: Self.zone))
        #expect(!night.applies(at: Self.at(Self.friday, 12), zone: Self.zone))
        let everyNight = GateRule(programID: "p", hours: try GateHours.parse("22:00-06:00"))
        #expect(everyNight.applies(at: Self.at(Self.monday, 5, 59), zone: Self.zone))
        #expect(!everyNight.applies(at: Self.at(Self.monday, 12), zone: Self.zone))
        #expect(everyNight.schedule == "22:00-06:00")
    }

    @Test func daysAloneApplyAllDayAndNoScheduleAppliesAlways() {
        let weekend = GateRule(programID: "p", days: .weekend)
        #expect(weekend.applies(at: Self.at(Self.saturday, 0), zone: Self.zone))
        #expect(!weekend.applies(at: Self.at(Self.friday, 23, 59), zone: Self.zone))
        #expect(weekend.schedule == "sat,sun")
        #expect(weekend.outsideReason == "outside its days (sat,sun)")
        let always = GateRule(programID: "p")
        #expect(always.isAlways && always.schedule == "always")
        #expect(always.applies(at: Self.at(Self.saturday, 3), zone: Self.zone))
    }

    // MARK: The budget

    @Test func pastTheBudgetThePauseGrowsByHalfPerOpenUpToThreeTimes() throws {
        let budget = try GateBudget.parse("3/day")
        #expect((1...10).map { budget.pauseFactor(open: $0) } == [1, 1, 1, 1.5, 2, 2.5, 3, 3, 3, 3])
        #expect(budget.line(open: 4) == "4th open today, budget 3")
        #expect(
            [1, 2, 3, 11, 12, 13, 21, 22, 103].map { GateBudget.ordinal($0) } == [
                "1st", "2nd", "3rd", "11th", "12th", "13th", "21st", "22nd", "103rd",
            ]
        )
    }

    @Test func opensAreCountedPerLocalDayProceedsAndLaunchesWithoutAGate() throws {
        let given = try Given()
        // Sunday 23:30 in Paris (22:30 UTC): yesterday.
        try given.event(.proceed, at: Self.at(22, 23, 30))
        try given.event(.proceed, at: Self.at(Self.monday, 0, 10))
        try given.event(.notGated(reason: "outside its hours (09:00-17:00 mon-fri)"), at: Self.at(Self.monday, 7))
        try given.event(.notGated(reason: "grace after Proceed (5m left)"), at: Self.at(Self.monday, 7, 5))
        try given.event(.exit, at: Self.at(Self.monday, 8))
        try given.event(.closed, at: Self.at(Self.monday, 8, 30))
        #expect(try given.book.opensToday(programID: "firefox.desktop", zone: Self.zone) == 2)
        // Under UTC the Monday 00:10 Paris open (Sunday 23:10 UTC) is Sunday's.
        #expect(try given.book.opensToday(programID: "firefox.desktop", zone: TimeZone(identifier: "UTC")!) == 1)
        // The next local day starts at zero.
        given.clock.set(to: Self.at(24, 0, 0))
        #expect(try given.book.opensToday(programID: "firefox.desktop", zone: Self.zone) == 0)
    }

    @Test func rulesAreSavedReadAndForgotten() throws {
        let given = try Given()
        #expect(try given.book.rule(programID: "firefox.desktop") == GateRule(programID: "firefox.desktop"))
        var rule = Self.office
        rule.budget = GateBudget(opensPerDay: 3)
        try given.book.save(rule)
        #expect(try given.book.rule(programID: "firefox.desktop") == rule)
        #expect(try given.book.rules() == ["firefox.desktop": rule])
        let today = try given.book.today(zone: Self.zone)
        #expect(today == [GateToday(programID: "firefox.desktop", budget: GateBudget(opensPerDay: 3))])
        // A rule that says nothing is not kept.
        try given.book.save(GateRule(programID: "firefox.desktop"))
        #expect(try given.book.rules().isEmpty)
        try given.book.save(rule)
        try given.book.removeRule(programID: "firefox.desktop")
        #expect(try given.book.rules().isEmpty)
    }

    // MARK: A launch

    @Test func outsideItsHoursTheProgramOpensAtOnceAndTheLaunchIsRecorded() async throws {
        let given = try Given()
        try given.book.save(Self.office)
        given.clock.set(to: Self.at(Self.saturday, 10))
        let decision = try await given.launch().run(surfaces: [
            { _ in
                Issue.record("no gate outside its hours")
                return RecordingSurface()
            }
        ])
        #expect(decision == .start(notGated: "outside its hours (09:00-17:00 mon-fri)"))
        #expect(try given.book.events().map(\.outcome) == [.notGated(reason: "outside its hours (09:00-17:00 mon-fri)")])
        #expect(try given.book.today(zone: Self.zone) == [GateToday(programID: "firefox.desktop", opens: 1, outsideSchedule: 1)])
    }

    @Test func insideItsHoursTheGatePausesAndPastTheBudgetThePauseGrows() async throws {
        let given = try Given()
        var rule = Self.office
        rule.budget = GateBudget(opensPerDay: 1)
        try given.book.save(rule)
        given.clock.set(to: Self.at(Self.monday, 9, 30))

        // The first open of the day: the usual 30 s pause.
        let surface = RecordingSurface()
        let first = Task { try await given.launch().run(surfaces: [{ _ in surface }]) }
        let screen = await surface.drawn(1)
        #expect(screen.remaining == 30)
        #expect(screen.budget == "1st open today, budget 1")
        given.clock.advance(by: 30)
        surface.send(.proceed)
        #expect(try await first.value == .start(notGated: nil))

        // After the grace, the second open: past the budget, 1.5 × 30 s, and the gate says so.
        given.clock.advance(by: 3_600)
        let second = RecordingSurface()
        let again = Task { try await given.launch().run(surfaces: [{ _ in second }]) }
        let grown = await second.drawn(1)
        #expect(grown.remaining == 45)
        #expect(grown.budget == "2nd open today, budget 1")
        #expect(TerminalGateSurface.lines(grown, columns: 80).contains("2nd open today, budget 1"))
        // Never a lock-out: Proceed comes once the longer pause has run out.
        given.clock.advance(by: 30)
        second.send(.proceed)
        given.clock.advance(by: 15)
        second.send(.proceed)
        #expect(try await again.value == .start(notGated: nil))
        #expect(try given.book.opensToday(programID: "firefox.desktop", zone: Self.zone) == 2)
    }

    // MARK: The migration

    @Test func aStoreFromBeforeSchedulesOpensWithItsProfileAndEvents() throws {
        let given = try Given()
        let profile = GateProfile(
            determination: 8,
            interests: [.stoicism],
            grace: GateGrace(length: 60),
            focusOnExit: false,
            sessionLength: 600
        )
        try given.book.save(profile)
        try given.event(.exit, at: Self.at(Self.monday, 9))
        // Make it the store of the Chime before v15: no gate_rule, v15 not applied.
        let queue = try DatabaseQueue(path: given.path)
        try queue.write { db in
            try db.execute(sql: "DROP TABLE gate_rule")
            try db.execute(sql: "DROP TABLE gate_run")
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier LIKE 'v15:%'")
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = ?", arguments: [StoreSchema.gateRunsMigration])
        }
        try queue.close()

        let reopened = GateBook(store: try ReminderStore(path: given.path, schemas: [.gateway]), clock: given.clock)
        #expect(try reopened.profile() == profile)
        #expect(try reopened.events().map(\.outcome) == [.exit])
        #expect(try reopened.rules().isEmpty)
        try reopened.save(Self.office)
        #expect(try reopened.rule(programID: "firefox.desktop") == Self.office)
    }
}
