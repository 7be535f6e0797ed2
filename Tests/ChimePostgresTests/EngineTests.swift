import ChimeCore
import ChimeStore
import ChimeTesting
import Foundation
import Synchronization
import Testing

@testable import ChimePostgres

#if canImport(Glibc)
import Glibc
#endif

/// One engine, two ledgers: ChimeCore's Scheduler drives the SQLite store (a real
/// file) and the PostgreSQL ledger (a database of its own on the test server) through the same
/// passes, and what a person sees is the same. No test sleeps: the SQLite side's time is a
/// ``ManualWallClock``; the PostgreSQL side's is the database's, moved on by
/// ``PostgresStore/advanceClock(by:)`` (every stored instant moved earlier).
@Suite(.timeLimit(.minutes(1)))
struct EngineTests {
    enum Ledger: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case sqlite, postgresql
        var testDescription: String { rawValue }
    }

    static let utc = TimeZone(identifier: "UTC")!

    /// A Scheduler on one ledger, with what a test needs around it.
    struct Engine: Sendable {
        let scheduler: Scheduler
        let notifier: RecordingNotifier
        /// The ledger's now.
        let now: @Sendable () throws -> Date
        /// Schedules a reminder.
        let schedule: @Sendable (NewReminder) throws -> Void
        /// Moves the ledger's time on by this many seconds.
        let advance: @Sendable (Double) throws -> Void
        /// Ids of the pending reminders.
        let pending: @Sendable () throws -> [String]
        /// The ledger the Scheduler drives.
        let ledger: any SchedulerStore
        /// Asks for quiet until this instant (nil: ends it), as `chime quiet` does.
        let quietUntil: @Sendable (Date?) throws -> Void
        /// Cancels a reminder, as `chime cancel` does.
        let cancel: @Sendable (String) throws -> Void
    }

    /// The Scheduler's configuration in these tests: the same on both ledgers.
    static var configuration: Scheduler.Configuration {
        var configuration = PostgresRunner.defaultConfiguration
        configuration.retryBase = .seconds(5)
        return configuration
    }

    /// Runs `body` with an engine on a new, empty ledger of `ledger`.
    func withEngine(_ ledger: Ledger, _ body: @Sendable (Engine) async throws -> Void) async throws {
        let notifier = RecordingNotifier()
        switch ledger {
        case .sqlite:
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chime-engine-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let store = try ReminderStore(path: directory.appendingPathComponent("chime.sqlite").path, schemas: [])
            let clock = ManualWallClock(now: Date(timeIntervalSince1970: 1_795_400_000))
            let scheduler = Scheduler(
                store: store,
                notifier: notifier,
                clock: clock,
                configuration: Self.configuration,
                systemZone: { Self.utc }
            )
            try await body(
                Engine(
                    scheduler: scheduler,
                    notifier: notifier,
                    now: { clock.now() },
                    schedule: { try store.schedule($0, now: clock.now(), systemZone: Self.utc) },
                    advance: { clock.advance(by: $0) },
                    pending: { try store.pending().map(\.id) },
                    ledger: store,
                    quietUntil: { until in try store.updateQuiet { $0.until = until } },
                    cancel: { _ = try store.cancel(id: $0, now: clock.now()) }
                )
            )
        case .postgresql:
            try await withFreshDatabase { url in
                let store = PostgresStore(url)
                let ledger = try PostgresLedger(store: store, owner: "engine", systemZone: { Self.utc })
                let scheduler = Scheduler(
                    store: ledger,
                    notifier: notifier,
                    clock: ledger.clock,
                    configuration: Self.configuration,
                    systemZone: { Self.utc }
                )
                try await body(
                    Engine(
                        scheduler: scheduler,
                        notifier: notifier,
                        now: { try store.databaseNow() },
                        schedule: { try store.schedule($0, systemZone: Self.utc) },
                        advance: { try store.advanceClock(by: $0) },
                        pending: { try store.pending().map(\.id) },
                        ledger: ledger,
                        quietUntil: { until in try store.updateQuiet { $0.until = until } },
                        cancel: { _ = try store.cancelReporting(ids: [$0]) }
                    )
                )
                store.client.reset()
            }
        }
    }

    @Test("A due one-shot is posted once, and is no longer pending", arguments: Ledger.allCases)
    func aDueOneShotIsPostedOnce(_ ledger: Ledger) async throws {
        try await withEngine(ledger) { engine in
            try engine.schedule(
                NewReminder(id: "tea", title: "Tea", body: "Green", trigger: .once(try engine.now().addingTimeInterval(600)))
            )
            await engine.scheduler.runPass()
            #expect(engine.notifier.posts.isEmpty, "nothing is due yet")
            try engine.advance(600.5)
            await engine.scheduler.runPass()
            await engine.scheduler.runPass()
            #expect(engine.notifier.posts.map(\.title) == ["Tea"])
            #expect(engine.notifier.posts.first?.body == "Green")
            #expect(try engine.pending() == [])
        }
    }

    @Test("A reminder's urgency, sticky, icon and sound are on its alert", arguments: Ledger.allCases)
    func thePresentationIsOnTheAlert(_ ledger: Ledger) async throws {
        try await withEngine(ledger) { engine in
            let look = Presentation(urgency: .critical, sticky: true, icon: "appointment-soon", sound: "bell")
            try engine.schedule(
                NewReminder(id: "tea", title: "Tea", trigger: .once(try engine.now().addingTimeInterval(600)), presentation: look)
            )
            try engine.advance(600.5)
            await engine.scheduler.runPass()
            await engine.scheduler.runPass()
            let note = try #require(engine.notifier.posts.first)
            #expect(note.urgency == .critical && note.sticky, "\(note)")
            #expect(note.icon == "appointment-soon" && note.sound == "bell", "\(note)")
        }
    }

    /// The table: a runner down for 20 s, an `every 5s` and five one-shots due
    /// meanwhile. SQLite showed one summary; PostgreSQL showed seven alerts.
    @Test("What fell due while no runner ran is one summary", arguments: Ledger.allCases)
    func whatFellDueWhileDownIsOneSummary(_ ledger: Ledger) async throws {
        try await withEngine(ledger) { engine in
            let start = try engine.now()
            try engine.schedule(NewReminder(id: "tick", title: "Tick", trigger: .interval(seconds: 5, anchor: start)))
            for index in 1...5 {
                try engine.schedule(
                    NewReminder(id: "once\(index)", title: "Once \(index)", trigger: .once(start.addingTimeInterval(Double(index))))
                )
            }
            try engine.advance(21.5)
            await engine.scheduler.runPass()
            await engine.scheduler.runPass()
            let posts = engine.notifier.posts
            #expect(posts.map(\.title) == ["6 missed reminders"])
            let tick = posts.first?.deliveries.first { $0.reminderID == "tick" }
            #expect(tick?.missedCount == 3, "the ticks at 5, 10 and 15 s fold into the one at 20 s, late 1.5 s")
            // The next tick comes on its own, on time.
            try engine.advance(5)
            await engine.scheduler.runPass()
            #expect(engine.notifier.posts.map(\.title) == ["6 missed reminders", "Tick"])
            #expect(engine.notifier.posts.last?.deliveries.first?.missedCount == 0)
        }
    }

    @Test("After days down, a recurring reminder fires once, counting what it missed", arguments: Ledger.allCases)
    func catchUpAfterDaysIsOneAlert(_ ledger: Ledger) async throws {
        try await withEngine(ledger) { engine in
            try engine.schedule(NewReminder(id: "minute", title: "Minute", trigger: .interval(seconds: 60, anchor: try engine.now())))
            try engine.advance(3 * 86_400 + 30)
            await engine.scheduler.runPass()
            await engine.scheduler.runPass()
            #expect(engine.notifier.posts.map(\.title) == ["Minute"])
            #expect(engine.notifier.posts.first?.deliveries.first?.missedCount == 3 * 1_440 - 1)
            #expect(try engine.pending() == ["minute"])
        }
    }

    /// An alert's Snooze as the Scheduler's loop handles it: the answer recorded in the ledger
    /// (the first stands), then the plain family's snooze, then the passes.
    @Test("An alert snoozed from its button comes back once, after the snooze", arguments: Ledger.allCases)
    func anAlertSnoozedComesBackOnce(_ ledger: Ledger) async throws {
        try await withEngine(ledger) { engine in
            try engine.schedule(NewReminder(id: "tea", title: "Tea", trigger: .once(try engine.now().addingTimeInterval(60))))
            try engine.advance(60.5)
            await engine.scheduler.runPass()
            #expect(engine.notifier.posts.map(\.title) == ["Tea"])
            let snooze = NoteResponse(noteID: "tea", kind: .action(PlainReminders.snooze))
            #expect(try engine.ledger.recordResponse(snooze, at: try engine.now()) == PlainReminders.plainKind)
            #expect(try engine.ledger.recordResponse(snooze, at: try engine.now()) == nil, "the first answer stands")
            let family = PlainReminders(store: engine.ledger, systemZone: { Self.utc })
            let answer = try family.answer(snooze, at: try engine.now())
            #expect(answer.changed)
            #expect(answer.confirmation?.title.hasPrefix("Snoozed until") == true, "\(String(describing: answer.confirmation))")
            // One re-alert per shown alert, however often it is asked.
            #expect(try engine.ledger.snoozeShown(id: "tea", until: try engine.now().addingTimeInterval(60), at: try engine.now()) == false)
            await engine.scheduler.runPass()
            try engine.advance(599)
            await engine.scheduler.runPass()
            #expect(engine.notifier.posts.count == 1, "not before the snooze ends")
            try engine.advance(1.5)
            await engine.scheduler.runPass()
            try engine.advance(1_200)
            await engine.scheduler.runPass()
            #expect(engine.notifier.posts.map(\.title) == ["Tea", "Tea"], "back once")
        }
    }

    /// Quiet from `chime quiet`: what falls due is held in the ledger, and comes as one summary
    /// when it ends; what falls due at its end comes on its own.
    @Test("Quiet holds what falls due, then one summary", arguments: Ledger.allCases)
    func quietHoldsThenOneSummary(_ ledger: Ledger) async throws {
        try await withEngine(ledger) { engine in
            let start = try engine.now()
            try engine.quietUntil(start.addingTimeInterval(1_800))
            try engine.schedule(NewReminder(id: "once1", title: "Once 1", trigger: .once(start.addingTimeInterval(60))))
            try engine.schedule(NewReminder(id: "once2", title: "Once 2", trigger: .once(start.addingTimeInterval(120))))
            try engine.schedule(NewReminder(id: "tick", title: "Tick", trigger: .interval(seconds: 600, anchor: start)))
            for step in [60.5, 60.0, 480.0, 600.0] {
                try engine.advance(step)
                await engine.scheduler.runPass()
            }
            #expect(engine.notifier.posts.isEmpty, "held while quiet: \(engine.notifier.posts.map(\.title))")
            #expect(try engine.ledger.heldOccurrences().map(\.reminderID) == ["once1", "once2", "tick", "tick"])
            try engine.advance(600)
            await engine.scheduler.runPass()
            await engine.scheduler.runPass()
            #expect(engine.notifier.posts.map(\.title) == ["Tick", "4 reminders held while quiet"])
            #expect(try engine.ledger.heldOccurrences().isEmpty)
            try engine.advance(600)
            await engine.scheduler.runPass()
            #expect(engine.notifier.posts.map(\.title) == ["Tick", "4 reminders held while quiet", "Tick"])
        }
    }

    /// A one-shot that fired, with an alert still to come (a snooze's re-alert, one quiet
    /// holds): `chime cancel` cancels that alert, and nothing more is shown.
    @Test("A cancel stops a snoozed one-shot's re-alert and a held one", arguments: Ledger.allCases)
    func aCancelStopsASnoozeAndAHold(_ ledger: Ledger) async throws {
        try await withEngine(ledger) { engine in
            let start = try engine.now()
            try engine.schedule(NewReminder(id: "tea", title: "Tea", trigger: .once(start.addingTimeInterval(60))))
            try engine.advance(60.5)
            await engine.scheduler.runPass()
            let snooze = NoteResponse(noteID: "tea", kind: .action(PlainReminders.snooze))
            #expect(try engine.ledger.recordResponse(snooze, at: try engine.now()) == PlainReminders.plainKind)
            #expect(try engine.ledger.snoozeShown(id: "tea", until: try engine.now().addingTimeInterval(600), at: try engine.now()))
            try engine.cancel("tea")
            try engine.quietUntil(try engine.now().addingTimeInterval(600))
            try engine.schedule(NewReminder(id: "pot", title: "Pot", trigger: .once(try engine.now().addingTimeInterval(60))))
            try engine.advance(60.5)
            await engine.scheduler.runPass()
            #expect(try engine.ledger.heldOccurrences().map(\.reminderID) == ["pot"])
            try engine.cancel("pot")
            try engine.quietUntil(nil)
            try engine.advance(1_200)
            await engine.scheduler.runPass()
            await engine.scheduler.runPass()
            #expect(engine.notifier.posts.map(\.title) == ["Tea"], "nothing after the cancels")
        }
    }

    @Test("A failed post is retried after its backoff and shown once", arguments: Ledger.allCases)
    func aFailedPostIsRetriedAfterItsBackoff(_ ledger: Ledger) async throws {
        try await withEngine(ledger) { engine in
            try engine.schedule(NewReminder(id: "pay", title: "Pay", trigger: .once(try engine.now().addingTimeInterval(60))))
            try engine.advance(60.5)
            engine.notifier.failNext()
            await engine.scheduler.runPass()
            #expect(engine.notifier.attempts == 1)
            #expect(engine.notifier.posts.isEmpty)
            // Before the retry time (5 s): nothing.
            try engine.advance(4)
            await engine.scheduler.runPass()
            #expect(engine.notifier.attempts == 1)
            try engine.advance(1.5)
            await engine.scheduler.runPass()
            await engine.scheduler.runPass()
            #expect(engine.notifier.posts.map(\.title) == ["Pay"])
            #expect(engine.notifier.posts.first?.deliveries.first?.attempt == 2)
        }
    }

    @Test("The next deadline is the next due instant, on the ledger's clock", arguments: Ledger.allCases)
    func theNextDeadlineIsTheNextDueInstant(_ ledger: Ledger) async throws {
        try await withEngine(ledger) { engine in
            // (20 s: within the PostgreSQL runner's 30 s poll, which bounds every wait.)
            let due = try engine.now().addingTimeInterval(20)
            try engine.schedule(NewReminder(id: "later", title: "Later", trigger: .once(due)))
            let next = await engine.scheduler.runPass()
            let wait = try #require(next).timeIntervalSince(try engine.now())
            #expect(wait > 15 && wait <= 20.01, "\(wait) s")
        }
    }
}

