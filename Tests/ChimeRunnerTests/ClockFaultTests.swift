import ChimeCore
import ChimeStore
import ChimeTesting
import Foundation
import Testing

/// Clock faults through the injected clock: the wall clock set forward and back, and a
/// suspend, while the scheduler's loop is parked on the manual clock. Several one-shot and
/// recurring reminders around each jump; the test moves the clock only once the loop is parked
/// and awaits posts, so it never sleeps.
struct ClockFaultTests {
    /// 09:00 … in minutes after t0 (Monday 2026-01-05 09:00 UTC), as seconds.
    static func minutes(_ m: Double) -> TimeInterval { m * 60 }

    static func time(_ hour: Int, _ minute: Int) -> LocalTime { LocalTime(hour: hour, minute: minute)! }

    /// One delivery as the tests compare them.
    struct Delivered: Hashable, CustomStringConvertible {
        var id: String
        var due: Date
        var missed: Int
        var lateness: Duration
        var description: String { "\(id) due \(due) missed \(missed) late \(lateness)" }
    }

    static func delivered(_ note: Note) -> [Delivered] {
        note.deliveries.map { Delivered(id: $0.reminderID, due: $0.due, missed: $0.missedCount, lateness: note.lateness(of: $0)) }
    }

    // MARK: Set forward

    @Test(.timeLimit(.minutes(1)))
    func setForwardAnHourFiresWhatBecameDueOnceLateInOneSummary() async throws {
        let h = try Harness()
        defer { h.cleanUp() }
        // Given, at Monday 09:00, four one-shots and two recurring reminders due within the hour,
        // and three due after it
        for (id, m) in [("a", 10.0), ("b", 20), ("c", 40), ("d", 59)] { try h.once(id, at: Self.minutes(m)) }
        try h.schedule("every15", .interval(seconds: 900, anchor: Harness.t0))
        try h.schedule("standup", .weekly(times: [Self.time(9, 30)], days: .monday, zone: .floating))
        try h.schedule("review", .weekly(times: [Self.time(10, 30)], days: .weekdays, zone: .fixed("UTC")))
        try h.once("later", at: Self.minutes(120))
        let loop = Task { await h.scheduler.run(waker: h.clock) }
        #expect(await h.clock.parked() == h.wake(Self.minutes(10)))

        // When, at 09:01, the wall clock is set forward an hour, to 10:01
        h.clock.advance(to: h.at(Self.minutes(1)))
        #expect(await h.clock.parked() == h.wake(Self.minutes(10)))
        h.clock.set(to: h.at(Self.minutes(61)))

        // Then each that became due is delivered once, late by how long ago it fell due, in
        // one summary (six late, more than the threshold of three); every15's four missed
        // occurrences (09:15 … 10:00) come as its latest, with three folded into it
        let summary = await h.notifier.nextPost()
        #expect(await h.clock.parked() == h.wake(Self.minutes(75)))
        #expect(h.notifier.posts.count == 1)
        #expect(summary.id == "summary")
        #expect(summary.title == "6 missed reminders")
        #expect(summary.postedAt == h.at(Self.minutes(61)))
        let expected: [(String, Double, Int)] = [
            ("a", 10, 0), ("b", 20, 0), ("standup", 30, 0), ("c", 40, 0), ("d", 59, 0), ("every15", 60, 3),
        ]
        #expect(
            Self.delivered(summary)
                == expected.map { id, m, missed in
                    Delivered(id: id, due: h.at(Self.minutes(m)), missed: missed, lateness: .seconds(Self.minutes(61 - m)))
                }
        )
        #expect(summary.body == expected.map { "• Title \($0.0)" }.joined(separator: "\n"))

        // And afterwards everything runs on schedule: every15 at 10:15, on time, nothing folded
        h.clock.advance(to: h.at(Self.minutes(75)))
        let quarter = await h.notifier.nextPost()
        #expect(Self.delivered(quarter) == [Delivered(id: "every15", due: h.at(Self.minutes(75)), missed: 0, lateness: .zero)])
        #expect(await h.clock.parked() == h.wake(Self.minutes(90)))

