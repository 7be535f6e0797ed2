import ChimeCore
import ChimeGateway
import ChimeStore
import ChimeTesting
import Foundation
import Testing

/// The gateway's use cases on a real SQLite file and a manual clock.
@Suite struct GateBookTests {
    struct Given: ~Copyable {
        let directory: URL
        let clock = ManualWallClock(now: Date(timeIntervalSince1970: 1_800_000_000))
        let book: GateBook

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("chime-gate-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let store = try ReminderStore(path: directory.appendingPathComponent("chime.sqlite").path, schemas: [.gateway])
            book = GateBook(store: store, clock: clock)
        }

        deinit { try? FileManager.default.removeItem(at: directory) }
    }

    static let seneca = Quote(text: "While we are postponing, life speeds by.", author: "Seneca", source: "Letters, 1", interest: .stoicism)

    @Test func theProfileIsTheDefaultsUntilSetUpThenWhatWasChosen() throws {
        let given = try Given()
        #expect(try given.book.profile() == .defaults)
        #expect(GateProfile.defaults.pauseLength == 30)
        let chosen = GateProfile(
            determination: 8,
            interests: [.stoicism, .psychology],
            grace: GateGrace(length: 300),
            focusOnExit: true,
            sessionLength: 1_800
        )
        try given.book.save(chosen)
        #expect(try given.book.profile() == chosen)
        #expect(try given.book.profile().pauseLength == 39)
    }

    @Test(arguments: [
        (0, 600.0, 1_200.0, "invalid determination '0': expected a whole number from 1 to 10"),
        (11, 600, 1_200, "invalid determination '11': expected a whole number from 1 to 10"),
        (5, 90_000, 1_200, "invalid grace '25h': expected from 0s (none) to 1d, in whole seconds"),
        (5, 600, 30, "invalid session length '30s': expected from 1m to 1d"),
    ])
    func aProfileOutOfRangeIsRefusedAndNothingSaved(determination: Int, grace: Double, session: Double, message: String) throws {
        let given = try Given()
        let profile = GateProfile(
            determination: determination,
            interests: [],
            grace: GateGrace(length: grace),
            focusOnExit: false,
            sessionLength: session
        )
        let error = #expect(throws: ChimeError.self) { try given.book.save(profile) }
        #expect(error?.code == .usage)
        #expect(error?.message == message)
        #expect(try given.book.profile() == .defaults)
    }

    @Test func eventsRoundTripWithTheirQuoteAndReason() throws {
        let given = try Given()
        let t = given.clock.now()
        let events = [
            GateEvent(programID: "firefox", at: t, pauseSeconds: 30, outcome: .deepen, quote: Self.seneca),
            GateEvent(programID: "firefox", at: t + 30, pauseSeconds: 30.5, outcome: .exit, quote: Self.seneca),
            GateEvent(programID: "code", at: t + 60, pauseSeconds: 0, outcome: .notGated(reason: "no display and no terminal")),
        ]
        try given.book.record(events)
        #expect(try given.book.events() == events)
        #expect(try given.book.lastQuote() == Self.seneca)
    }

    @Test func exitAndProceedRecordAHookEventEachOtherOutcomesNone() throws {
        let given = try Given()
        let t = given.clock.now()
        try given.book.record([
            GateEvent(programID: "firefox", at: t, pauseSeconds: 30, outcome: .deepen),
            GateEvent(programID: "firefox", at: t + 30, pauseSeconds: 30.4, outcome: .exit),
            GateEvent(programID: "code", at: t + 60, pauseSeconds: 15, outcome: .proceed),
            GateEvent(programID: "code", at: t + 90, pauseSeconds: 0, outcome: .notGated(reason: "no display and no terminal")),
        ])
        let hooks = try given.book.store.pendingHooks()
        #expect(hooks.map(\.event.name) == ["gate.exit", "gate.proceed"])
        #expect(hooks.map { $0.event.environment["CHIME_GATE_PROGRAM"] } == ["firefox", "code"])
        #expect(hooks.map { $0.event.environment["CHIME_GATE_PAUSE_SECONDS"] } == ["30", "15"])
        #expect(hooks.map(\.recordedAt) == [t + 30, t + 60])
    }