/// What only the PostgreSQL ledger does: several runners, leases, the check before a post,
/// the LISTEN connection, read-only nodes.
@Suite(.timeLimit(.minutes(1)))
struct PostgresLedgerTests {
    static let utc = TimeZone(identifier: "UTC")!

    /// Schedules one-shots ten minutes ahead, then moves the database's clock past them.
    static func due(_ ids: [String], on store: PostgresStore, channel: String = "default") throws {
        let now = try store.databaseNow()
        for (index, id) in ids.enumerated() {
            try store.schedule(
                NewReminder(id: id, title: "Do \(id)", trigger: .once(now.addingTimeInterval(600 + Double(index) / 1000))),
                systemZone: utc,
                channel: channel
            )
        }
        try store.advanceClock(by: 601)
    }

    static func scheduler(_ ledger: PostgresLedger, _ notifier: any Notifier) -> Scheduler {
        Scheduler(
            store: ledger,
            notifier: notifier,
            clock: ledger.clock,
            configuration: PostgresRunner.defaultConfiguration,
            systemZone: { utc }
        )
    }

    @Test func twoRunnersPostFiftyDueRemindersExactlyOnceBetweenThem() async throws {
        try await withFreshDatabase { url in
            let store = PostgresStore(url)
            try Self.due((0..<50).map { "r\($0)" }, on: store)
            let notifiers = [RecordingNotifier(), RecordingNotifier()]
            let schedulers = try ["a", "b"].enumerated().map { index, owner in
                Self.scheduler(try PostgresLedger(store: PostgresStore(url), owner: owner), notifiers[index])
            }
            async let a: Void = { for _ in 0..<5 { await schedulers[0].runPass() } }()
            async let b: Void = { for _ in 0..<5 { await schedulers[1].runPass() } }()
            _ = await (a, b)
            let ids = notifiers.flatMap(\.posts).flatMap { $0.deliveries.map(\.reminderID) }
            #expect(ids.count == 50)
            #expect(Set(ids).count == 50)
            #expect(try store.count("SELECT count(*) FROM occurrence WHERE state = 'posted'") == 50)
        }
    }

