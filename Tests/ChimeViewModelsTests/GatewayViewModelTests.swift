import ChimeCore
import ChimeGateway
import ChimeStore
import ChimeTesting
import ChimeViewModels
import Foundation
import Testing

/// The gateway's hub and statistics (the seed's HubViewModel and StatisticsViewModel) over the
/// gateway family, on a real store, the injected clock and real launcher overrides in a
/// temporary data directory.
struct GatewayViewModelTests {
    /// A data home and a system data directory under a temporary root, a `firefox` entry
    /// installed, and a `chime` for the overrides to run.
    struct Launchers {
        let root = FileManager.default.temporaryDirectory.path + "/chime-viewmodel-gate-" + UUID().uuidString
        var chime: String { root + "/usr/bin/chime" }

        func make() throws -> LauncherOverrides {
            let entry = "[Desktop Entry]\nType=Application\nName=Firefox\nExec=firefox %u\n"
            for directory in [root + "/home/.local/share", root + "/usr/share/applications", root + "/usr/bin"] {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            }
            try Data(entry.utf8).write(to: URL(fileURLWithPath: root + "/usr/share/applications/firefox.desktop"))
            try Data("#!/bin/sh\nexit 0\n".utf8).write(to: URL(fileURLWithPath: chime))
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: chime)
            return LauncherOverrides(data: XDGDataDirectories(home: root + "/home/.local/share", directories: [root + "/usr/share"]))
        }

