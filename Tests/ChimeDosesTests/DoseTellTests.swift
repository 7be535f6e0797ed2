import ChimeCore
import ChimeDoses
import ChimeStore
import ChimeTesting
import Foundation
import GRDB
import Synchronization
import Testing

/// A teller that records what it is asked to send, and fails while told to.
final class RecordingTeller: DoseTeller {
    struct Sent: Hashable {
        var doseID: Int64
        var kind: DoseTell.Kind
        var channel: DoseTellChannel
        var title: String
        var message: String
    }
    private let state = Mutex<(sent: [Sent], failing: Bool)>(([], false))

    var sent: [Sent] { state.withLock { $0.sent } }
    func fail(_ failing: Bool) { state.withLock { $0.failing = failing } }

    func send(_ tell: DoseTell, title: String, message: String) async throws {
        try state.withLock { state in
            if state.failing { throw ChimeError(.delivery, "ntfy https://ntfy.sh could not be reached (test)") }
            state.sent.append(Sent(doseID: tell.doseID, kind: tell.kind, channel: tell.channel, title: title, message: message))
        }
    }
}

/// Someone else told when a dose is not taken (`med add --tell`), on the injected clock.
@Suite struct DoseTellTests {
    /// 2026-03-02, a Monday, in UTC.
    static func at(_ hour: Int, _ minute: Int = 0, day: Int = 2) -> Date { DoseHarness.instant(2026, 3, day, hour, minute) }

    let channel = DoseTellChannel.ntfy(topic: "carers-alex")

    func family(_ h: DoseHarness, _ teller: RecordingTeller, book: DoseBook? = nil) -> DoseFamily {
        DoseFamily(book: book ?? h.book, icon: nil, teller: teller, person: "Alex")
    }