    @Test func aRunnerServingDeskLeavesDefaultRemindersAlone() async throws {
        try await withFreshDatabase { url in
            let store = PostgresStore(url)
            try Self.due(["mine"], on: store, channel: "desk")
            try Self.due(["other"], on: store)
            let notifier = RecordingNotifier()
            let scheduler = Self.scheduler(try PostgresLedger(store: PostgresStore(url), owner: "desk", channels: ["desk"]), notifier)
            await scheduler.runPass()
            #expect(notifier.posts.map(\.id) == ["mine"])
            #expect(try store.ledger(id: "other").map(\.state) == ["pending"])
        }
    }

    @Test func badChannelsAreRefused() async throws {
        try await withFreshDatabase { url in
            #expect(throws: ChimeError.self) { try PostgresLedger(store: PostgresStore(url), owner: "x", channels: []) }
            #expect(throws: ChimeError.self) { try PostgresLedger(store: PostgresStore(url), owner: "x", channels: ["Desk Top"]) }
        }
    }

    /// A cancel from another host after the claim: the check just before the post stops it,
    /// records it cancelled, and counts it.
    @Test func aCancelBetweenTheClaimAndThePostStopsThePost() async throws {
        try await withFreshDatabase { url in
            let store = PostgresStore(url)
            try Self.due(["first", "second"], on: store)
            let recording = RecordingNotifier()
            // While the first is shown, another host cancels the second (claimed with it).
            let notifier = HookNotifier(recording: recording) { note in
                if note.id == "first" { try store.cancel(id: "second") }
            }
            let ledger = try PostgresLedger(store: PostgresStore(url), owner: "a")
            await Self.scheduler(ledger, notifier).runPass()
            #expect(recording.posts.map(\.id) == ["first"])
            #expect(ledger.counters.cancelledBeforePost == 1)
            #expect(try store.ledger(id: "second").map(\.state) == ["cancelled"])
        }
    }

