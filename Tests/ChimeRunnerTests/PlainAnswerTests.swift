import ChimeCore
import ChimeStore
import ChimeTesting
import Foundation
import Synchronization
import Testing

/// Plain reminders' actions in the scheduler's loop, on a real store and the manual clock: the
/// alert carries Done and Snooze, answers are recorded in the ledger, a snooze brings the alert
/// back once (however it is asked), and the reminder then keeps its own schedule.
struct PlainAnswerTests {
    /// Monday 2026-01-05 09:00:00 UTC.
    static let t0 = Date(timeIntervalSince1970: 1_767_603_600)
    static let utc = TimeZone(identifier: "UTC")!
    static func at(_ seconds: TimeInterval) -> Date { t0.addingTimeInterval(seconds) }
    /// The scheduler's wake for an occurrence at `instant`: its look-ahead before it.
    static func wake(_ instant: Date) -> Date { instant.addingTimeInterval(-0.025) }

    /// Counts the answers the scheduler has handled, and lets a test wait for the next.
    final class Answers: Sendable {
        private let state = Mutex<(count: Int, waiters: [(Int, CheckedContinuation<Void, Never>)])>((0, []))

        func handled() {
            let ready = state.withLock { state in
                state.count += 1
                let count = state.count
                let ready = state.waiters.filter { $0.0 <= count }.map(\.1)
                state.waiters.removeAll { $0.0 <= count }
                return ready
            }
            for continuation in ready { continuation.resume() }
        }

        var count: Int { state.withLock { $0.count } }

        func wait(for count: Int) async {
            await withCheckedContinuation { continuation in
                let done = state.withLock { state in
                    if state.count >= count { return true }
                    state.waiters.append((count, continuation))
                    return false
                }
                if done { continuation.resume() }
            }
        }
    }

    /// The loop with the plain family on a real store, and the manual clock at t0.
    final class Loop: Sendable {
        let directory: TemporaryDirectory
        let store: ReminderStore
        let notifier = RecordingNotifier()
        let clock = ManualWallClock(now: PlainAnswerTests.t0)
        let answers = Answers()
        let scheduler: Scheduler
        let task: Mutex<Task<Void, Never>?> = Mutex(nil)

        init() throws {
            directory = try TemporaryDirectory()
            store = try ReminderStore(path: directory.file("chime.sqlite"), schemas: [])
            let answers = answers
            scheduler = Scheduler(
                store: store,
                notifier: notifier,
                clock: clock,
                systemZone: { PlainAnswerTests.utc },
                log: { event in
                    if case .answered = event { answers.handled() }
                },
                families: [PlainReminders(store: store, systemZone: { PlainAnswerTests.utc })]
            )
        }

        func start() {
            let scheduler = scheduler
            let clock = clock
            task.withLock { $0 = Task { await scheduler.run(waker: clock) } }
        }

        func schedule(_ id: String, _ trigger: Trigger, presentation: Presentation = Presentation()) throws {
            try store.schedule(
                NewReminder(id: id, title: "Title \(id)", trigger: trigger, presentation: presentation),
                now: clock.now(),
                systemZone: PlainAnswerTests.utc
            )
        }

        /// Invokes `key` on alert `id`, then waits until the scheduler has handled it and parked again.
        func act(_ key: String, on id: String) async {
            let count = answers.count + 1
            notifier.respond(NoteResponse(noteID: id, kind: .action(key)))
            await answers.wait(for: count)
            _ = await clock.parked()
        }