        func cleanUp() { try? FileManager.default.removeItem(atPath: root) }
    }

    static func exit(_ at: Date, pause: TimeInterval = 30) -> GateEvent {
        GateEvent(programID: "firefox", at: at, pauseSeconds: pause, outcome: .exit)
    }

    @Test func theHubGreetsShowsTheStreakBannerAndTheGatedPrograms() throws {
        let h = try ViewModelHarness()
        let launchers = Launchers()
        defer {
            h.cleanUp()
            launchers.cleanUp()
        }
        let overrides = try launchers.make()
        let book = GateBook(store: h.store, clock: h.wall)
        let model = GateHubViewModel(book: book, overrides: overrides, zone: ViewModelHarness.utc)
        let empty = model.state
        #expect(empty.greeting == "Your Mindful Hub.")
        #expect(!empty.showStreakBanner)
        #expect(empty.streakMessage == "")
        #expect(empty.programs.isEmpty)
        #expect(empty.emptyText == "No program is gated yet")
        #expect(empty.shouldShowFRE)

        // A mindful day yesterday and today (exits at least as many as proceeds), a gate, a profile.
        try book.record([Self.exit(h.at(-86_400)), Self.exit(h.at(-60))])
        _ = try overrides.gate(try DesktopFileID("firefox"), chime: launchers.chime)
        try book.save(GateProfile(determination: 5, interests: [], grace: GateGrace(), focusOnExit: false, sessionLength: 1_200))
        let state = model.loadHubData()
        #expect(state.streakCount == 2)
        #expect(state.showStreakBanner)
        #expect(state.streakMessage == "2 mindful days in a row. Keep going.")
        #expect(state.programs.map(\.id) == ["firefox.desktop"])
        #expect(state.programs.first?.isOK == true)
        #expect(state.programs.first?.advice == nil)
        #expect(state.emptyText == nil)
        #expect(!state.shouldShowFRE)

        // Two days later without a mindful day, the banner is gone.
        h.wall.advance(by: 2 * 86_400)
        #expect(!model.loadHubData().showStreakBanner)
    }

    @Test func statisticsAreTheFamilysFiguresInTheCLIsWords() throws {
        let h = try ViewModelHarness()
        defer { h.cleanUp() }
        let book = GateBook(store: h.store, clock: h.wall)
        let model = GateStatsViewModel(book: book, zone: ViewModelHarness.utc)
        let empty = model.state
        #expect(empty.headerTitle == "Proof It's Working.")
        #expect(empty.totalConsciousExits == 0)
        #expect(empty.intentionalityScore == nil)
        #expect(
            empty.rows == [
                LabeledValue("Hours reclaimed", "0.0"), LabeledValue("Conscious exits", "0"),
                LabeledValue("Average pause", "—"), LabeledValue("Intentionality score", "—"),
            ]
        )
        #expect(empty.dailyTrends.count == 30)

        // Three exits and one proceed today: 3 × 20 minutes reclaimed, 3 of 4 intentional.
        try book.record([
            Self.exit(h.at(-300), pause: 30), Self.exit(h.at(-200), pause: 40), Self.exit(h.at(-100), pause: 50),
            GateEvent(programID: "firefox", at: h.at(-50), pauseSeconds: 40, outcome: .proceed),
        ])
        let state = model.loadStatistics()
        #expect(state.totalConsciousExits == 3)
        #expect(state.hoursReclaimed == 1)
        #expect(state.averagePauseTime == 40)
        #expect(state.intentionalityScore == 0.75)
        #expect(
            state.rows == [
                LabeledValue("Hours reclaimed", "1.0"), LabeledValue("Conscious exits", "3"),
                LabeledValue("Average pause", "40 s"), LabeledValue("Intentionality score", "75 %"),
                LabeledValue("Streak", "1 mindful day. A fine start."),
            ]
        )
        #expect(state.dailyTrends.last?.date == "2026-01-05")
        #expect(state.dailyTrends.last?.exits == 3)
        #expect(state.dailyTrends.last?.proceeds == 1)
        #expect(empty.programs.isEmpty)
        // Each program's opens and minutes, as `chime gate stats` lists them: the proceed, and a
        // run of 25 minutes that ended at now.
        let run = try GateBook(store: h.store, clock: ManualWallClock(now: h.at(-1_500)))
            .startRun(programID: "firefox", name: "Firefox", pid: 1, remindAfter: nil)
        try book.endRun(id: run.id)
        #expect(model.loadStatistics().programs == [LabeledValue("firefox", "1 open, 25 min")])
    }

    @Test func theHubGatesAndUngatesAProgramAsTheCLIDoesAndSaysWhyItCannot() throws {
        let h = try ViewModelHarness()
        let launchers = Launchers()
        defer {
            h.cleanUp()
            launchers.cleanUp()
        }
        let overrides = try launchers.make()
        let model = GateHubViewModel(book: GateBook(store: h.store, clock: h.wall), overrides: overrides, zone: ViewModelHarness.utc)

        let added = model.add("firefox.desktop", chime: launchers.chime)
        #expect(added.error == nil)
        #expect(added.programs.map(\.id) == ["firefox.desktop"])
        #expect(added.notice == "Gated firefox.desktop: its launcher now opens a pause first.")
        #expect(try overrides.list().map(\.id.rawValue) == ["firefox.desktop"])

        // Gated twice: the use case's refusal, the list as it was.
        let twice = model.add("firefox", chime: launchers.chime)
        #expect(twice.error?.code == .conflict, "\(String(describing: twice.error))")
        #expect(twice.notice == nil)
        #expect(twice.programs.map(\.id) == ["firefox.desktop"])

        // A program that is not installed: not found, nothing gated.
        let missing = model.add("no-such-program", chime: launchers.chime)
        #expect(missing.error?.code == .notFound)
        #expect(missing.error?.message.contains("no-such-program") == true)

        let removed = model.remove("firefox.desktop")
        #expect(removed.error == nil)
        #expect(removed.programs.isEmpty)
        #expect(removed.notice == "Un-gated firefox.desktop: its launcher is as it was.")
        #expect(try overrides.list().isEmpty)
        #expect(model.remove("firefox.desktop").error?.code == .notFound)
        // A read forgets the last action's notice and error.
        let read = model.loadHubData()
        #expect(read.notice == nil && read.error == nil)
    }

    @Test func theSetupSaysThePauseTheLaunchesNotGatedAndRepairsAMissingGate() throws {
        let h = try ViewModelHarness()
        let launchers = Launchers()
        defer {
            h.cleanUp()
            launchers.cleanUp()
        }
        let overrides = try launchers.make()
        let book = GateBook(store: h.store, clock: h.wall)
        let model = GateHubViewModel(book: book, overrides: overrides, zone: ViewModelHarness.utc)
        let first = model.state
        #expect(first.setupRows.map(\.label) == ["Pause", "Not gated"])
        #expect(first.setupRows.first?.value.hasSuffix("the default: choose your pause and interests with 'chime gate setup'") == true)
        #expect(first.setupRows.last?.value == "every launch showed a gate (or was in the grace)")
        #expect(!first.needsRepair)

        try book.save(GateProfile(determination: 5, interests: [], grace: GateGrace(), focusOnExit: false, sessionLength: 1_200))
        try book.record([GateEvent(programID: "firefox", at: h.at(-60), pauseSeconds: 0, outcome: .notGated(reason: "no display"))])
        let made = try overrides.gate(try DesktopFileID("firefox"), chime: launchers.chime)
        try FileManager.default.removeItem(atPath: made.path)
        let state = model.loadHubData()
        #expect(state.setupRows.first?.value.hasSuffix("determination 5 of 10") == true, "\(state.setupRows)")
        #expect(state.setupRows.last?.value == "1 launch started without a gate; the last because: no display")
        #expect(state.needsRepair)
        #expect(state.programs.first?.status == "override_missing")
        #expect(state.programs.first?.advice?.contains("opens without a gate") == true)

        #expect(state.programs.first?.canRepair == true)
        #expect(state.programs.first?.summary == "Its gate is missing: it opens without a pause")
        let one = model.repair("firefox", chime: launchers.chime)
        #expect(one.error == nil)
        #expect(one.notice == "Repaired the gate of firefox.desktop: its launcher opens a pause first.")
        #expect(one.programs.first?.isOK == true && one.programs.first?.canRepair == false)
        #expect(one.programs.first?.summary == "Opens with a pause first")
        // Its schedule and budget, as `chime gate list` says them.
        try book.save(
            GateRule(
                programID: "firefox.desktop",
                hours: try GateHours.parse("09:00-17:00"),
                days: .weekdays,
                budget: GateBudget(opensPerDay: 3)
            )
        )
        #expect(model.loadHubData().programs.first?.summary == "Opens with a pause first · 09:00-17:00 mon-fri, budget 3/day")
        #expect(model.repair("no-such-program", chime: launchers.chime).error?.code == .notFound)
        try FileManager.default.removeItem(atPath: made.path)
        #expect(model.loadHubData().needsRepair)
        let repaired = model.repair(chime: launchers.chime)
        #expect(repaired.error == nil)
        #expect(repaired.notice == "Every gate is in place.")
        #expect(!repaired.needsRepair)
        #expect(repaired.programs.first?.isOK == true)
        #expect(FileManager.default.fileExists(atPath: made.path))
    }

    @Test func theChooserOffersTheUngatedProgramsMatchingTheSearchByName() {
        let installed = [
            GateProgramChoice(id: "org.gnome.Maps.desktop", name: "Maps"), GateProgramChoice(id: "firefox.desktop", name: "Firefox"),
            GateProgramChoice(id: "eog.desktop", name: "Image Viewer"), GateProgramChoice(id: "code.desktop", name: "code"),
        ]
        #expect(GateProgramChoice.offered(installed, gated: [], query: "").map(\.name) == ["code", "Firefox", "Image Viewer", "Maps"])
        #expect(
            GateProgramChoice.offered(installed, gated: ["firefox.desktop"], query: "").map(\.name) == ["code", "Image Viewer", "Maps"]
        )
        #expect(GateProgramChoice.offered(installed, gated: [], query: "  image VIEW ").map(\.id) == ["eog.desktop"])
        #expect(GateProgramChoice.offered(installed, gated: [], query: "gnome").map(\.id) == ["org.gnome.Maps.desktop"])
        #expect(GateProgramChoice.offered(installed, gated: [], query: "nothing like it").isEmpty)
    }

    @Test func theAppRunsTheChimeBesideItsWindowOrInstalledInBin() {
        #expect(GateHubViewModel.chimePath(window: "/src/.build/debug/chime-gate-window") == "/src/.build/debug/chime")
        #expect(GateHubViewModel.chimePath(window: "/usr/local/libexec/chime/chime-gate-window") == "/usr/local/bin/chime")
    }

    @Test func theTrendIsDescribedInFigures() throws {
        let h = try ViewModelHarness()
        defer { h.cleanUp() }
        let book = GateBook(store: h.store, clock: h.wall)
        let model = GateStatsViewModel(book: book, zone: ViewModelHarness.utc)
        #expect(model.state.trendDescription == "Last 30 days: no exits or proceeds yet.")
        #expect(model.state.trendPeak == 1)
        try book.record([
            Self.exit(h.at(-86_400)), Self.exit(h.at(-300)), Self.exit(h.at(-200)),
            GateEvent(programID: "firefox", at: h.at(-50), pauseSeconds: 40, outcome: .proceed),
        ])
        let state = model.loadStatistics()
        #expect(state.trendPeak == 2)
        #expect(
            state.trendDescription
                == "Last 30 days, exits and proceeds: 2026-01-04: 1 exit, 0 proceeds; 2026-01-05: 2 exits, 1 proceed; none on the other 28 days."
        )
    }
}
