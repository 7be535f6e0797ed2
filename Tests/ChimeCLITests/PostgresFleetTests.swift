import ChimeCore
import ChimePostgres
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Several `chime run` processes sharing one PostgreSQL store: the real executable, a
/// real server (scripts/test starts one per run), real signals. These take real seconds: the
/// runners compare only with the database's clock, which a test cannot move under a running
/// process without lying to it; the one-shots are placed a few seconds ahead instead.
@Suite("PostgreSQL store: several runners", .serialized)
struct PostgresFleetTests {
    static let utc = TimeZone(identifier: "UTC")!

    /// The occurrences a runner printed on its JSON stream, as "id@due" (a summary's each).
    static func delivered(_ lines: [String]) -> [String] {
        lines.flatMap { line -> [String] in
            guard let object = try? jsonObject(line) else { return [] }
            if object["event"] as? String == "summary" {
                return (object["occurrences"] as? [[String: Any]] ?? []).compactMap { occurrence in
                    guard let id = occurrence["id"] as? String, let due = occurrence["due"] as? String else { return nil }
                    return "\(id)@\(due)"
                }
            }
            guard let id = object["id"] as? String, let due = object["due"] as? String else { return [] }
            return ["\(id)@\(due)"]
        }
    }

    /// The ledger: every occurrence's reminder id, due instant ("id@due", as the stream prints
    /// it), state, missed count, lateness of its claim in ms (claim - due, the database's clock).
    static func ledger(
        _ store: PostgresStore
    ) throws -> [(key: String, id: String, dueMicros: Int64, state: String, missed: Int, lateMs: Double?)] {
        var rows: [(key: String, id: String, dueMicros: Int64, state: String, missed: Int, lateMs: Double?)] = []
        let result = try store.client.rows(
            """
            SELECT r.id, o.due_us, o.state, o.missed_count,
                (extract(epoch FROM o.posted_at) * 1000 - o.due_us / 1000.0)::float8
            FROM occurrence o JOIN reminder r ON r.key = o.reminder_key
            """
        )
        for row in result {
            let (id, due, state, missed, late) = try row.decode((String, Int64, String, Int, Double?).self)
            rows.append(("\(id)@\(TimeText.iso(Date(micros: due)))", id, due, state, missed, late))
        }
        return rows
    }

    static func run(_ store: PostgresStore, _ sql: String) throws -> Int {
        try store.client.rows(PostgresQuery(unsafeSQL: sql)).count
    }

    @Test(
        "Two runners, one store, one on the JSON stream and one on a webhook: each reminder once, by one of them; a cancel from elsewhere holds for both"
    )
    func twoRunnersShareTheStore() async throws {
        try await withFreshCLIDatabase { url in
            let receiver = try WebhookReceiver()
            defer { receiver.stop() }
            let sandbox = try Sandbox(extra: ["CHIME_STORE": url.description])
            let a = try sandbox.startRunner("--notifier", "json")
            let b = try sandbox.startRunner("--notifier", "webhook", "--webhook-url", "http://127.0.0.1:\(receiver.port)/hook")
            #expect(await a.waitUntilStarted(), "\(a.stderr)")
            #expect(await b.waitUntilStarted(), "\(b.stderr)")
            let listed = try jsonObject(try sandbox.chime("list", "--json").stdout)
            #expect(listed["runner"] as? Bool == true, "\(listed)")

            for index in 0..<12 {
                let scheduled = try sandbox.chime("in", "2s", "Deploy \(index)", "--id", "deploy-\(index)")
                #expect(scheduled.status == 0, "\(scheduled)")
            }
            #expect(try sandbox.chime("in", "2s", "Never", "--id", "never").status == 0)
            let cancelled = try sandbox.chime("cancel", "never")
            #expect(cancelled.status == 0, "\(cancelled)")

            let expected = Set((0..<12).map { "deploy-\($0)" })
            var seen: [String] = []
            let deadline = Date().addingTimeInterval(15)
            while Date() < deadline {
                seen += Self.delivered(a.drain()).map { String($0.split(separator: "@")[0]) }
                let posted = receiver.requests.compactMap { ($0["body"] as? [String: Any])?["id"] as? String }
                if Set(seen + posted) == expected { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            try await Task.sleep(for: .seconds(1))
            seen += Self.delivered(a.drain()).map { String($0.split(separator: "@")[0]) }
            let posted = receiver.requests.compactMap { ($0["body"] as? [String: Any])?["id"] as? String }
            #expect(Set(seen + posted) == expected, "json: \(seen), webhook: \(posted); \(a.stderr) \(b.stderr)")
            #expect(seen.count + posted.count == 12, "each once: json \(seen), webhook \(posted)")
            #expect(!seen.contains("never") && !posted.contains("never"))
            #expect(await a.terminate() == 0)
            #expect(await b.terminate() == 0)
            try await PostgresStore.withStore(url) { store in
                let ledger = try Self.ledger(store)
                #expect(ledger.filter { $0.id.hasPrefix("deploy-") && $0.state == "posted" }.count == 12, "\(ledger)")
                #expect(ledger.first { $0.id == "never" }?.state == "cancelled")
            }
        }
    }
}