        func stop() async {
            clock.shutdown()
            await task.withLock { $0 }?.value
            directory.remove()
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aPlainAlertCarriesDoneAndSnoozeAndItsLook() async throws {
        let loop = try Loop()
        try loop.schedule(
            "tea",
            .once(Self.at(60)),
            presentation: Presentation(urgency: .critical, sticky: true, icon: "appointment-soon", sound: "bell")
        )
        loop.start()
        #expect(await loop.clock.parked() == Self.wake(Self.at(60)))
        loop.clock.advance(to: Self.at(60))
        let note = await loop.notifier.nextPost()
        await loop.stop()

        #expect(note.id == "tea")
        #expect(note.actions.map(\.key) == ["done", "snooze"])
        #expect(note.actions.map(\.label) == ["Done", "Snooze 10 min"])
        #expect(note.answerInstead == "Answer: chime done tea (or chime snooze tea)")
        #expect(note.urgency == .critical)
        #expect(note.sticky)
        #expect(note.icon == "appointment-soon")
        #expect(note.sound == "bell")
    }

    @Test(.timeLimit(.minutes(1)))
    func doneIsRecordedAndNothingComesBack() async throws {
        let loop = try Loop()
        try loop.schedule("tea", .once(Self.at(60)))
        loop.start()
        _ = await loop.clock.parked()
        loop.clock.advance(to: Self.at(60))
        _ = await loop.notifier.nextPost()
        _ = await loop.clock.parked()

        loop.clock.advance(to: Self.at(70))
        await loop.act("done", on: "tea")
        // Nothing more to wake for.
        #expect(await loop.clock.parked() == nil)
        #expect(try loop.store.ledger(id: "tea").map(\.response) == ["done"])
        // The alert is replaced by what was recorded, with the reminder's title below.
        #expect(loop.notifier.confirmations.map(\.title) == ["✓ Done"])
        #expect(loop.notifier.confirmations.map(\.body) == ["Title tea"])
        #expect(loop.notifier.confirmations.allSatisfy { $0.id == "tea" && $0.actions.isEmpty && $0.timeout != nil })
        loop.clock.advance(to: Self.at(3_600))
        await loop.stop()
        #expect(loop.notifier.posts.count == 1)
    }

    @Test(.timeLimit(.minutes(1)))
    func aSnoozedOneShotComesBackOnceTenMinutesLaterEvenWhenPressedTwice() async throws {
        let loop = try Loop()
        try loop.schedule("tea", .once(Self.at(60)))
        loop.start()
        _ = await loop.clock.parked()
        loop.clock.advance(to: Self.at(60))
        _ = await loop.notifier.nextPost()
        _ = await loop.clock.parked()

        loop.clock.advance(to: Self.at(90))
        await loop.act("snooze", on: "tea")
        // A second press (and the close that follows it) changes nothing: the first answer stands.
        await loop.act("snooze", on: "tea")
        loop.notifier.respond(NoteResponse(noteID: "tea", kind: .closed(.dismissed)))
        await loop.answers.wait(for: 3)
        // The alert said until when; the second press was told it changed nothing; the close, nothing.
        #expect(loop.notifier.confirmations.map(\.title) == ["Snoozed until 09:11", Scheduler.alreadyAnswered])
        // Back once, ten minutes after the press.
        #expect(await loop.clock.parked() == Self.at(90 + 600))
        loop.clock.advance(to: Self.at(90 + 600))
        let again = await loop.notifier.nextPost()
        #expect(again.id == "tea")
        #expect(again.deliveries.map(\.due) == [Self.at(690)])
        #expect(again.actions.map(\.key) == ["done", "snooze"])
        // Then nothing more: a one-shot fires again once.
        #expect(await loop.clock.parked() == nil)
        loop.clock.advance(to: Self.at(7_200))
        #expect(try loop.store.ledger(id: "tea").map(\.response) == ["snooze", nil])
        await loop.stop()
        #expect(loop.notifier.posts.count == 2)
    }

    @Test(.timeLimit(.minutes(1)))
    func aSnoozedRecurringReminderComesBackOnceAndKeepsItsRule() async throws {
        let loop = try Loop()
        // Every hour from t0: 10:00, 11:00, …
        try loop.schedule("water", .interval(seconds: 3_600, anchor: Self.t0))
        loop.start()
        #expect(await loop.clock.parked() == Self.wake(Self.at(3_600)))
        loop.clock.advance(to: Self.at(3_600))
        _ = await loop.notifier.nextPost()
        _ = await loop.clock.parked()

        loop.clock.advance(to: Self.at(3_660))
        await loop.act("snooze", on: "water")
        #expect(await loop.clock.parked() == Self.at(3_660 + 600))
        loop.clock.advance(to: Self.at(3_660 + 600))
        let again = await loop.notifier.nextPost()
        #expect(again.deliveries.map(\.due) == [Self.at(4_260)])
        // The rule goes on: 11:00.
        #expect(await loop.clock.parked() == Self.wake(Self.at(7_200)))
        loop.clock.advance(to: Self.at(7_200))
        let next = await loop.notifier.nextPost()
        await loop.stop()
        #expect(next.deliveries.map(\.due) == [Self.at(7_200)])
        #expect(loop.notifier.posts.count == 3)
    }

    @Test(.timeLimit(.minutes(1)))
    func aSnoozeFromTheCommandLineAndThenFromTheAlertBringsItBackOnce() async throws {
        let loop = try Loop()
        try loop.schedule("tea", .once(Self.at(60)))
        loop.start()
        _ = await loop.clock.parked()
        loop.clock.advance(to: Self.at(60))
        _ = await loop.notifier.nextPost()
        _ = await loop.clock.parked()

        // `chime snooze tea 5m` at 01:30, then the alert's button at 01:40.
        let answered = try loop.store.answerShown(id: "tea", action: "snooze", snoozeUntil: Self.at(390), now: Self.at(90))
        #expect(answered.snoozedUntil == Self.at(390))
        loop.clock.poke()
        #expect(await loop.clock.parked() == Self.at(390))
        loop.clock.advance(to: Self.at(100))
        await loop.act("snooze", on: "tea")
        // Answered already: the command line refuses a second snooze too.
        let error = #expect(throws: ChimeError.self) {
            try loop.store.answerShown(id: "tea", action: "snooze", snoozeUntil: Self.at(710), now: Self.at(110))
        }
        #expect(error?.code == .conflict)
        loop.clock.advance(to: Self.at(390))
        _ = await loop.notifier.nextPost()
        #expect(await loop.clock.parked() == nil)
        loop.clock.advance(to: Self.at(7_200))
        await loop.stop()
        #expect(loop.notifier.posts.count == 2)
    }

