import ChimeCore
import ChimePostgres
import ChimeTesting
import Foundation
import Logging
import PostgresNIO
import Testing

/// The PostgreSQL runner against a real server, each test on a database of its own. The
/// runner's waits go through a ``ManualSleeper`` (no real sleep: the test ends a wait when the
/// time it stands for has come), and the database's time moves by ``PostgresStore/advanceClock(by:)``.
/// The poll is an hour, so that nothing but a notification, a reconnect or the test wakes a runner.
@Suite(.timeLimit(.minutes(1)))
struct PostgresRunnerTests {
    static let utc = TimeZone(identifier: "UTC")!

    static func runner(
        _ url: PostgresURL,
        _ store: PostgresStore,
        _ notifier: any Notifier,
        owner: String = "runner-a",
        channels: [String] = ["default"],
        sleeper: ManualSleeper,
        logger: Logger = PostgresStore.silentLogger,
        claimBatch: Int = 32
    ) -> PostgresRunner {
        PostgresRunner(
            url: url,
            store: store,
            notifier: notifier,
            owner: owner,
            channels: channels,
            poll: .seconds(3600),
            systemZone: utc,
            logger: logger,
            sleeper: sleeper,
            claimBatch: claimBatch,
            jitterSeed: 7
        )
    }

    /// Schedules one-shots ten minutes ahead, then moves the database's clock past them.
    static func due(_ ids: [String], on store: PostgresStore, channel: String = "default") async throws {
        let now = try await store.databaseNow()
        for (index, id) in ids.enumerated() {
            try await store.schedule(
                NewReminder(
                    id: id,
                    title: "Do \(id)",
                    body: "body of \(id)",
                    trigger: .once(now.addingTimeInterval(600 + Double(index) / 1000))
                ),
                systemZone: utc,
                channel: channel
            )
        }
        try await store.advanceClock(by: 601)
    }