    /// A runner stalled past its lease while posting: another runner's reaper takes the
    /// occurrence back and claims it; the stalled runner's mark finds the lease lost, writes
    /// nothing, and counts it.
    @Test func aLeaseLostBeforeTheMarkIsCountedAndNotMarked() async throws {
        try await withFreshDatabase { url in
            let store = PostgresStore(url)
            try Self.due(["slow"], on: store)
            let other = try PostgresLedger(store: PostgresStore(url), owner: "b")
            let recording = RecordingNotifier()
            let notifier = HookNotifier(recording: recording) { _ in
                try store.expireLeases()
                _ = try other.claimDue(now: Date(), horizon: Date(), systemZone: Self.utc)
            }
            let ledger = try PostgresLedger(store: PostgresStore(url), owner: "a")
            await Self.scheduler(ledger, notifier).runPass()
            #expect(recording.posts.map(\.id) == ["slow"])
            #expect(ledger.counters.leaseLost == 1)
            #expect(ledger.counters.posted == 0)
            #expect(try store.ledger(id: "slow").map(\.owner) == ["b"])
        }
    }

    /// SIGTERM in the middle of a batch: the alert being shown is shown and recorded; the rest
    /// are handed back at once, for the other runners, rather than after the lease.
    @Test func aStopPostsTheAlertInHandAndHandsTheRestBack() async throws {
        try await withFreshDatabase { url in
            let store = PostgresStore(url)
            try Self.due(["one", "two", "three"], on: store)
            let ledger = try PostgresLedger(store: PostgresStore(url), owner: "a")
            let recording = RecordingNotifier()
            let notifier = HookNotifier(recording: recording) { _ in ledger.stop() }
            await Self.scheduler(ledger, notifier).runPass()
            #expect(recording.posts.map(\.id) == ["one"])
            #expect(ledger.handBack() == 2)
            #expect(try store.ledger(id: "one").map(\.state) == ["posted"])
            #expect(try store.ledger(id: "two").map(\.state) == ["pending"])
            #expect(try store.ledger(id: "three").map(\.state) == ["pending"])
        }
    }

