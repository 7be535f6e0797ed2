import ChimeCore
import ChimeFocus
import ChimeStore
import ChimeTesting
import Foundation
import Testing

/// A running focus session holds plain reminders in the scheduler's loop (the runner's) and they
/// come as one summary when the tree is planted or the session is given up; a paused session
/// holds nothing.
struct FocusHoldTests {
    func plain(_ h: FocusHarness, _ id: String, at seconds: TimeInterval) throws {
        try h.store.schedule(
            NewReminder(id: id, title: "Title \(id)", trigger: .once(h.at(seconds))),
            now: h.wall.now(),
            systemZone: FocusRunnerTests.utc
        )
    }

    @Test(.timeLimit(.minutes(1)))
    func plainRemindersWaitForTheTreeAndComeAsOneSummaryAfterIt() async throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let notifier = RecordingNotifier()
        let scheduler = FocusRunnerTests.scheduler(h, notifier: notifier)
        let session = try h.timer.start()
        try plain(h, "tea", at: 300)
        try plain(h, "mail", at: 600)
        let loop = Task { await scheduler.run(waker: h.wall) }
        for step in [300.0, 600] {
            #expect(await h.wall.parked() == FocusRunnerTests.wake(h.at(step)))
            h.wall.advance(to: h.at(step))
        }
        // Held: nothing shown, both still due
        #expect(await h.wall.parked() == FocusRunnerTests.wake(h.at(1_500)))
        #expect(notifier.posts.isEmpty)
        #expect(try h.store.heldOccurrences().map(\.reminderID) == ["tea", "mail"])

        // The tree is planted: its alert, then the summary of what was held
        h.wall.advance(to: h.at(1_500))
        let posts = await notifier.nextPosts(2)
        #expect(posts.map(\.id) == [session.reminderID, "summary"])
        #expect(posts[1].deliveries.map(\.reminderID) == ["tea", "mail"])
        #expect(posts[1].title == "2 reminders held while quiet")
        #expect(await h.wall.parked() == FocusRunnerTests.wake(h.at(1_800)))
        h.wall.shutdown()
        await loop.value
        #expect(try h.store.ledger().map(\.state) == ["posted", "posted", "posted"])
    }

    @Test(.timeLimit(.minutes(1)))
    func pausingOrGivingUpLetsTheHeldRemindersGo() async throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let notifier = RecordingNotifier()
        let scheduler = FocusRunnerTests.scheduler(h, notifier: notifier)
        _ = try h.timer.start()
        try plain(h, "tea", at: 300)
        let loop = Task { await scheduler.run(waker: h.wall) }
        #expect(await h.wall.parked() == FocusRunnerTests.wake(h.at(300)))
        h.wall.advance(to: h.at(300))
        #expect(await h.wall.parked() == FocusRunnerTests.wake(h.at(1_500)))
        #expect(notifier.posts.isEmpty)

        // Paused (the CLI pokes the runner): the held one comes, on its own
        h.wall.advance(to: h.at(400))
        _ = try h.timer.pause()
        h.wall.poke()
        #expect(await notifier.nextPost().id == "tea")
        #expect(await h.wall.parked() == nil)

        // Resumed: held again; given up: the summary
        _ = try h.timer.resume()
        try plain(h, "cake", at: 500)
        try plain(h, "bread", at: 510)
        h.wall.poke()
        for step in [500.0, 510] {
            #expect(await h.wall.parked() == FocusRunnerTests.wake(h.at(step)))
            h.wall.advance(to: h.at(step))
        }
        _ = await h.wall.parked()
        #expect(notifier.posts.count == 1)
        h.wall.advance(to: h.at(700))
        _ = try h.timer.giveUp()
        h.wall.poke()
        let summary = await notifier.nextPost()
        #expect(summary.deliveries.map(\.reminderID) == ["cake", "bread"])
        #expect(summary.postedAt == h.at(700))
        h.wall.shutdown()
        await loop.value
        #expect(notifier.posts.count == 2)
    }
    @Test(.timeLimit(.minutes(1)))
    func theHoldNamesTheSessionAndItsEndAndEachHeldAlertSaysWhy() async throws {
        let h = try FocusHarness()
        defer { h.cleanUp() }
        let notifier = RecordingNotifier()
        let scheduler = FocusRunnerTests.scheduler(h, notifier: notifier)
        let family = FocusFamily(timer: h.timer, liveAlert: false)
        // No session: nothing holds
        #expect(try family.hold() == nil)
        let session = try h.timer.start()
        try plain(h, "tea", at: 300)
        // The hold says which session and its end (25 minutes on the awake clock)
        let hold = try #require(try family.hold())
        #expect(hold.detail == "focus session #\(session.id)")
        #expect(hold.until == h.at(1_500))

        let loop = Task { await scheduler.run(waker: h.wall) }
        #expect(await h.wall.parked() == FocusRunnerTests.wake(h.at(300)))
        h.wall.advance(to: h.at(300))
        #expect(await h.wall.parked() == FocusRunnerTests.wake(h.at(1_500)))
        // What quiet status and list read: the session holds until its end, and holds tea
        let status = try h.store.holdStatus(families: [family], desktopDoNotDisturb: false, now: h.at(300), zone: FocusRunnerTests.utc)
        #expect(status.holds == [AlertHold(source: .family, reason: "focus session #\(session.id)", until: h.at(1_500))])
        #expect(status.held.map(\.alert.occurrence.reminderID) == ["tea"])
        #expect(status.held.first?.hold == status.holds.first)
        // Turned off by the person: nothing holds (as the scheduler decides)
        try h.store.updateQuiet { $0.settings.familyHold = false }
        let off = try h.store.holdStatus(families: [family], desktopDoNotDisturb: nil, now: h.at(300), zone: FocusRunnerTests.utc)
        #expect(off.holds.isEmpty)
        h.wall.shutdown()
        await loop.value
    }
}