    @Test func aDueOneShotIsPostedOnceAndMarkedPosted() async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                try await Self.due(["tea"], on: store)
                let notifier = RecordingNotifier()
                let sleeper = ManualSleeper()
                let runner = Self.runner(url, store, notifier, sleeper: sleeper)
                try await whileRunning(runner) {
                    let note = await notifier.nextPost()
                    #expect(note.id == "tea" && note.title == "Do tea" && note.body == "body of tea")
                    #expect(note.deliveries.map(\.reminderID) == ["tea"] && note.deliveries.first?.attempt == 1)
                    await sleeper.idle { await runner.counters.posted == 1 }
                    let ledger = try await store.ledger(id: "tea")
                    #expect(ledger.map(\.state) == ["posted"] && ledger.map(\.owner) == ["runner-a"])
                    // Another pass (its timer, say) finds nothing more to post.
                    let passes = await runner.counters.passes
                    sleeper.wake(.idle)
                    await sleeper.idle { await runner.counters.passes > passes }
                }
                #expect(notifier.posts.map(\.id) == ["tea"])
                #expect(try await store.pending().isEmpty)
            }
        }
    }

    @Test func twoRunnersOnOneDatabasePostFiftyDueRemindersExactlyOnceBetweenThem() async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                let ids = (0..<50).map { "r\($0)" }
                try await Self.due(ids, on: store)
                let notifier = RecordingNotifier()
                let sleeper = ManualSleeper()
                // Each on a client (and connections) of its own, as on two hosts; small batches
                // so that their claims interleave.
                try await PostgresStore.withStore(url, connections: 2) { storeA in
                    try await PostgresStore.withStore(url, connections: 2) { storeB in
                        let a = Self.runner(url, storeA, notifier, owner: "a", sleeper: sleeper, claimBatch: 3)
                        let b = Self.runner(url, storeB, notifier, owner: "b", sleeper: sleeper, claimBatch: 3)
                        try await whileRunning(a, b) {
                            _ = await notifier.nextPosts(50)
                            await sleeper.idle { await a.counters.posted + b.counters.posted == 50 }
                            let (countersA, countersB) = (await a.counters, await b.counters)
                            #expect(countersA.leaseLost == 0 && countersB.leaseLost == 0)
                            #expect(countersA.failed == 0 && countersB.failed == 0)
                        }
                    }
                }
                let posted = notifier.posts.map(\.id)
                #expect(posted.count == 50)
                #expect(Set(posted) == Set(ids))
                #expect(try await store.count("SELECT count(*) FROM occurrence WHERE state = 'posted'") == 50)
                #expect(try await store.count("SELECT count(*) FROM occurrence WHERE state <> 'posted'") == 0)
            }
        }
    }

    @Test func aNotifyWakesASleepingRunnerBeforeItsPoll() async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                let notifier = RecordingNotifier()
                let sleeper = ManualSleeper()
                let runner = Self.runner(url, store, notifier, sleeper: sleeper)
                try await whileRunning(runner) {
                    await sleeper.idle { await runner.counters.listens == 1 }
                    // Idle, nothing pending: it sleeps for the poll (an hour, ±10 %).
                    let idle = try #require(sleeper.requests.last { $0.reason == .idle })
                    #expect(idle.duration.seconds > 3000)
                    // Scheduled from another host (its own client): the NOTIFY wakes the runner,
                    // which now sleeps until the new deadline, ten minutes off by the database's clock.
                    try await PostgresStore.withStore(url, connections: 1) { other in
                        let now = try await other.databaseNow()
                        try await other.schedule(
                            NewReminder(id: "late", title: "Late", trigger: .once(now.addingTimeInterval(600))),
                            systemZone: Self.utc
                        )
                    }
                    var request = await sleeper.next(.idle)
                    while request.duration.seconds > 700 { request = await sleeper.next(.idle) }
                    #expect(request.duration.seconds > 590 && request.duration.seconds <= 600)
                    let counters = await runner.counters
                    #expect(counters.wakeups >= 1)
                    #expect(counters.polls == 0)
                    #expect(notifier.attempts == 0)
                    // Its deadline comes (the database's clock moves on; the timer ends the wait).
                    try await store.advanceClock(by: 601)
                    sleeper.wake(.idle)
                    #expect(await notifier.nextPost().id == "late")
                    await sleeper.idle { await runner.counters.posted == 1 }
                    #expect(await runner.counters.polls == 1)
                }
            }
        }
    }

    @Test func aTerminatedListenConnectionIsRemadeAndWhatWasScheduledMeanwhileIsPosted() async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                let notifier = RecordingNotifier()
                let sleeper = ManualSleeper()
                let logs = LogRecorder()
                let runner = Self.runner(url, store, notifier, sleeper: sleeper, logger: logs.logger)
                try await whileRunning(runner) {
                    await sleeper.idle { await runner.counters.listens == 1 }
                    // The server ends the LISTEN session (as a failover or an admin would).
                    #expect(try await store.terminateListenSession(of: "runner-a") == 1)
                    let reconnect = await sleeper.next(.reconnect)
                    #expect(reconnect.duration == .seconds(1))
                    // Scheduled while nobody listens: its NOTIFY is lost.
                    try await Self.due(["meanwhile"], on: store)
                    #expect(notifier.attempts == 0)
                    // Re-made: the full pass after it finds the reminder.
                    sleeper.release(reconnect)
                    #expect(await notifier.nextPost().id == "meanwhile")
                    await sleeper.idle { await runner.counters.posted == 1 }
                    let counters = await runner.counters
                    #expect(counters.listens == 2)
                    #expect(counters.polls == 0)
                }
                #expect(logs.lines.contains { $0.level == .warning && $0.message.contains("LISTEN connection is down") })
                #expect(try await store.ledger(id: "meanwhile").map(\.state) == ["posted"])
            }
        }
    }

    /// After an outage the LISTEN connection's backoff may have grown to 30 s: a pass that the
    /// database answered ends it, so that notifications wake the runner again at once.
    @Test func aPassTheDatabaseAnswersEndsTheListenConnectionsBackoff() async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                let notifier = RecordingNotifier()
                let sleeper = ManualSleeper()
                let runner = Self.runner(url, store, notifier, sleeper: sleeper)
                try await whileRunning(runner) {
                    await sleeper.idle { await runner.counters.listens == 1 }
                    #expect(try await store.terminateListenSession(of: "runner-a") == 1)
                    // The backoff begins, and is never ended by the test: a pass ends it.
                    _ = await sleeper.next(.reconnect)
                    let passes = await runner.counters.passes
                    sleeper.wake(.idle)
                    await sleeper.idle {
                        let counters = await runner.counters
                        return counters.passes > passes && counters.listens == 2
                    }
                    // Listening again: a reminder scheduled now wakes it (a NOTIFY, not the poll),
                    // and it sleeps until that reminder's deadline.
                    let wakeups = await runner.counters.wakeups
                    let now = try await store.databaseNow()
                    try await store.schedule(
                        NewReminder(id: "after", title: "After", trigger: .once(now.addingTimeInterval(600))),
                        systemZone: Self.utc
                    )
                    var request = await sleeper.next(.idle)
                    while request.duration.seconds > 700 { request = await sleeper.next(.idle) }
                    #expect(request.duration.seconds > 590 && request.duration.seconds <= 600)
                    #expect(await runner.counters.wakeups > wakeups)
                    #expect(await runner.counters.polls == 1)
                }
            }
        }
    }

    @Test func aRunnerServingDeskLeavesDefaultRemindersAlone() async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                let now = try await store.databaseNow()
                try await store.schedule(
                    NewReminder(id: "ordinary", title: "O", trigger: .once(now.addingTimeInterval(600))),
                    systemZone: Self.utc
                )
                try await store.schedule(
                    NewReminder(id: "on-desk", title: "D", trigger: .once(now.addingTimeInterval(600.5))),
                    systemZone: Self.utc,
                    channel: "desk"
                )
                try await store.advanceClock(by: 601)
                let notifier = RecordingNotifier()
                let sleeper = ManualSleeper()
                let runner = Self.runner(url, store, notifier, channels: ["desk"], sleeper: sleeper)
                try await whileRunning(runner) {
                    #expect(await notifier.nextPost().id == "on-desk")
                    let taken = await sleeper.idle { await runner.counters.posted == 1 }
                    let idle = try #require(taken)
                    // The default one, due and unclaimed, is no deadline of this runner's: it sleeps for its poll.
                    #expect(idle.duration.seconds > 3000)
                }
                #expect(notifier.posts.map(\.id) == ["on-desk"])
                #expect(try await store.ledger(id: "ordinary").map(\.state) == ["pending"])
            }
        }
    }

    @Test func aFailedPostIsRetriedAfterItsRetryTimeAndPostedOnce() async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                try await Self.due(["flaky"], on: store)
                let notifier = RecordingNotifier()
                notifier.failNext(1, error: .init("the webhook answered 503"))
                let sleeper = ManualSleeper()
                let logs = LogRecorder()
                let runner = Self.runner(url, store, notifier, sleeper: sleeper, logger: logs.logger)
                try await whileRunning(runner) {
                    let taken = await sleeper.idle { await runner.counters.failed == 1 }
                    let idle = try #require(taken)
                    // Back in the ledger, not ready before the first backoff (5 s): the runner sleeps until then.
                    let state = try await store.retryState(id: "flaky")
                    #expect(state.attempts == 1)
                    #expect(state.lastError?.contains("503") == true)
                    #expect((state.retryIn ?? 0) > 3 && (state.retryIn ?? 0) <= 5)
                    #expect(idle.duration.seconds > 3 && idle.duration.seconds <= 5)
                    #expect(try await store.ledger(id: "flaky").map(\.state) == ["pending"])
                    // A pass before the retry time posts nothing.
                    let passesBefore = await runner.counters.passes
                    sleeper.wake(.idle)
                    await sleeper.idle { await runner.counters.passes > passesBefore }
                    #expect(notifier.attempts == 1)
                    // After it: posted, once, as the second attempt.
                    try await store.advanceClock(by: 5.5)
                    sleeper.wake(.idle)
                    let note = await notifier.nextPost()
                    #expect(note.id == "flaky" && note.deliveries.first?.attempt == 2)
                    await sleeper.idle { await runner.counters.posted == 1 }
                }
                #expect(notifier.attempts == 2 && notifier.posts.count == 1)
                #expect(try await store.ledger(id: "flaky").map(\.state) == ["posted"])
                #expect(
                    logs.lines.contains {
                        $0.level == .warning && $0.message.contains("flaky") && $0.message.contains("503")
                            && $0.message.contains("retrying in 5s")
                    }
                )
            }
        }
    }

    @Test func aCancelBetweenTheClaimAndThePostStopsThePostAndIsRecordedAndCounted() async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                try await Self.due(["first", "second"], on: store)
                let recording = RecordingNotifier()
                // Both are claimed in one batch; while the first is being posted, another host
                // cancels the second (in flight: left to its runner by the cancel).
                let notifier = HookNotifier(recording: recording) { note in
                    guard note.id == "first" else { return }
                    try await PostgresStore.withStore(url, connections: 1) { other in
                        let cancelled = try await other.cancel(id: "second")
                        #expect(cancelled.inFlight == 1)
                    }
                }
                let sleeper = ManualSleeper()
                let runner = Self.runner(url, store, notifier, sleeper: sleeper)
                try await whileRunning(runner) {
                    await sleeper.idle { await runner.counters.cancelledBeforePost == 1 }
                    #expect(await runner.counters.posted == 1)
                }
                #expect(recording.posts.map(\.id) == ["first"])
                #expect(try await store.ledger(id: "second").map(\.state) == ["cancelled"])
                #expect(try await store.ledger(id: "first").map(\.state) == ["posted"])
            }
        }
    }

    @Test func aLeaseLostBeforeTheMarkIsCountedAndLoggedAndNotMarked() async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                try await Self.due(["slow"], on: store)
                let recording = RecordingNotifier()
                // The post stalls past the lease: another runner reaps it and claims it again.
                let notifier = HookNotifier(recording: recording) { _ in
                    try await store.expireLeases()
                    try await PostgresStore.withStore(url, connections: 1) { other in
                        let reaped = try await other.reapExpiredLeases()
                        let claimed = try await other.claimDue(owner: "runner-b", lease: .seconds(30))
                        #expect(reaped == 1 && claimed.map(\.reminderID) == ["slow"])
                    }
                }
                let sleeper = ManualSleeper()
                let logs = LogRecorder()
                let runner = Self.runner(url, store, notifier, sleeper: sleeper, logger: logs.logger)
                try await whileRunning(runner) {
                    await sleeper.idle { await runner.counters.leaseLost == 1 }
                    #expect(await runner.counters.posted == 0)
                }
                let ledger = try await store.ledger(id: "slow")
                #expect(ledger.map(\.state) == ["posting"])
                #expect(ledger.map(\.owner) == ["runner-b"])
                let due = TimeText.iso(Date(micros: try #require(ledger.first).due))
                #expect(
                    logs.lines.contains {
                        $0.level == .notice && $0.message.contains("lost the lease") && $0.message.contains("slow")
                            && $0.message.contains(due)
                    }
                )
            }
        }
    }

    @Test func badChannelsAreRefusedByRun() async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                for channels in [[], ["Desk"], ["desk", ""], [String(repeating: "a", count: 65)]] {
                    let runner = Self.runner(url, store, RecordingNotifier(), channels: channels, sleeper: ManualSleeper())
                    await #expect {
                        try await runner.run()
                    } throws: { error in
                        (error as? ChimeError)?.code == .usage && !"\(error)".contains("\n")
                    }
                }
            }
        }
    }

    @Test func aPassThatFailsOnTheDatabaseIsLoggedOnceAndRetriedAfterABackoff() async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                try await Self.due(["kept"], on: store)
                // The database is read-only for this database's sessions (as a standby is).
                try await store.run("ALTER DATABASE \(url.database) SET default_transaction_read_only = on")
                let notifier = RecordingNotifier()
                let sleeper = ManualSleeper()
                let logs = LogRecorder()
                try await PostgresStore.withStore(url, connections: 1) { runnerStore in
                    let runner = Self.runner(url, runnerStore, notifier, sleeper: sleeper, logger: logs.logger)
                    try await whileRunning(runner) {
                        // Its backoff ends, and the pass after it fails too (logged at debug
                        // level: one error line for the outage). Each failure also made the pool
                        // and the LISTEN session again, in vain: the database is read-only.
                        sleeper.release(await sleeper.next(.databaseBackoff))
                        _ = await sleeper.next(.databaseBackoff)
                        #expect(await runner.counters.databaseErrors >= 2)
                        #expect(await runner.counters.renewals >= 2)
                        #expect(notifier.attempts == 0)
                        // Writable again (a failover completed): the next pass posts it, once.
                        try await store.run("ALTER DATABASE \(url.database) RESET default_transaction_read_only")
                        try await runnerStore.run("SET default_transaction_read_only = off")
                        sleeper.wake(.databaseBackoff)
                        #expect(await notifier.nextPost().id == "kept")
                        await sleeper.idle { await runner.counters.posted == 1 }
                    }
                }
                #expect(
                    logs.lines.filter { $0.level == .error }.map(\.message).allSatisfy {
                        $0.contains("read-only") && $0.contains("25006") && $0.contains("trying again in 1s") && !$0.contains("\n")
                    }
                )
                #expect(logs.lines.filter { $0.level == .error }.count == 1)
                #expect(logs.lines.contains { $0.level == .notice && $0.message.contains("answers again") })
            }
        }
    }

    /// A failover seen from a runner: its connections reach a node that has become read-only
    /// (as one left on a fenced or demoted primary does), while a connection made now reaches a
    /// writable one. Retrying on the same connections would fail for ever; the runner drops them
    /// (the pool and the LISTEN connection) and makes new ones.
    @Test func connectionsLeftOnAReadOnlyNodeAreDroppedAndMadeAgain() async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                try await PostgresStore.withStore(url, connections: 1) { runnerStore in
                    let notifier = RecordingNotifier()
                    let sleeper = ManualSleeper()
                    let logs = LogRecorder()
                    let runner = Self.runner(url, runnerStore, notifier, sleeper: sleeper, logger: logs.logger)
                    try await whileRunning(runner) {
                        await sleeper.idle {
                            let counters = await runner.counters
                            return counters.passes >= 2 && counters.listens == 1
                        }
                        // The pool's one connection is the runner's: from now on it answers read-only.
                        try await runnerStore.run("SET default_transaction_read_only = on")
                        let before = try await runnerStore.count("SELECT pg_backend_pid()")
                        try await Self.due(["kept"], on: store)
                        _ = await sleeper.next(.databaseBackoff)
                        #expect(notifier.attempts == 0)
                        #expect(await runner.counters.renewals == 1)
                        #expect(runnerStore.renewals == 1)
                        // The LISTEN connection was closed too; it is made again once a pass on
                        // the new pool succeeds (no need to end its backoff here).
                        sleeper.wake(.databaseBackoff)
                        #expect(await notifier.nextPost().id == "kept")
                        await sleeper.idle {
                            let counters = await runner.counters
                            return counters.posted == 1 && counters.listens == 2
                        }
                        let after = try await runnerStore.count("SELECT pg_backend_pid()")
                        #expect(after != before, "the pool's connection was made again")
                        #expect(try await runnerStore.count("SELECT (current_setting('transaction_read_only') = 'off')::int") == 1)
                    }
                    #expect(notifier.posts.map(\.id) == ["kept"])
                    #expect(try await store.ledger(id: "kept").map(\.state) == ["posted"])
                    #expect(await runner.counters.renewals == 1)
                    #expect(
                        logs.lines.contains {
                            $0.level == .notice && $0.message.contains("read-only node") && $0.message.contains("making new ones")
                        }
                    )
                    #expect(logs.lines.filter { $0.level == .error }.count == 1)
                }
            }
        }
    }

    @Test func aPostWhoseMarkFailsOnTheDatabaseIsRecordedByTheNextPassNotPostedAgain() async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url, connections: 1) { runnerStore in
                try await PostgresStore.withStore(url) { store in
                    try await Self.due(["shown"], on: store)
                    let recording = RecordingNotifier()
                    // While the alert is being shown, the runner's own session becomes read-only
                    // (its pool has one connection): the mark after the post fails.
                    let notifier = HookNotifier(recording: recording) { _ in
                        try await runnerStore.run("SET default_transaction_read_only = on")
                    }
                    let sleeper = ManualSleeper()
                    let runner = Self.runner(url, runnerStore, notifier, sleeper: sleeper)
                    try await whileRunning(runner) {
                        // The mark failed (25006): the runner made its pool again.
                        while await runner.counters.databaseErrors == 0 { await Task.yield() }
                        #expect(recording.posts.map(\.id) == ["shown"])
                        #expect(await runner.counters.renewals == 1)
                        // Its next pass (after the backoff, or at once when a wake-up was
                        // pending) records the post on a new connection.
                        sleeper.wake(.databaseBackoff)
                        await sleeper.idle { await runner.counters.posted == 1 }
                        #expect(await runner.counters.leaseLost == 0)
                    }
                    #expect(recording.posts.map(\.id) == ["shown"])
                    #expect(try await store.ledger(id: "shown").map(\.state) == ["posted"])
                }
            }
        }
    }

    /// What an idle runner costs the database: three statements a pass (reap, claim, deadlines),
    /// counted by pg_stat_statements (scripts/postgres-server preloads it); with the default
    /// 30 s poll, six an idle minute.
    @Test func anIdlePassIsThreeStatements() async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                try await store.run("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
                let statements = """
                    SELECT coalesce(sum(calls), 0)::bigint FROM pg_stat_statements
                    WHERE toplevel AND dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
                      AND query NOT ILIKE '%pg_stat_statements%'
                    """
                let sleeper = ManualSleeper()
                let runner = Self.runner(url, store, RecordingNotifier(), sleeper: sleeper)
                try await whileRunning(runner) {
                    // The first pass, and the one after the LISTEN connection was made.
                    await sleeper.idle {
                        let counters = await runner.counters
                        return counters.passes >= 2 && counters.listens == 1
                    }
                    let deallocated = "SELECT dealloc FROM pg_stat_statements_info"
                    let deallocBefore = try await store.count(deallocated)
                    let before = try await store.count(statements)
                    for _ in 0..<10 {
                        let passes = await runner.counters.passes
                        sleeper.wake(.idle)
                        await sleeper.idle { await runner.counters.passes > passes }
                    }
                    let after = try await store.count(statements)
                    // Unless pg_stat_statements evicted entries meanwhile (it keeps 5,000, and a
                    // whole test run's databases may exceed that): then the count says nothing.
                    let evicted = try await store.count(deallocated) != deallocBefore
                    #expect(after - before == 30 || evicted, "\(after - before) statements in 10 idle passes")
                }
            }
        }
    }
}

extension PostgresStore {
    /// Ends runner `owner`'s LISTEN session from the server's side; returns how many it ended.
    /// The sessions are picked first (OFFSET 0 keeps the planner from moving the condition): in a
    /// plain WHERE, pg_terminate_backend() could be evaluated before the other conditions, on
    /// every session of the server.
    fileprivate func terminateListenSession(of owner: String) async throws -> Int {
        try await count(
            """
            SELECT count(*) FROM (
                SELECT pid FROM pg_stat_activity
                WHERE datname = current_database() AND application_name = 'chime run \(owner) listen' OFFSET 0) s
            WHERE pg_terminate_backend(s.pid)
            """
        )
    }

    fileprivate func run(_ sql: String) async throws {
        for try await _ in try await client.query(PostgresQuery(unsafeSQL: sql)) {}
    }
}