    /// A failover seen from a runner: its connection reaches a node that has become read-only.
    /// The connection is dropped (the LISTEN connection is told to follow), and the next pass,
    /// on a new connection, posts.
    @Test func aConnectionLeftOnAReadOnlyNodeIsDroppedAndMadeAgain() async throws {
        try await withFreshDatabase { url in
            let store = PostgresStore(url)
            let runnerStore = PostgresStore(url)
            let renewed = Mutex(0)
            runnerStore.client.onReadOnly = { renewed.withLock { $0 += 1 } }
            let ledger = try PostgresLedger(store: runnerStore, owner: "a")
            let notifier = RecordingNotifier()
            let scheduler = Self.scheduler(ledger, notifier)
            await scheduler.runPass()
            let before = try runnerStore.count("SELECT pg_backend_pid()")
            try runnerStore.run("SET default_transaction_read_only = on")
            try Self.due(["kept"], on: store)
            await scheduler.runPass()
            #expect(notifier.attempts == 0)
            #expect(renewed.withLock { $0 } == 1)
            #expect(runnerStore.client.renewalCount == 1)
            await scheduler.runPass()
            #expect(notifier.posts.map(\.id) == ["kept"])
            #expect(try runnerStore.count("SELECT pg_backend_pid()") != before, "the connection was made again")
            #expect(try store.ledger(id: "kept").map(\.state) == ["posted"])
        }
    }