    @Test(.timeLimit(.minutes(1)))
    func doneAfterASnoozeEndsItAndTheRuleGoesOn() async throws {
        let loop = try Loop()
        try loop.schedule("water", .interval(seconds: 3_600, anchor: Self.t0))
        loop.start()
        _ = await loop.clock.parked()
        loop.clock.advance(to: Self.at(3_600))
        _ = await loop.notifier.nextPost()
        _ = await loop.clock.parked()
        loop.clock.advance(to: Self.at(3_660))
        await loop.act("snooze", on: "water")
        #expect(await loop.clock.parked() == Self.at(4_260))

        // `chime done water` before the re-alert: no re-alert; the rule goes on at 11:00
        let done = try loop.store.answerShown(id: "water", action: "done", snoozeUntil: nil, now: Self.at(3_700))
        #expect(done.response == "done")
        loop.clock.poke()
        #expect(await loop.clock.parked() == Self.wake(Self.at(7_200)))
        #expect(try loop.store.ledger(id: "water").map(\.state) == ["posted", "cancelled"])
        #expect(try loop.store.ledger(id: "water").map(\.response) == ["snooze", "done"])
        // And a second done is refused: answered already.
        let error = #expect(throws: ChimeError.self) {
            try loop.store.answerShown(id: "water", action: "done", snoozeUntil: nil, now: Self.at(3_710))
        }
        #expect(error?.code == .conflict)
        await loop.stop()
        #expect(loop.notifier.posts.count == 1)
    }

    @Test func answeringWhatIsNotShowingIsRefused() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try ReminderStore(path: directory.file("chime.sqlite"), schemas: [])
        func answer(_ id: String, at seconds: TimeInterval) -> ChimeError? {
            #expect(throws: ChimeError.self) { try store.answerShown(id: id, action: "done", snoozeUntil: nil, now: Self.at(seconds)) }
        }
        #expect(answer("nope", at: 0)?.message == "no reminder has the id 'nope': see 'chime list'")
        try store.schedule(NewReminder(id: "tea", title: "Tea", trigger: .once(Self.at(60))), now: Self.t0, systemZone: Self.utc)
        #expect(answer("tea", at: 1)?.message == "nothing is showing for 'tea': no alert of it has been shown yet")
        #expect(answer("tea", at: 1)?.code == .notFound)
        let claimed = try store.claimDue(now: Self.at(60), systemZone: Self.utc)
        try store.markPosted(claimed.map(\.key), at: Self.at(60), noteID: "tea")
        // Closed without an answer (expired): still answerable.
        try store.recordResponse(NoteResponse(noteID: "tea", kind: .closed(.expired)), at: Self.at(70))
        #expect(try store.answerShown(id: "tea", action: "done", snoozeUntil: nil, now: Self.at(80)).response == "done")
        #expect(answer("tea", at: 90)?.code == .conflict)
        // Shown over a day ago: no longer showing.
        try store.schedule(NewReminder(id: "old", title: "Old", trigger: .once(Self.at(120))), now: Self.t0, systemZone: Self.utc)
        let old = try store.claimDue(now: Self.at(120), systemZone: Self.utc)
        try store.markPosted(old.map(\.key), at: Self.at(120), noteID: "old")
        #expect(answer("old", at: 120 + 86_401)?.code == .notFound)
    }

    @Test func aReminderKeepsItsLookInTheStore() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try ReminderStore(path: directory.file("chime.sqlite"), schemas: [])
        let look = Presentation(urgency: .low, sticky: true, icon: "/", sound: "message-new-instant")
        // A directory is not an icon.
        #expect(throws: ChimeError.self) {
            try store.schedule(
                NewReminder(id: "a", title: "A", trigger: .once(Self.at(60)), presentation: look),
                now: Self.t0,
                systemZone: Self.utc
            )
        }
        var good = look
        good.icon = "appointment-soon"
        try store.schedule(
            NewReminder(id: "a", title: "A", trigger: .once(Self.at(60)), presentation: good),
            now: Self.t0,
            systemZone: Self.utc
        )
        try store.schedule(NewReminder(id: "b", title: "B", trigger: .once(Self.at(61))), now: Self.t0, systemZone: Self.utc)
        #expect(try store.reminder(id: "a").presentation == good)
        #expect(try store.reminder(id: "b").presentation == Presentation())
        let claimed = try store.claimDue(now: Self.at(61), systemZone: Self.utc)
        #expect(claimed.map(\.presentation) == [good, Presentation()])
    }
}