    @Test func aMissedDoseIsToldOnceWithThePersonsNameAndNeverAgain() async throws {
        let h = try DoseHarness(now: Self.at(7))
        defer { h.cleanUp() }
        let teller = RecordingTeller()
        let detail = try h.add("Metformin", at: "08:00") { $0.amount = "500" }
        let told = try h.book.setTell("Metformin", DoseTellRule(channel: channel))
        #expect(told.tell == DoseTellRule(channel: channel))
        let family = family(h, teller)
        try family.prepare(reason: .poked)
        // Before the dose is missed (08:00 + 4 h), nothing is told; the runner is asked to wake at 12:00.
        h.clock.advance(to: Self.at(11, 59))
        try family.prepare(reason: .poked)
        #expect(await family.sendDueTells().isEmpty)
        let wake = await family.updateLiveNotes(through: RecordingNotifierStandIn(), at: h.clock.now())
        #expect(wake == Self.at(12))
        h.clock.advance(to: Self.at(12))
        try family.prepare(reason: .deadline)
        let events = await family.sendDueTells()
        #expect(events.count == 1)
        #expect(
            teller.sent == [
                .init(
                    doseID: try #require(h.storedDoses().first).id,
                    kind: .notTaken,
                    channel: channel,
                    title: "Alex has not taken Metformin 500 mg",
                    message: "Alex has not taken Metformin 500 mg (due 08:00)."
                )
            ]
        )
        // Later passes, and a new process on the same store, send nothing more.
        try family.prepare(reason: .poked)
        #expect(await family.sendDueTells().isEmpty)
        let restarted = self.family(h, teller, book: try h.reopened())
        h.clock.advance(to: Self.at(13))
        try restarted.prepare(reason: .poked)
        #expect(await restarted.sendDueTells().isEmpty)
        #expect(teller.sent.count == 1)
        _ = detail
    }

    @Test func tellAfterTellsAnUnansweredDoseThenFollowsUpWhenItIsTaken() async throws {
        let h = try DoseHarness(now: Self.at(7))
        defer { h.cleanUp() }
        let teller = RecordingTeller()
        try h.add("Metformin", at: "08:00") { $0.amount = "500" }
        _ = try h.book.setTell("Metformin", DoseTellRule(channel: channel, after: 30 * 60))
        let family = family(h, teller)
        try family.prepare(reason: .poked)
        h.clock.advance(to: Self.at(8, 29))
        try family.prepare(reason: .poked)
        #expect(await family.sendDueTells().isEmpty)
        h.clock.advance(to: Self.at(8, 30))
        try family.prepare(reason: .poked)
        await family.sendDueTells()
        #expect(teller.sent.map(\.message) == ["Alex has not taken Metformin 500 mg (due 08:00)."])
        // Taken at 09:12: the other person hears so, once.
        h.clock.advance(to: Self.at(9, 12))
        let dose = try #require(h.storedDoses().first)
        _ = try h.book.answer(.take, .id(dose.id))
        try family.prepare(reason: .poked)
        await family.sendDueTells()
        try family.prepare(reason: .poked)
        await family.sendDueTells()
        #expect(
            teller.sent.map(\.message) == [
                "Alex has not taken Metformin 500 mg (due 08:00).", "Alex took Metformin 500 mg at 09:12 (due 08:00).",
            ]
        )
        #expect(teller.sent.last?.kind == .answered)
    }

    @Test func aDoseTakenInTimeOrBeforeTheTellIsSentIsNotTold() async throws {
        let h = try DoseHarness(now: Self.at(7))
        defer { h.cleanUp() }
        let teller = RecordingTeller()
        try h.add("Metformin", at: "08:00")
        _ = try h.book.setTell("Metformin", DoseTellRule(channel: channel, after: 30 * 60))
        let family = family(h, teller)
        try family.prepare(reason: .poked)
        h.clock.advance(to: Self.at(8, 30))
        // Recorded at 08:30, not sent yet (the runner was busy): taken at 08:31, then dropped.
        try family.prepare(reason: .poked)
        h.clock.advance(to: Self.at(8, 31))
        _ = try h.book.answer(.take, .id(try #require(h.storedDoses().first).id))
        #expect(await family.sendDueTells().isEmpty)
        // The next day's dose is taken at once: nothing told either.
        h.clock.advance(to: Self.at(8, 1, day: 3))
        try family.prepare(reason: .poked)
        _ = try h.book.answer(.take, .id(try #require(h.storedDoses().first { $0.scheduled == Self.at(8, day: 3) }).id))
        h.clock.advance(to: Self.at(13, day: 3))
        try family.prepare(reason: .poked)
        #expect(await family.sendDueTells().isEmpty)
        #expect(teller.sent.isEmpty)
    }

    @Test func aFailedTellIsTriedAgainLaterAndSentOnce() async throws {
        let h = try DoseHarness(now: Self.at(7))
        defer { h.cleanUp() }
        let teller = RecordingTeller()
        try h.add("Metformin", at: "08:00")
        _ = try h.book.setTell("Metformin", DoseTellRule(channel: channel))
        let family = family(h, teller)
        try family.prepare(reason: .poked)
        h.clock.advance(to: Self.at(12))
        try family.prepare(reason: .poked)
        teller.fail(true)
        let failed = await family.sendDueTells()
        #expect(failed.count == 1)
        #expect(failed.first?.outcome == .failed("ntfy https://ntfy.sh could not be reached (test)"))
        // Not again at once: after a minute.
        #expect(await family.sendDueTells().isEmpty)
        let wake = await family.updateLiveNotes(through: RecordingNotifierStandIn(), at: h.clock.now())
        #expect(wake == Self.at(12, 1))
        teller.fail(false)
        h.clock.advance(to: Self.at(12, 1))
        #expect(await family.sendDueTells().count == 1)
        #expect(await family.sendDueTells().isEmpty)
        #expect(teller.sent.count == 1)
        let dose = try #require(h.storedDoses().first)
        #expect(try h.book.tells(ofDose: dose.id).map(\.state) == ["sent"])
    }

    @Test func dosesBeforeTheTellWasSetAndStaleOnesAreNotTold() async throws {
        let h = try DoseHarness(now: Self.at(7))
        defer { h.cleanUp() }
        let teller = RecordingTeller()
        try h.add("Metformin", at: "08:00")
        let family = family(h, teller)
        try family.prepare(reason: .poked)
        // Set at 09:00: the 08:00 dose, due before, is never told about.
        h.clock.advance(to: Self.at(9))
        _ = try h.book.setTell("Metformin", DoseTellRule(channel: channel))
        h.clock.advance(to: Self.at(12))
        try family.prepare(reason: .poked)
        #expect(await family.sendDueTells().isEmpty)
        // Nothing ran from 09:00 on day 3 to 07:00 on day 4: day 3's dose was missed at 12:00,
        // more than 12 h before: not told, and recorded so.
        h.clock.advance(to: Self.at(7, day: 4))
        try family.prepare(reason: .poked)
        #expect(await family.sendDueTells().isEmpty)
        let day3 = try #require(h.storedDoses().first { $0.scheduled == Self.at(8, day: 3) })
        #expect(try h.book.tells(ofDose: day3.id).map(\.state) == ["dropped"])
        #expect(teller.sent.isEmpty)
    }

    @Test func theChannelIsCheckedAndShownWithoutSecrets() throws {
        #expect(try DoseTellChannel.parse("ntfy:carers-alex") == .ntfy(topic: "carers-alex"))
        #expect(try DoseTellChannel.parse("http://127.0.0.1:8080/tell").shown == "webhook http://127.0.0.1:8080")
        for bad in [
            "ntfy:", "ntfy:has space", "carers", "ftp://x/y", "https://user:pw@example.com/hook", "https://example.com/h?token=abc",
        ] {
            #expect(throws: ChimeError.self) { try DoseTellChannel.parse(bad) }
        }
        do {
            _ = try DoseTellChannel.parse("https://example.com/h?token=abc")
        } catch {
            #expect(!error.message.contains("abc"))
        }
        let rule = DoseTellRule(channel: .ntfy(topic: "carers-alex"), after: 1800)
        #expect(rule.summary == "ntfy:carers-alex, when a dose is unanswered 30m after its time")
    }

    @Test func thePersonsNameComesFromTheConfigElseTheAccount() {
        #expect(ConfigKey.dosePerson.parse(text: " Alex ") == .text("Alex"))
        #expect(ConfigKey.dosePerson.parse(text: "") == .text(""))
        #expect(ConfigKey.dosePerson.parse(text: "Alex\nBob") == nil)
        #expect(ConfigKey.dosePerson.parse(text: String(repeating: "a", count: 65)) == nil)
        #expect(DoseFamily.person { _ in .text("Sam") } == "Sam")
        #expect(DoseFamily.person { _ in .text("") } == DoseFamily.defaultPerson)
        #expect(!DoseFamily.defaultPerson.isEmpty)
    }

    @Test func theMigrationIsNamedOnce() throws {
        let h = try DoseHarness(now: Self.at(7))
        defer { h.cleanUp() }
        let applied = try h.store.read { db in try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations") }
        #expect(applied.contains(DoseTellRules.migration))
    }
}

/// A notifier the family's ``DoseFamily/updateLiveNotes(through:at:)`` is handed (it shows nothing).
struct RecordingNotifierStandIn: Notifier {
    func post(_ note: Note) async throws -> PostedNote { PostedNote(id: note.id, via: "none") }
    func withdraw(_ shown: PostedNote) async throws {}
    var responses: AsyncStream<NoteResponse> { AsyncStream { $0.finish() } }
}