    /// The mark after a post fails (the node turned read-only while the alert was shown): the
    /// next pass records it, and it is not shown again.
    @Test func aPostWhoseMarkFailsIsRecordedByTheNextPassNotPostedAgain() async throws {
        try await withFreshDatabase { url in
            let store = PostgresStore(url)
            let runnerStore = PostgresStore(url)
            try Self.due(["shown"], on: store)
            let recording = RecordingNotifier()
            let notifier = HookNotifier(recording: recording) { _ in try runnerStore.run("SET default_transaction_read_only = on") }
            let ledger = try PostgresLedger(store: runnerStore, owner: "a")
            let scheduler = Self.scheduler(ledger, notifier)
            await scheduler.runPass()
            #expect(recording.posts.map(\.id) == ["shown"])
            #expect(try store.ledger(id: "shown").map(\.state) == ["posting"])
            await scheduler.runPass()
            #expect(recording.posts.map(\.id) == ["shown"])
            #expect(try store.ledger(id: "shown").map(\.state) == ["posted"])
            #expect(ledger.counters.leaseLost == 0)
        }
    }

    /// What an idle runner costs the database: four statements a pass (the quiet state with
    /// whether anything is held, reap, claim, deadlines; the held occurrences only when there
    /// are some), counted by pg_stat_statements (scripts/postgres-server preloads it); with the
    /// default 30 s poll, eight an idle minute.
    @Test func anIdlePassIsFourStatements() async throws {
        try await withFreshDatabase { url in
            let store = PostgresStore(url)
            try store.run("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
            let statements = """
                SELECT coalesce(sum(calls), 0)::bigint FROM pg_stat_statements
                WHERE toplevel AND dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
                  AND query NOT ILIKE '%pg_stat_statements%'
                """
            let scheduler = Self.scheduler(try PostgresLedger(store: PostgresStore(url), owner: "a"), RecordingNotifier())
            await scheduler.runPass()
            let deallocated = "SELECT dealloc FROM pg_stat_statements_info"
            let deallocBefore = try store.count(deallocated)
            let before = try store.count(statements)
            for _ in 0..<10 { await scheduler.runPass() }
            let after = try store.count(statements)
            // Unless pg_stat_statements evicted entries meanwhile (it keeps 5,000, and a whole
            // test run's databases may exceed that): then the count says nothing.
            let evicted = try store.count(deallocated) != deallocBefore
            #expect(after - before == 40 || evicted, "\(after - before) statements in 10 idle passes")
        }
    }

    /// The LISTEN connection: a change from another host wakes the runner; a connection the
    /// server ends is made again (then the runner makes a full pass).
    @Test func theListenConnectionWakesOnANotifyAndIsMadeAgainWhenDropped() async throws {
        try await withFreshDatabase { url in
            let store = PostgresStore(url)
            let wakes = AsyncStream<Void>.makeStream()
            var options = PostgresConnectionOptions(applicationName: "chime run listen-test listen")
            options.connectTimeout = .seconds(5)
            let events = Mutex<[PostgresListener.Event]>([])
            let listener = PostgresListener(url: url, options: options, reconnectBase: .milliseconds(10)) { event in
                events.withLock { $0.append(event) }
            }
            listener.start { wakes.continuation.yield() }
            defer { listener.stop() }
            var woken = wakes.stream.makeAsyncIterator()
            await woken.next()  // listening: a full pass
            try store.schedule(
                NewReminder(id: "ping", title: "Ping", trigger: .once(try store.databaseNow().addingTimeInterval(60))),
                systemZone: Self.utc
            )
            await woken.next()  // the NOTIFY
            let ended = try store.count(
                """
                SELECT count(*) FROM (SELECT pid FROM pg_stat_activity
                    WHERE datname = current_database() AND application_name = 'chime run listen-test listen' OFFSET 0) s
                WHERE pg_terminate_backend(s.pid)
                """
            )
            #expect(ended == 1)
            await woken.next()  // listening again: a full pass
            #expect(listener.listens.load(ordering: .relaxed) == 2)
            #expect(events.withLock { $0.contains { if case .down = $0 { true } else { false } } })
            #expect(try store.runnerCount() == 1)
        }
    }

    /// SIGTERM's path: a statement in flight is cancelled from another thread (PQcancel) and
    /// fails at once with SQLSTATE 57014, and the connection serves the next statement.
    @Test func aStatementInFlightIsCancelledFromAnotherThread() async throws {
        try await withFreshDatabase { url in
            let store = PostgresStore(url)
            _ = try store.databaseNow()
            let started = ContinuousClock.now
            Thread.detachNewThread {
                Thread.sleep(forTimeInterval: 0.3)
                store.client.cancel()
            }
            let error = #expect(throws: PostgresError.self) { try store.run("SELECT pg_sleep(20)") }
            #expect(error?.isCancelled == true, "\(String(describing: error))")
            #expect(ContinuousClock.now - started < .seconds(5))
            #expect(try store.count("SELECT 1") == 1)
        }
    }

    /// Errors keep their cause: a database without the schema is one line for a person, and
    /// the server's SQLSTATE for code that must decide by it (no message text compared).
    @Test func aStoreErrorKeepsTheServersSQLState() async throws {
        try await withFreshDatabase(migrated: false) { url in
            let store = PostgresStore(url)
            let error = #expect(throws: PostgresError.self) { try store.pending() }
            let described = PostgresStore.storeError(try #require(error), url: url)
            #expect(described.code == .store && described.message.contains("chime store init"), "\(described)")
            #expect((described.cause as? PostgresError)?.sqlState == "42P01")
        }
    }

    @Test func theDatabaseClockMapsDeadlinesToTheHostsClock() {
        let clock = DatabaseClock()
        let databaseNow = Date().addingTimeInterval(300)  // the database 5 minutes ahead of this host
        clock.set(databaseNow)
        let deadline = databaseNow.addingTimeInterval(10)
        let host = clock.hostInstant(for: deadline)
        #expect(abs(host.timeIntervalSince(Date()) - 10) < 1)
        #expect(abs(clock.now().timeIntervalSince(databaseNow)) < 1)
    }
}

/// A notifier that runs `before` (a cancel from another host, a stall past the lease) as each
/// note is handed to it, then records it in `recording`.
struct HookNotifier: Notifier {
    let recording: RecordingNotifier
    let before: @Sendable (Note) async throws -> Void

    func post(_ note: Note) async throws -> PostedNote {
        try await before(note)
        return try await recording.post(note)
    }

    func withdraw(_ shown: PostedNote) async throws { try await recording.withdraw(shown) }

    var responses: AsyncStream<NoteResponse> { recording.responses }
}
