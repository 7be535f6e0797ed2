import ChimeCore
import ChimeStore
import ChimeTesting
import Foundation
import Synchronization
import Testing

/// Floating reminders follow the system zone while the runner runs: 08:00 stays 08:00 local
/// after travel.
struct ZoneChangeTests {
    final class Zone: Sendable {
        let current = Mutex(TimeZone(identifier: "Europe/Berlin")!)
    }

    @Test(.timeLimit(.minutes(1)))
    func aZoneChangeMovesFloatingRemindersToTheNewLocalTime() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try ReminderStore(path: directory.file("chime.sqlite"), schemas: [])
        let zone = Zone()
        let clock = ManualWallClock(now: Harness.t0)  // Monday 2026-01-05 09:00 UTC = 10:00 in Berlin
        let notifier = RecordingNotifier()
        var configuration = Scheduler.Configuration()
        configuration.lookahead = .zero
        let scheduler = Scheduler(
            store: store,
            notifier: notifier,
            clock: clock,
            configuration: configuration,
            systemZone: { zone.current.withLock { $0 } }
        )

        // Given "every day 08:00" (floating) and a fixed-zone twin, scheduled in Berlin
        let eight = [LocalTime(hour: 8, minute: 0)!]
        try store.schedule(
            NewReminder(id: "floating", title: "Stretch", trigger: .weekly(times: eight, days: .everyDay, zone: .floating)),
            now: clock.now(),
            systemZone: zone.current.withLock { $0 }
        )
        try store.schedule(
            NewReminder(id: "fixed", title: "Call", trigger: .weekly(times: eight, days: .everyDay, zone: .fixed("Europe/Berlin"))),
            now: clock.now(),
            systemZone: zone.current.withLock { $0 }
        )
        let berlinEight = Date(timeIntervalSince1970: 1_767_682_800)  // Tue 2026-01-06 07:00 UTC
        #expect(try store.reminder(id: "floating").nextDue == berlinEight)
        let loop = Task { await scheduler.run(waker: clock) }
        #expect(await clock.parked() == berlinEight)

        // When the traveller's system zone becomes New York
        zone.current.withLock { $0 = TimeZone(identifier: "America/New_York")! }
        clock.zoneChanged()

        // Then the floating one is due at the next 08:00 New York time (it is 04:00 there: today),
        // while the fixed one stays at 08:00 Berlin
        let newYorkEight = Date(timeIntervalSince1970: 1_767_618_000)  // Mon 2026-01-05 13:00 UTC
        #expect(await clock.parked() == newYorkEight)
        #expect(try store.reminder(id: "floating").nextDue == newYorkEight)
        #expect(try store.reminder(id: "fixed").nextDue == berlinEight)

        // And each fires at its own instant, once
        clock.advance(to: newYorkEight)
        let stretch = await notifier.nextPost()
        #expect(stretch.id == "floating")
        #expect(stretch.postedAt == newYorkEight)
        #expect(await clock.parked() == berlinEight)
        clock.advance(to: berlinEight)
        #expect(await notifier.nextPost().id == "fixed")
        #expect(await clock.parked() == newYorkEight.addingTimeInterval(86_400))
        clock.shutdown()
        await loop.value
        #expect(notifier.posts.map(\.id) == ["floating", "fixed"])
    }
}
