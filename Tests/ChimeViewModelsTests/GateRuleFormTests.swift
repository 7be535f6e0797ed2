import ChimeCore
import ChimeGateway
import ChimeStore
import ChimeTesting
import ChimeViewModels
import Foundation
import Testing

/// The Gateway page's rule form (hours, days, budgets, the reminder in use) over the family's
/// parsers and `chime gate edit`'s use case, and the minutes chart of the statistics.
struct GateRuleFormTests {
    typealias Launchers = GatewayViewModelTests.Launchers

    @Test func aRuleShowsInTheFormAsItStandsAndTheFormGivesItBack() throws {
        let rule = GateRule(
            programID: "firefox.desktop",
            hours: GateHours(start: LocalTime(hour: 9, minute: 0)!, end: LocalTime(hour: 17, minute: 30)!),
            days: .weekdays,
            budget: GateBudget(opensPerDay: 3),
            minutesBudget: GateMinutesBudget(minutesPerDay: 60),
            remindAfter: 20
        )
        let form = GateRuleForm(rule: rule)
        #expect(!form.allDay)
        #expect((form.from, form.to) == ("09:00", "17:30"))
        #expect(form.days == .weekdays)
        #expect((form.opensPerDay, form.minutesPerDay, form.remindAfter) == ("3", "60", "20"))
        #expect(try form.checked().get() == rule)
        // A rule that says nothing: all day, every day, empty budgets.
        let plain = GateRuleForm(rule: GateRule(programID: "firefox.desktop"))
        #expect(plain.allDay && plain.days == .everyDay && plain.opensPerDay.isEmpty && plain.remindAfter.isEmpty)
        #expect(try plain.checked().get() == GateRule(programID: "firefox.desktop"))
    }

    @Test func valuesAreReadAsTheCLIReadsThemWithABareNumberAsMinutes() throws {
        var form = GateRuleForm(programID: "firefox.desktop", allDay: false, from: "10pm", to: "6am", days: [.friday, .saturday])
        form.opensPerDay = "5/day"
        form.minutesPerDay = "1h30m"
        form.remindAfter = " 45 "
        let rule = try form.checked().get()
        #expect(rule.hours?.description == "22:00-06:00")
        #expect(rule.days.map(GateRule.daysText) == "fri,sat")
        #expect(rule.budget?.opensPerDay == 5)
        #expect(rule.minutesBudget?.minutesPerDay == 90)
        #expect(rule.remindAfter == 45)
        // All day ignores what the hours' entries hold.
        form.allDay = true
        form.from = "nonsense"
        #expect(try form.checked().get().hours == nil)
    }

