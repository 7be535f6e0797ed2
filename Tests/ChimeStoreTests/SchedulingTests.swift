import ChimeCore
import ChimeStore
import Foundation
import Testing

/// Scheduling, replacing, cancelling and listing reminders.
struct SchedulingTests {
    let directory: TemporaryDirectory
    let store: ReminderStore

    init() throws {
        directory = try TemporaryDirectory()
        store = try ReminderStore(path: directory.file("chime.sqlite"), schemas: [])
    }

    // Swift Testing makes one instance per test; it goes away when the test ends.
    private func cleanUp() { directory.remove() }

    @Test func generatedIdIsShortAndReadable() throws {
        defer { cleanUp() }
        let result = try store.schedule(Fixture.once(nil, at: 60, title: "Tea"), now: Fixture.t0, systemZone: Fixture.utc)

        let id = result.reminder.id
        #expect(id.wholeMatch(of: /r[2-9a-z]{4,}/) != nil, "generated id \(id)")
        // Letters people confuse are never drawn.
        #expect(!id.dropFirst().contains { "01ilo".contains($0) }, "generated id \(id)")
        #expect(result.replaced == false)
        #expect(result.reminder.title == "Tea")
        #expect(result.reminder.nextDue == Fixture.at(60))
        #expect(result.reminder.createdAt == Fixture.t0)
        #expect(try store.reminder(id: id).title == "Tea")
    }

    @Test func explicitIdIsKept() throws {
        defer { cleanUp() }
        let result = try store.schedule(
            NewReminder(id: "standup", title: "  Stand-up  ", body: "room 4", trigger: .once(Fixture.at(600))),
            now: Fixture.t0,
            systemZone: Fixture.utc
        )

        #expect(result.reminder.id == "standup")
        #expect(result.replaced == false)
        let stored = try store.reminder(id: "standup")
        #expect(stored.title == "Stand-up")  // trimmed
        #expect(stored.body == "room 4")
        #expect(stored.trigger == .once(Fixture.at(600)))
        #expect(stored.nextDue == Fixture.at(600))
        #expect(stored.lastDue == nil)
    }

    @Test func withoutReplaceATakenIdIsAConflictAndNothingChanges() throws {
        defer { cleanUp() }
        try store.schedule(Fixture.once("tea", at: 60, title: "Tea"), now: Fixture.t0, systemZone: Fixture.utc)
        let before = try store.pending()

        let error = #expect(throws: ChimeError.self) {
            try store.schedule(Fixture.once("tea", at: 120, title: "Other tea"), replace: false, now: Fixture.t0, systemZone: Fixture.utc)
        }

