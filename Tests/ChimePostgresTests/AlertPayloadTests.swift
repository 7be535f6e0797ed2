import ChimeCore
import Testing

@testable import ChimePostgres

/// The word a command sends the runner that shows a reminder's alerts (`NOTIFY chime_alerts`):
/// what it reads back is what was asked, and it always fits NOTIFY's payload.
struct AlertPayloadTests {
    @Test func aCloseAndAConfirmationReadBackAsAsked() {
        let close = Withdrawal(id: "tea")
        #expect(PostgresStore.alertPayload(close) == "tea")
        #expect(PostgresStore.withdrawal(fromPayload: PostgresStore.alertPayload(close)) == close)
        let done = Withdrawal(id: "tea", confirmation: .init(title: "✓ Done", body: "Tea is ready"))
        #expect(PostgresStore.withdrawal(fromPayload: PostgresStore.alertPayload(done)) == done)
        // An empty payload (a test's or another program's NOTIFY) asks nothing.
        #expect(PostgresStore.withdrawal(fromPayload: "") == nil)
    }

    @Test func tabsAndLineBreaksInTheTextsBecomeSpaces() {
        let asked = Withdrawal(id: "tea", confirmation: .init(title: "Snoozed\tuntil 10:30", body: "Tea\nis\r\nready"))
        let read = PostgresStore.withdrawal(fromPayload: PostgresStore.alertPayload(asked))
        #expect(read == Withdrawal(id: "tea", confirmation: .init(title: "Snoozed until 10:30", body: "Tea is ready")))
    }

    @Test func aLongBodyIsCutOnACharacterToFitNotify() {
        let body = String(repeating: "é", count: 6_000)
        let payload = PostgresStore.alertPayload(Withdrawal(id: "tea", confirmation: .init(title: "✓ Done", body: body)))
        #expect(payload.utf8.count <= 7_900 && payload.utf8.count > 7_800, "\(payload.utf8.count)")
        let read = PostgresStore.withdrawal(fromPayload: payload)
        #expect(read?.id == "tea" && read?.confirmation?.title == "✓ Done")
        #expect(read?.confirmation?.body.allSatisfy { $0 == "é" } == true)
    }
}