    @Test func eachBadValueIsSaidUnderItsFieldInTheCLIsWords() {
        let form = GateRuleForm(
            programID: "firefox.desktop",
            allDay: false,
            from: "09:00",
            to: "25:00",
            days: [],
            opensPerDay: "0",
            minutesPerDay: "2000",
            remindAfter: "soon"
        )
        guard case .failure(let errors) = form.checked() else {
            Issue.record("a bad form was accepted")
            return
        }
        #expect(errors.fields[.hours] == "invalid hours '09:00-25:00': expected \(GateHours.expected)")
        #expect(errors.fields[.days] == GateRuleForm.noDays)
        #expect(errors.fields[.opens] == "invalid budget '0': expected \(GateBudget.expected)")
        #expect(errors.fields[.minutes] == "invalid budget '2000': expected \(GateMinutesBudget.expected)")
        #expect(errors.fields[.remind] == "invalid remind-after 'soon': expected \(GateRule.remindExpected)")
        // The same words `chime gate edit --hours 09:00-25:00` prints.
        #expect(throws: ChimeError.invalid("hours", "09:00-25:00", expected: GateHours.expected)) {
            try GateRuleChange.parse(hours: "09:00-25:00")
        }
    }

    @Test func savingWritesThroughGateEditsUseCaseAndABadFormWritesNothing() throws {
        let h = try ViewModelHarness()
        let launchers = Launchers()
        defer {
            h.cleanUp()
            launchers.cleanUp()
        }
        let overrides = try launchers.make()
        let book = GateBook(store: h.store, clock: h.wall)
        let model = GateHubViewModel(book: book, overrides: overrides, zone: ViewModelHarness.utc)
        model.add("firefox", chime: launchers.chime)
        try book.save(GateRule(programID: "firefox.desktop", budget: GateBudget(opensPerDay: 3)))

        // A bad value: its problem, and the rule as it was.
        var form = model.ruleForm("firefox")
        #expect(form.programID == "firefox.desktop")
        #expect(form.opensPerDay == "3")
        form.allDay = false
        (form.from, form.to) = ("later", "17:00")
        form.days = .weekdays
        form.minutesPerDay = "lots"
        guard case .failure(let errors) = model.save(form, name: "Firefox") else {
            Issue.record("a bad form was saved")
            return
        }
        #expect(Set(errors.fields.keys) == [.hours, .minutes])
        #expect(try book.rule(programID: "firefox.desktop") == GateRule(programID: "firefox.desktop", budget: GateBudget(opensPerDay: 3)))

        // Good values: saved, the hub's summary and notice say the rule.
        (form.from, form.minutesPerDay, form.opensPerDay, form.remindAfter) = ("09:00", "45", "", "20m")
        let state = try model.save(form, name: "Firefox").get()
        #expect(state.error == nil)
        #expect(state.notice == "Firefox is gated 09:00-17:00 mon-fri, budget 45m/day, reminder after 20 min.")
        let saved = try book.rule(programID: "firefox.desktop")
        #expect(saved.label == "09:00-17:00 mon-fri, budget 45m/day, reminder after 20 min")
        #expect(saved.budget == nil)
        #expect(state.programs.first?.summary == "Opens with a pause first · 09:00-17:00 mon-fri, budget 45m/day, reminder after 20 min")

        // Cleared back to always, no budget: the rule is gone.
        let cleared = try model.save(GateRuleForm(programID: "firefox.desktop"), name: "Firefox").get()
        #expect(cleared.notice == "Firefox is gated at all times, with no budget.")
        #expect(try book.rules().isEmpty)

        // A program un-gated meanwhile (in a terminal): refused as `chime gate edit` refuses it, nothing written.
        _ = try overrides.remove(try DesktopFileID("firefox"))
        let refused = try model.save(form, name: "Firefox").get()
        #expect(refused.error?.code == .notFound)
        #expect(refused.error?.message == "'firefox.desktop' is not gated: 'chime gate add firefox.desktop' gates it")
        #expect(try book.rules().isEmpty)
    }

    @Test func theMinutesChartIsDescribedInFigures() throws {
        let h = try ViewModelHarness()
        defer { h.cleanUp() }
        let book = GateBook(store: h.store, clock: h.wall)
        let model = GateStatsViewModel(book: book, zone: ViewModelHarness.utc)
        #expect(model.state.minutesDescription == "Last 30 days: no minutes in gated programs yet.")
        #expect(model.state.minutesPeak == 1)
        // Yesterday 30 min of Firefox; today 20 of Firefox and 45 of Chess.
        func run(_ program: String, from start: TimeInterval, minutes: Int) throws {
            let begun = try GateBook(store: h.store, clock: ManualWallClock(now: h.at(start)))
                .startRun(programID: program, name: program, pid: 1, remindAfter: nil, isRunning: { _ in true })
            try GateBook(store: h.store, clock: ManualWallClock(now: h.at(start + Double(minutes * 60)))).endRun(id: begun.id)
        }
        try run("firefox.desktop", from: -86_400, minutes: 30)
        try run("firefox.desktop", from: -1_200, minutes: 20)
        try run("chess.desktop", from: -3_000, minutes: 45)
        let state = model.loadStatistics()
        #expect(state.minutesTrend.count == 30)
        #expect(
            state.minutesTrend.last
                == GateMinutesDay(
                    date: "2026-01-05",
                    minutes: 65,
                    programs: [.init(programID: "chess.desktop", minutes: 45), .init(programID: "firefox.desktop", minutes: 20)]
                )
        )
        #expect(state.minutesPeak == 65)
        #expect(
            state.minutesDescription
                == "Last 30 days, minutes in gated programs: 2026-01-04: 30 min (firefox.desktop); 2026-01-05: 65 min (chess.desktop 45, firefox.desktop 20); none on the other 28 days."
        )
    }
}