    @Test func theGraceReadsTheProgramsLatestProceedOnly() throws {
        let given = try Given()
        let t = given.clock.now()
        #expect(try given.book.lastProceed(programID: "firefox") == nil)
        try given.book.record([
            GateEvent(programID: "firefox", at: t, pauseSeconds: 30, outcome: .proceed),
            GateEvent(programID: "firefox", at: t + 100, pauseSeconds: 30, outcome: .exit),
            GateEvent(programID: "code", at: t + 200, pauseSeconds: 30, outcome: .proceed),
        ])
        #expect(try given.book.lastProceed(programID: "firefox") == t)
        #expect(try given.book.lastProceed(programID: "code") == t + 200)
    }

    @Test(arguments: ["UTC", "Europe/Berlin", "America/New_York", "Asia/Kathmandu", "Australia/Lord_Howe"])
    func theStoresTalliesGiveTheFiguresOfTheEventsThemselves(zone: String) throws {
        // Given 3,000 events over 40 days (two DST changes in the DST zones), at any second
        let given = try Given()
        let zone = try #require(TimeZone(identifier: zone))
        var generator = SeededGenerator(seed: 42)
        let outcomes: [GateEvent.Outcome] = [.exit, .proceed, .deepen, .closed, .notGated(reason: "no display")]
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let events = (0..<3_000).map { _ in
            GateEvent(
                programID: ["firefox", "code", "steam"].randomElement(using: &generator)!,
                at: now - TimeInterval(Int.random(in: 0..<(40 * 86_400), using: &generator)),
                pauseSeconds: TimeInterval(Int.random(in: 0..<60_000, using: &generator)) / 1_000,
                outcome: outcomes.randomElement(using: &generator)!
            )
        }
        try given.book.record(events)
        // Then the figures from the store's quarter-hour tallies are those of the events
        let tallied = try given.book.stats(zone: zone)
        let direct = GateStats.from(events: events, now: now, zone: zone)
        #expect(tallied.consciousExits == direct.consciousExits)
        #expect(tallied.proceeds == direct.proceeds)
        #expect(tallied.trend == direct.trend)
        #expect(tallied.streak == direct.streak)
        #expect(abs(tallied.hoursReclaimed - direct.hoursReclaimed) < 1e-9)
        #expect(abs((tallied.averagePauseSeconds ?? -1) - (direct.averagePauseSeconds ?? -2)) < 1e-6)
        #expect(abs((tallied.intentionalityScore ?? -1) - (direct.intentionalityScore ?? -2)) < 1e-12)
    }

    @Test func statsCountWhatWasRecordedWithTheProfilesSessionLength() throws {
        let given = try Given()
        try given.book.save(
            GateProfile(determination: 5, interests: [], grace: GateGrace(), focusOnExit: false, sessionLength: 1_800)
        )
        let t = given.clock.now()
        try given.book.record([
            GateEvent(programID: "firefox", at: t - 3_600, pauseSeconds: 30, outcome: .exit),
            GateEvent(programID: "firefox", at: t - 1_800, pauseSeconds: 30, outcome: .exit),
            GateEvent(programID: "code", at: t - 60, pauseSeconds: 30, outcome: .proceed),
        ])
        let stats = try given.book.stats(zone: TimeZone(identifier: "UTC")!)
        #expect(stats.consciousExits == 2)
        #expect(stats.proceeds == 1)
        #expect(stats.hoursReclaimed == 1.0)
        #expect(stats.intentionalityScore.map { abs($0 - 2.0 / 3.0) < 1e-9 } == true)
        #expect(stats.trend.count == 30)
    }
}