        // 10:30: every15 and review, each on its own (on time, not a summary)
        h.clock.advance(to: h.at(Self.minutes(90)))
        let halfPast = await h.notifier.nextPosts(2)
        #expect(halfPast.allSatisfy { !$0.isSummary && $0.postedAt == h.at(Self.minutes(90)) })
        #expect(
            Set(halfPast.flatMap(Self.delivered)) == [
                Delivered(id: "every15", due: h.at(Self.minutes(90)), missed: 0, lateness: .zero),
                Delivered(id: "review", due: h.at(Self.minutes(90)), missed: 0, lateness: .zero),
            ]
        )
        #expect(await h.clock.parked() == h.wake(Self.minutes(105)))

        h.clock.shutdown()
        await loop.value
        for id in ["a", "b", "c", "d", "standup", "review"] { #expect(h.postCount(of: id) == 1, "posts of \(id)") }
        #expect(h.postCount(of: "later") == 0)
        #expect(try h.store.reminder(id: "later").nextDue == h.at(Self.minutes(120)))
        #expect(try h.store.reminder(id: "standup").nextDue == h.at(Self.minutes(30) + 7 * 86_400))
        let every15 = try h.store.ledger(id: "every15")
        #expect(every15.map(\.due) == [60.0, 75, 90].map { h.at(Self.minutes($0)) })
        #expect(every15.map(\.missedCount) == [3, 0, 0])
        #expect(try h.store.ledger().allSatisfy { $0.state == "posted" })
        #expect(try h.store.ledger().count == 9)
        #expect(h.events.all.isEmpty)
    }

    @Test(.timeLimit(.minutes(1)))
    func setForwardPastAsManyAsTheThresholdFiresEachOnItsOwnLate() async throws {
        let h = try Harness()
        defer { h.cleanUp() }
        // Given three reminders due within the hour: as many as the summary threshold
        #expect(h.scheduler.configuration.summaryThreshold == 3)
        try h.once("tea", at: Self.minutes(5))
        try h.schedule("every20", .interval(seconds: 1_200, anchor: Harness.t0))
        try h.schedule("standup", .weekly(times: [Self.time(9, 30)], days: .weekdays, zone: .floating))
        let loop = Task { await h.scheduler.run(waker: h.clock) }
        #expect(await h.clock.parked() == h.wake(Self.minutes(5)))

        // When the wall clock is set forward an hour, from 09:00 to 10:00:30
        h.clock.set(to: h.at(Self.minutes(60.5)))

        // Then each comes on its own, once, saying how late (every20: 09:20, 09:40, 10:00 → one)
        let notes = await h.notifier.nextPosts(3)
        #expect(await h.clock.parked() == h.wake(Self.minutes(80)))
        #expect(notes.allSatisfy { !$0.isSummary })
        #expect(
            notes.flatMap(Self.delivered) == [
                Delivered(id: "tea", due: h.at(Self.minutes(5)), missed: 0, lateness: .seconds(55.5 * 60)),
                Delivered(id: "standup", due: h.at(Self.minutes(30)), missed: 0, lateness: .seconds(30.5 * 60)),
                Delivered(id: "every20", due: h.at(Self.minutes(60)), missed: 2, lateness: .seconds(30)),
            ]
        )
        h.clock.shutdown()
        await loop.value
        #expect(h.notifier.posts.count == 3)
        #expect(try h.store.ledger().count == 3)
    }

    // MARK: Set back

    @Test(.timeLimit(.minutes(1)))
    func setBackAnHourAfterFiringFiresNothingTwice() async throws {
        let h = try Harness()
        defer { h.cleanUp() }
        // Given, from Monday 09:00, a one-shot at 09:10, every 15 minutes, a 09:30 stand-up, a
        // daily 10:00, and an hourly interval that started a day ago (its grid has 08:00 … too)
        try h.once("tea", at: Self.minutes(10))
        try h.schedule("every15", .interval(seconds: 900, anchor: Harness.t0))
        try h.schedule("standup", .weekly(times: [Self.time(9, 30)], days: .weekdays, zone: .floating))
        try h.schedule("coffee", .weekly(times: [Self.time(10, 0)], days: .everyDay, zone: .floating))
        try h.schedule("hourly", .interval(seconds: 3_600, anchor: Harness.t0.addingTimeInterval(-86_400 + 1_200)))
        let loop = Task { await h.scheduler.run(waker: h.clock) }

        // When the clock runs to 09:30, firing each on time
        for (m, count) in [(10.0, 1), (15, 1), (20, 1), (30, 2)] {
            #expect(await h.clock.parked() == h.wake(Self.minutes(m)))
            h.clock.advance(to: h.at(Self.minutes(m)))
            let notes = await h.notifier.nextPosts(count)
            #expect(notes.allSatisfy { $0.deliveries.allSatisfy { $0.due == h.at(Self.minutes(m)) } })
        }
        #expect(await h.clock.parked() == h.wake(Self.minutes(45)))
        let fired = Set(h.notifier.posts.flatMap(Self.delivered))
        #expect(Set(fired.map(\.id)) == ["tea", "every15", "hourly", "standup"])
        #expect(fired.count == 5)

        // And the wall clock is then set back an hour, to 08:30
        h.clock.set(to: h.at(Self.minutes(-30)))

        // Then the loop wakes, fires nothing, and waits for the same next occurrence as before
        #expect(await h.clock.parked() == h.wake(Self.minutes(45)))
        #expect(h.notifier.attempts == 5)
        #expect(try h.store.reminder(id: "every15").nextDue == h.at(Self.minutes(45)))
        #expect(try h.store.reminder(id: "hourly").nextDue == h.at(Self.minutes(80)))
        #expect(try h.store.reminder(id: "standup").nextDue == h.at(Self.minutes(30) + 86_400))
        #expect(try h.store.reminder(id: "coffee").nextDue == h.at(Self.minutes(60)))

        // And as the hour passes again, what already fired at 09:10, 09:15, 09:20 and 09:30 does
        // not fire again
        for m in [0.0, 10, 15, 20, 30, 44] {
            h.clock.advance(to: h.at(Self.minutes(m)))
            #expect(await h.clock.parked() == h.wake(Self.minutes(45)))
        }
        #expect(h.notifier.attempts == 5)

        // Only what comes next: 09:45, 10:00 (every15 and coffee), 10:20 (hourly), on time
        h.clock.advance(to: h.at(Self.minutes(45)))
        #expect(
            Self.delivered(await h.notifier.nextPost()) == [
                Delivered(id: "every15", due: h.at(Self.minutes(45)), missed: 0, lateness: .zero)
            ]
        )
        #expect(await h.clock.parked() == h.wake(Self.minutes(60)))
        h.clock.advance(to: h.at(Self.minutes(60)))
        #expect(Set(await h.notifier.nextPosts(2).flatMap(Self.delivered).map(\.id)) == ["every15", "coffee"])
        #expect(await h.clock.parked() == h.wake(Self.minutes(75)))

        h.clock.shutdown()
        await loop.value
        #expect(h.notifier.posts.count == 8)
        for id in ["tea", "standup", "hourly"] { #expect(h.postCount(of: id) == 1, "posts of \(id)") }
        let ledger = try h.store.ledger()
        #expect(ledger.count == 8)
        #expect(Set(ledger.map { "\($0.reminderID)@\($0.due.timeIntervalSince1970)" }).count == 8)
        #expect(ledger.allSatisfy { $0.state == "posted" && $0.missedCount == 0 && $0.attempts == 0 })
    }

    @Test(.timeLimit(.minutes(1)))
    func setBackWhileAnOccurrenceWaitsForItsInstantFiresItOnceWhenItComes() async throws {
        let h = try Harness()
        defer { h.cleanUp() }
        #expect(h.scheduler.configuration.lookahead > .zero)
        try h.once("tea", at: Self.minutes(10))
        try h.schedule("every10", .interval(seconds: 600, anchor: Harness.t0))
        let loop = Task { await h.scheduler.run(waker: h.clock) }

        // Given both 09:10 occurrences recorded ahead and waiting for their instant
        let early = try #require(await h.clock.parked())
        h.clock.advance(to: early)
        #expect(await h.clock.parked() == h.at(Self.minutes(10)))
        #expect(try h.store.ledger().map(\.state) == ["due", "due"])

        // When the wall clock is set back an hour, just before that instant
        h.clock.set(to: h.at(Self.minutes(10 - 60)))

        // Then nothing fires now; the loop waits for the recorded instant, an hour away again
        #expect(await h.clock.parked() == h.at(Self.minutes(10)))
        #expect(h.notifier.attempts == 0)

        // And at it, each fires once, on time
        h.clock.advance(to: h.at(Self.minutes(10)))
        let notes = await h.notifier.nextPosts(2)
        #expect(
            Set(notes.flatMap(Self.delivered)) == [
                Delivered(id: "tea", due: h.at(Self.minutes(10)), missed: 0, lateness: .zero),
                Delivered(id: "every10", due: h.at(Self.minutes(10)), missed: 0, lateness: .zero),
            ]
        )
        #expect(await h.clock.parked() == h.wake(Self.minutes(20)))
        h.clock.shutdown()
        await loop.value
        #expect(h.notifier.attempts == 2)
        #expect(try h.store.ledger().map(\.state) == ["posted", "posted"])
    }

    @Test(.timeLimit(.minutes(1)))
    func setForwardWhileAnOccurrenceWaitsForItsInstantFiresItOnceLate() async throws {
        let h = try Harness()
        defer { h.cleanUp() }
        try h.schedule("every10", .interval(seconds: 600, anchor: Harness.t0))
        let loop = Task { await h.scheduler.run(waker: h.clock) }

        // Given the 09:10 occurrence recorded ahead and waiting for its instant
        let early = try #require(await h.clock.parked())
        h.clock.advance(to: early)
        #expect(await h.clock.parked() == h.at(Self.minutes(10)))

        // When the wall clock is set forward an hour, to 10:09:59.975
        h.clock.set(to: early.addingTimeInterval(3_600))

        // Then 09:10 fires once, late, and the five missed since (09:20 … 10:00) come as one,
        // the latest, folding four
        let notes = await h.notifier.nextPosts(2)
        #expect(
            notes.flatMap(Self.delivered).map { [$0.id, "\($0.due.timeIntervalSince(Harness.t0))", "\($0.missed)"] } == [
                ["every10", "600.0", "0"], ["every10", "3600.0", "4"],
            ]
        )
        #expect(notes.map { ($0.lateness(of: $0.deliveries[0]) / .milliseconds(1)).rounded() } == [3_599_975, 599_975])
        // and 10:10, now within the look-ahead, is recorded and waited for
        #expect(await h.clock.parked() == h.at(Self.minutes(70)))
        h.clock.advance(to: h.at(Self.minutes(70)))
        let next = await h.notifier.nextPost()
        #expect(Self.delivered(next) == [Delivered(id: "every10", due: h.at(Self.minutes(70)), missed: 0, lateness: .zero)])
        #expect(await h.clock.parked() == h.wake(Self.minutes(80)))
        h.clock.shutdown()
        await loop.value
        #expect(h.notifier.attempts == 3)
        #expect(try h.store.ledger(id: "every10").map(\.missedCount) == [0, 4, 0])
    }

    @Test(.timeLimit(.minutes(1)))
    func setBackDuringARetryBackoffRetriesAfterTheBackoff() async throws {
        let h = try Harness()
        defer { h.cleanUp() }
        // Given a one-shot whose post at 09:10 failed, to be retried a second later
        try h.once("tea", at: Self.minutes(10))
        h.notifier.failNext(1)
        let loop = Task { await h.scheduler.run(waker: h.clock) }
        #expect(await h.clock.parked() == h.wake(Self.minutes(10)))
        h.clock.advance(to: h.at(Self.minutes(10)))
        #expect(await h.clock.parked() == h.at(Self.minutes(10) + 1))

        // When the wall clock is set back an hour during that second
        h.clock.set(to: h.at(Self.minutes(10 - 60)))

        // Then it is retried after the backoff (a second, now 08:10:01), not an hour later
        let retryAt = try #require(await h.clock.parked())
        #expect(retryAt == h.at(Self.minutes(10 - 60) + 1), "retry at \(retryAt)")
        #expect(h.notifier.attempts == 1)

        // And it is delivered once, when retried, saying how late it is for its 09:10
        h.clock.advance(to: retryAt)
        let note = await h.notifier.nextPost()
        #expect(note.id == "tea")
        #expect(note.deliveries.map(\.due) == [h.at(Self.minutes(10))])
        #expect(await h.clock.parked() == nil)
        h.clock.shutdown()
        await loop.value
        #expect(h.notifier.attempts == 2)
        #expect(try h.store.ledger().map(\.state) == ["posted"])
    }

    // MARK: Suspend

    @Test(.timeLimit(.minutes(1)))
    func suspendOfThreeHoursFiresEachRecurringReminderOnceForTheSpanInOneSummary() async throws {
        let h = try Harness()
        defer { h.cleanUp() }
        // Given, at Monday 09:00: every 15 minutes, hourly at half past, medicine at 10:00 and
        // 11:00, a 09:30 stand-up, lunch at 13:00, and a one-shot at 10:00
        try h.schedule("every15", .interval(seconds: 900, anchor: Harness.t0))
        try h.schedule("hourly", .interval(seconds: 3_600, anchor: Harness.t0.addingTimeInterval(-1_800)))
        try h.schedule("meds", .weekly(times: [Self.time(10, 0), Self.time(11, 0)], days: .everyDay, zone: .floating))
        try h.schedule("standup", .weekly(times: [Self.time(9, 30)], days: .weekdays, zone: .fixed("UTC")))
        try h.schedule("lunch", .weekly(times: [Self.time(13, 0)], days: .everyDay, zone: .floating))
        try h.once("tea", at: Self.minutes(60))
        let loop = Task { await h.scheduler.run(waker: h.clock) }
        #expect(await h.clock.parked() == h.wake(Self.minutes(15)))

        // When, at 09:05, the machine sleeps for three hours and the loop is woken on resume
        h.clock.advance(to: h.at(Self.minutes(5)))
        #expect(await h.clock.parked() == h.wake(Self.minutes(15)))
        h.clock.set(to: h.at(Self.minutes(185)))

        // Then each reminder fires once for the span, saying how many it folds, in one summary
        let summary = await h.notifier.nextPost()
        #expect(await h.clock.parked() == h.wake(Self.minutes(195)))
        #expect(h.notifier.posts.count == 1)
        #expect(summary.id == "summary")
        #expect(summary.title == "5 missed reminders")
        #expect(summary.postedAt == h.at(Self.minutes(185)))
        let span: [(String, Double, Int)] = [
            ("standup", 30, 0),  // 09:30
            ("meds", 120, 1),  // 10:00, 11:00
            ("tea", 60, 0),  // 10:00
            ("hourly", 150, 2),  // 09:30, 10:30, 11:30
            ("every15", 180, 11),  // 09:15 … 12:00: twelve
        ]
        let expected = Set(
            span.map { id, m, missed in
                Delivered(id: id, due: h.at(Self.minutes(m)), missed: missed, lateness: .seconds(Self.minutes(185 - m)))
            }
        )
        #expect(Set(Self.delivered(summary)) == expected)
        #expect(summary.deliveries.map(\.due) == summary.deliveries.map(\.due).sorted())
        for id in ["every15", "hourly", "meds", "standup", "tea"] { #expect(summary.body.contains("• Title \(id)"), "\(id)") }

        // And the ledger has one row per reminder for the span
        let ledger = try h.store.ledger()
        #expect(ledger.count == 5)
        #expect(Set(ledger.map(\.reminderID)) == ["every15", "hourly", "meds", "standup", "tea"])
        #expect(
            Set(
                ledger.map {
                    Delivered(
                        id: $0.reminderID,
                        due: $0.due,
                        missed: $0.missedCount,
                        lateness: .seconds(Self.minutes(185)) - .seconds($0.due.timeIntervalSince(Harness.t0))
                    )
                }
            )
                == expected
        )
        #expect(ledger.allSatisfy { $0.state == "posted" && $0.postedAt == h.at(Self.minutes(185)) })

        // And they continue on schedule: 12:15 every15, 12:30 every15 and hourly, 13:00 lunch …
        h.clock.advance(to: h.at(Self.minutes(195)))
        #expect(
            Self.delivered(await h.notifier.nextPost()) == [
                Delivered(id: "every15", due: h.at(Self.minutes(195)), missed: 0, lateness: .zero)
            ]
        )
        #expect(await h.clock.parked() == h.wake(Self.minutes(210)))
        h.clock.advance(to: h.at(Self.minutes(210)))
        #expect(Set(await h.notifier.nextPosts(2).flatMap(Self.delivered).map(\.id)) == ["every15", "hourly"])
        #expect(await h.clock.parked() == h.wake(Self.minutes(225)))
        h.clock.advance(to: h.at(Self.minutes(225)))
        #expect(Self.delivered(await h.notifier.nextPost()).map(\.id) == ["every15"])
        #expect(await h.clock.parked() == h.wake(Self.minutes(240)))
        h.clock.advance(to: h.at(Self.minutes(240)))
        let one = await h.notifier.nextPosts(2)
        #expect(one.allSatisfy { !$0.isSummary })
        #expect(Set(one.flatMap(Self.delivered).map(\.id)) == ["every15", "lunch"])
        #expect(try h.store.reminder(id: "meds").nextDue == h.at(Self.minutes(60) + 86_400))
        #expect(try h.store.reminder(id: "standup").nextDue == h.at(Self.minutes(30) + 86_400))

        h.clock.shutdown()
        await loop.value
        for id in ["tea", "standup", "meds"] { #expect(h.postCount(of: id) == 1, "posts of \(id)") }
        #expect(h.events.all.isEmpty)
    }

    @Test(.timeLimit(.minutes(1)))
    func suspendOverASpringForwardNightFiresTheShiftedTimeOnce() async throws {
        let h = try Harness()
        defer { h.cleanUp() }
        // New York springs forward on Sunday 2026-03-08 at 07:00 UTC: 02:00 EST becomes 03:00 EDT.
        let newYork = ZoneRule.fixed("America/New_York")
        let sleep = Date(timeIntervalSince1970: 1_772_947_860)  // 2026-03-08T05:31Z, 00:31 EST
        #expect(ISO8601DateFormatter().string(from: sleep) == "2026-03-08T05:31:00Z")
        func utc(_ hour: Int, _ minute: Int, day: Int = 8) -> Date {
            let seconds: Int = (day - 8) * 86_400 + hour * 3_600 + minute * 60
            return Date(timeIntervalSince1970: 1_772_928_000 + TimeInterval(seconds))
        }
        h.clock.set(to: sleep)
        try h.schedule("early", .weekly(times: [Self.time(1, 30)], days: .everyDay, zone: newYork))  // 06:30Z
        try h.schedule("gap", .weekly(times: [Self.time(2, 30)], days: .everyDay, zone: newYork))  // none: 03:30 EDT, 07:30Z
        try h.schedule("four", .weekly(times: [Self.time(4, 0)], days: .sunday, zone: newYork))  // 08:00Z
        try h.schedule("hourly", .interval(seconds: 3_600, anchor: utc(5, 0)))  // 06:00Z, 07:00Z, 08:00Z
        try h.schedule("every15", .interval(seconds: 900, anchor: utc(5, 30)))  // 05:45Z … 08:30Z
        #expect(try h.store.reminder(id: "gap").nextDue == utc(7, 30))
        let loop = Task { await h.scheduler.run(waker: h.clock) }
        #expect(await h.clock.parked() == utc(5, 45).addingTimeInterval(-0.025))

        // When the machine sleeps three hours over the transition, to 04:31 EDT
        h.clock.set(to: sleep.addingTimeInterval(3 * 3_600))

        // Then each fires once for the span, 02:30 at its shifted instant, in one summary
        let summary = await h.notifier.nextPost()
        #expect(summary.id == "summary")
        #expect(
            Set(Self.delivered(summary).map { "\($0.id) \(ISO8601DateFormatter().string(from: $0.due)) \($0.missed)" }) == [
                "early 2026-03-08T06:30:00Z 0", "gap 2026-03-08T07:30:00Z 0", "four 2026-03-08T08:00:00Z 0",
                "hourly 2026-03-08T08:00:00Z 2", "every15 2026-03-08T08:30:00Z 11",
            ]
        )
        #expect(await h.clock.parked() == utc(8, 45).addingTimeInterval(-0.025))
        #expect(try h.store.ledger().count == 5)

        // And they continue on schedule in EDT
        #expect(try h.store.reminder(id: "early").nextDue == utc(5, 30, day: 9))
        #expect(try h.store.reminder(id: "gap").nextDue == utc(6, 30, day: 9))
        #expect(try h.store.reminder(id: "four").nextDue == utc(8, 0, day: 15))
        #expect(try h.store.reminder(id: "hourly").nextDue == utc(9, 0))
        h.clock.shutdown()
        await loop.value
        #expect(h.notifier.posts.count == 1)
    }

    @Test(.timeLimit(.minutes(1)))
    func suspendOverAFallBackNightFiresTheRepeatedTimeOnce() async throws {
        let h = try Harness()
        defer { h.cleanUp() }
        // New York falls back on Sunday 2026-11-01 at 06:00 UTC: 02:00 EDT becomes 01:00 EST, so
        // 01:30 comes twice (05:30Z and 06:30Z).
        let newYork = ZoneRule.fixed("America/New_York")
        func utc(_ hour: Int, _ minute: Int, day: Int = 1) -> Date {
            let seconds: Int = (day - 1) * 86_400 + hour * 3_600 + minute * 60
            return Date(timeIntervalSince1970: 1_793_491_200 + TimeInterval(seconds))
        }
        let sleep = utc(4, 31)  // 00:31 EDT
        h.clock.set(to: sleep)
        try h.schedule("early", .weekly(times: [Self.time(1, 30)], days: .everyDay, zone: newYork))  // 05:30Z only
        try h.schedule("two", .weekly(times: [Self.time(2, 0)], days: .everyDay, zone: newYork))  // 07:00Z
        try h.schedule("hourly", .interval(seconds: 3_600, anchor: utc(4, 0)))  // 05:00Z, 06:00Z, 07:00Z
        try h.schedule("every15", .interval(seconds: 900, anchor: utc(4, 30)))  // 04:45Z … 07:30Z
        let loop = Task { await h.scheduler.run(waker: h.clock) }
        #expect(await h.clock.parked() == utc(4, 45).addingTimeInterval(-0.025))

        // When the machine sleeps three hours over the transition, to 02:31 EST
        h.clock.set(to: sleep.addingTimeInterval(3 * 3_600))

        // Then 01:30 fires once, at its first occurrence, with the others in one summary
        let summary = await h.notifier.nextPost()
        #expect(summary.id == "summary")
        #expect(
            Set(Self.delivered(summary).map { "\($0.id) \(ISO8601DateFormatter().string(from: $0.due)) \($0.missed)" }) == [
                "early 2026-11-01T05:30:00Z 0", "two 2026-11-01T07:00:00Z 0", "hourly 2026-11-01T07:00:00Z 2",
                "every15 2026-11-01T07:30:00Z 11",
            ]
        )
        #expect(await h.clock.parked() == utc(7, 45).addingTimeInterval(-0.025))
        #expect(try h.store.ledger(id: "early").map(\.due) == [utc(5, 30)])
        #expect(try h.store.reminder(id: "early").nextDue == utc(6, 30, day: 2))
        #expect(try h.store.reminder(id: "two").nextDue == utc(7, 0, day: 2))
        h.clock.shutdown()
        await loop.value
        #expect(h.notifier.posts.count == 1)
    }
}

extension Harness {
    /// Schedules reminder `id` with `trigger`, as of the clock's now.
    @discardableResult
    fileprivate func schedule(_ id: String, _ trigger: Trigger) throws -> Reminder {
        try store.schedule(
            NewReminder(id: id, title: "Title \(id)", trigger: trigger),
            replace: false,
            now: clock.now(),
            systemZone: Harness.utc
        ).reminder
    }
}