        #expect(error?.code == .conflict)
        #expect(error?.message.contains("'tea'") == true)
        #expect(try store.pending() == before)
        #expect(try store.ledger().isEmpty)
    }

    @Test func conflictInABatchWritesNoneOfIt() throws {
        defer { cleanUp() }
        try store.schedule(Fixture.once("tea", at: 60), now: Fixture.t0, systemZone: Fixture.utc)

        let error = #expect(throws: ChimeError.self) {
            try store.scheduleBatch(
                [Fixture.once("a", at: 10), Fixture.once("tea", at: 20), Fixture.once("b", at: 30)],
                replace: false,
                now: Fixture.t0,
                systemZone: Fixture.utc
            )
        }

        #expect(error?.code == .conflict)
        #expect(try store.pending().map(\.id) == ["tea"])
    }

    @Test func cancellingAnUnknownIdIsNotFoundAndNamesIt() throws {
        defer { cleanUp() }
        let error = #expect(throws: ChimeError.self) { try store.cancel(id: "nope", now: Fixture.t0) }

        #expect(error?.code == .notFound)
        #expect(error?.message == "no pending reminder has the id 'nope': see 'chime list' for pending reminders")
    }

    @Test func cancelledReminderIsGoneAndTheErrorSaysItWasCancelled() throws {
        defer { cleanUp() }
        try store.schedule(Fixture.once("tea", at: 60, title: "Tea"), now: Fixture.t0, systemZone: Fixture.utc)

        let cancelled = try store.cancel(id: "tea", now: Fixture.at(10))

        #expect(cancelled.id == "tea")
        #expect(cancelled.title == "Tea")
        #expect(try store.pendingCount() == 0)
        let again = #expect(throws: ChimeError.self) { try store.cancel(id: "tea", now: Fixture.at(20)) }
        #expect(again?.code == .notFound)
        #expect(again?.message == "no pending reminder has the id 'tea': it was cancelled")
        let lookup = #expect(throws: ChimeError.self) { try store.reminder(id: "tea") }
        #expect(lookup?.message.hasSuffix("it was cancelled") == true)
        // It never comes due.
        #expect(try store.claimDue(now: Fixture.at(3_600), systemZone: Fixture.utc).isEmpty)
        #expect(try store.ledger().isEmpty)
    }

    @Test func cancellingAFiredOneShotSaysItHasFired() throws {
        defer { cleanUp() }
        try store.schedule(Fixture.once("tea", at: 60), now: Fixture.t0, systemZone: Fixture.utc)
        let claimed = try store.claimDue(now: Fixture.at(60), systemZone: Fixture.utc)
        try store.markPosted(claimed.map(\.key), at: Fixture.at(60), noteID: "tea")
        // Answered (Done), its alert is no longer showing.
        try store.recordResponse(NoteResponse(noteID: "tea", kind: .action("done")), at: Fixture.at(61))

        let error = #expect(throws: ChimeError.self) { try store.cancel(id: "tea", now: Fixture.at(62)) }

        #expect(error?.code == .notFound)
        #expect(error?.message == "no pending reminder has the id 'tea': it has already fired")
    }

    @Test func cancellingAOneShotStillShowingClosesItAndRecordsTheCancel() throws {
        defer { cleanUp() }
        try store.schedule(Fixture.once("tea", at: 60), now: Fixture.t0, systemZone: Fixture.utc)
        let claimed = try store.claimDue(now: Fixture.at(60), systemZone: Fixture.utc)
        try store.markPosted(claimed.map(\.key), at: Fixture.at(60), noteID: "tea", serverID: 7)

        let outcome = try store.cancelReporting(ids: ["tea"], now: Fixture.at(61))

        #expect(outcome.cancelled.map(\.id) == ["tea"])
        #expect(outcome.closed.map(\.reminderID) == ["tea"])
        #expect(outcome.closed.map(\.posted) == [Fixture.at(60)])
        #expect(outcome.inFlight.isEmpty)
        #expect(try store.ledger(id: "tea").map(\.response) == ["cancelled"])
        // What the caller closes: the alert the server showed.
        #expect(try store.shownAlerts(id: "tea") == [PostedNote(id: "tea", serverID: 7)])
        // A day later, an alert never answered is no longer taken for showing.
        try store.schedule(Fixture.once("old", at: 120), now: Fixture.t0, systemZone: Fixture.utc)
        let old = try store.claimDue(now: Fixture.at(120), systemZone: Fixture.utc)
        try store.markPosted(old.map(\.key), at: Fixture.at(120), noteID: "old")
        let error = #expect(throws: ChimeError.self) { try store.cancel(id: "old", now: Fixture.at(120 + 86_401)) }
        #expect(error?.message == "no pending reminder has the id 'old': it has already fired")
    }

    @Test func aOneShotRecordedButNotYetPostedCanStillBeCancelled() throws {
        defer { cleanUp() }
        // Given a one-shot whose occurrence is in the ledger as due (notifier failing, or look-ahead)
        try store.schedule(Fixture.once("tea", at: 60), now: Fixture.t0, systemZone: Fixture.utc)
        #expect(try store.claimDue(now: Fixture.at(60), systemZone: Fixture.utc).count == 1)

        // When it is cancelled, then it is never ready to post
        let cancelled = try store.cancel(id: "tea", now: Fixture.at(61))
        #expect(cancelled.id == "tea")
        #expect(try store.ledger(id: "tea").map(\.state) == ["cancelled"])
        #expect(try store.claimDue(now: Fixture.at(5_000), systemZone: Fixture.utc).isEmpty)
        let again = #expect(throws: ChimeError.self) { try store.cancel(id: "tea", now: Fixture.at(62)) }
        #expect(again?.message == "no pending reminder has the id 'tea': it was cancelled")
    }

    @Test func cancellingCancelsUndeliveredOccurrences() throws {
        defer { cleanUp() }
        try store.schedule(
            NewReminder(id: "water", title: "Water", trigger: .interval(seconds: 600, anchor: Fixture.t0)),
            now: Fixture.t0,
            systemZone: Fixture.utc
        )
        #expect(try store.claimDue(now: Fixture.at(600), systemZone: Fixture.utc).count == 1)

        try store.cancel(id: "water", now: Fixture.at(601))

        #expect(try store.ledger(id: "water").map(\.state) == ["cancelled"])
        #expect(try store.claimDue(now: Fixture.at(5_000), systemZone: Fixture.utc).isEmpty)
        #expect(try store.nextWake() == nil)
    }

    @Test func cancellingSeveralIsAllOrNothing() throws {
        defer { cleanUp() }
        _ = try store.scheduleBatch(
            [Fixture.once("a", at: 10), Fixture.once("b", at: 20), Fixture.once("c", at: 30)],
            now: Fixture.t0,
            systemZone: Fixture.utc
        )

        // When one of the ids is not pending, none is cancelled
        let error = #expect(throws: ChimeError.self) { try store.cancel(ids: ["a", "missing", "b"], now: Fixture.t0) }
        #expect(error?.code == .notFound)
        #expect(error?.message.contains("'missing'") == true)
        #expect(try store.pending().map(\.id) == ["a", "b", "c"])

        // When all are pending, all are cancelled
        let cancelled = try store.cancel(ids: ["c", "a"], now: Fixture.t0)
        #expect(cancelled.map(\.id) == ["c", "a"])
        #expect(try store.pending().map(\.id) == ["b"])
    }

    @Test func pendingIsSortedByNextDue() throws {
        defer { cleanUp() }
        _ = try store.scheduleBatch(
            [
                Fixture.once("late", at: 9_000),
                // next at +1800
                NewReminder(id: "hourly", title: "Hourly", trigger: .interval(seconds: 3_600, anchor: Fixture.at(-1_800))),
                Fixture.once("soon", at: 60),
                Fixture.once("b-tie", at: 600),
                Fixture.once("a-tie", at: 600),
            ],
            now: Fixture.t0,
            systemZone: Fixture.utc
        )

        let pending = try store.pending()

        #expect(pending.map(\.id) == ["soon", "a-tie", "b-tie", "hourly", "late"])
        #expect(pending.map(\.nextDue) == [Fixture.at(60), Fixture.at(600), Fixture.at(600), Fixture.at(1_800), Fixture.at(9_000)])
        #expect(try store.pending(limit: 2).map(\.id) == ["soon", "a-tie"])
    }

    @Test(arguments: [-86_400.0, -1, 0])
    func oneShotInThePastIsRejectedAndNothingWritten(offset: TimeInterval) throws {
        defer { cleanUp() }
        let error = #expect(throws: ChimeError.self) {
            try store.scheduleBatch(
                [Fixture.once("fine", at: 60), Fixture.once("past", at: offset, title: "Past")],
                now: Fixture.t0,
                systemZone: Fixture.utc
            )
        }

        #expect(error?.code == .usage)
        #expect(error?.message.contains("'Past' would never fire") == true)
        #expect(try store.pendingCount() == 0)
        #expect(try store.ledger().isEmpty)
    }

    @Test(arguments: ["", "   ", "\n\t "])
    func emptyTitleIsRejected(title: String) throws {
        defer { cleanUp() }
        let error = #expect(throws: ChimeError.self) {
            try store.schedule(NewReminder(id: "x", title: title, trigger: .once(Fixture.at(60))), now: Fixture.t0, systemZone: Fixture.utc)
        }

        #expect(error?.code == .usage)
        #expect(error?.message.contains("invalid title") == true)
        #expect(try store.pendingCount() == 0)
    }

    @Test(arguments: ["has space", "-leading", "", String(repeating: "x", count: 65), "ünï"])
    func malformedIdIsRejected(id: String) throws {
        defer { cleanUp() }
        let error = #expect(throws: ChimeError.self) {
            try store.schedule(NewReminder(id: id, title: "T", trigger: .once(Fixture.at(60))), now: Fixture.t0, systemZone: Fixture.utc)
        }

        #expect(error?.code == .usage)
        #expect(error?.message.contains("invalid id '\(id)'") == true)
        #expect(try store.pendingCount() == 0)
    }
}
