import Foundation
import GRDB
import Testing

/// `chime list` and `chime history` written as they are read, with
/// `--limit` (and `--after ID` for the next page of `list`).
@Suite("chime list and history: pages, written as read", .serialized)
struct ListPagingTests {
    /// `count` reminders r00… due a minute apart, imported into `sandbox`'s store.
    func schedule(_ count: Int, in sandbox: borrowing Sandbox) throws {
        let items = (0..<count).map { index in
            #"{"id": "r\#(String(format: "%02d", index))", "title": "Reminder \#(index)", "in": "\#(index + 1)m"}"#
        }
        let path = sandbox.directory.appendingPathComponent("many.json").path
        try Data(("[" + items.joined(separator: ",") + "]").utf8).write(to: URL(fileURLWithPath: path))
        let imported = try sandbox.chime("import", path)
        #expect(imported.status == 0, "\(imported.stderr)")
    }

    func ids(_ json: String) throws -> [String] {
        try #require(try jsonObject(json)["reminders"] as? [[String: Any]]).compactMap { $0["id"] as? String }
    }

    @Test("--limit pages through the list in order, --after ID giving the next page, each page saying where the next starts")
    func pagesThroughTheList() throws {
        let sandbox = try Sandbox()
        try schedule(25, in: sandbox)
        let all = try ids(try sandbox.chime("list", "--json").stdout)
        #expect(all.count == 25)
        // Without --limit the document is as it always was: the reminders and whether a runner runs.
        #expect(try jsonObject(try sandbox.chime("list", "--json").stdout).keys.sorted() == ["reminders", "runner"])

        var pages: [[String]] = []
        var after: String?
        while true {
            let result = try sandbox.chime(["list", "--json", "--limit", "10"] + (after.map { ["--after", $0] } ?? []))
            #expect(result.status == 0, "\(result.stderr)")
            let page = try jsonObject(result.stdout)
            pages.append(try ids(result.stdout))
            guard page["more"] as? Bool == true else {
                #expect(page["next_after"] is NSNull)
                break
            }
            after = try #require(page["next_after"] as? String)
            #expect(after == pages.last?.last)
        }
        #expect(pages.map(\.count) == [10, 10, 5])
        #expect(pages.flatMap { $0 } == all)

        let table = try sandbox.chime("list", "--limit", "10", "--after", "r09")
        #expect(table.status == 0)
        let rows = table.stdout.split(separator: "\n")
        #expect(rows.count == 11, "\(table.stdout)")
        #expect(rows[1].hasPrefix("r10 "))
        #expect(table.stderr.contains("More after 'r19': chime list --after r19 --limit 10"), "\(table.stderr)")
        let last = try sandbox.chime("list", "--after", "r24")
        #expect(last.stdout == "No pending reminders after 'r24'.\n")
    }

    @Test("A bad --limit or an --after that names no pending reminder is one line, with its own exit status")
    func badPageOptions() throws {
        let sandbox = try Sandbox()
        try schedule(3, in: sandbox)
        let zero = try sandbox.chime("list", "--limit", "0")
        #expect(zero.status == 64)
        #expect(zero.stderr.contains("invalid --limit '0': expected a number of reminders from 1 to 1000000"), "\(zero.stderr)")
        let unknown = try sandbox.chime("list", "--after", "nope")
        #expect(unknown.status == 3)
        #expect(unknown.stderr.hasPrefix("chime: no pending reminder has the id 'nope' to list after"), "\(unknown.stderr)")
        #expect(try sandbox.chime("history", "--limit", "-1").status == 64)
    }

    @Test("history --limit N gives the latest N alerts, oldest first; --json is one document however long")
    func historyLimit() throws {
        let sandbox = try Sandbox()
        try schedule(12, in: sandbox)
        // Each reminder shown once, an hour apart, as a runner records it.
        let queue = try DatabaseQueue(path: sandbox.store)
        try queue.write { db in
            try db.execute(
                sql: """
                    INSERT INTO occurrence (reminder_key, due_us, state, recorded_us, posted_us, attempts, via)
                    SELECT key, 1700000000000000 + key * 3600000000, 'posted', 1700000000000000 + key * 3600000000,
                           1700000000000000 + key * 3600000000, 1, 'console'
                    FROM reminder
                    """
            )
        }
        try queue.close()
        let all = try jsonObject(try sandbox.chime("history", "--json").stdout)
        let alerts = try #require(all["alerts"] as? [[String: Any]])
        #expect(alerts.count == 12)
        let latest = try jsonObject(try sandbox.chime("history", "--json", "--limit", "4").stdout)
        let page = try #require(latest["alerts"] as? [[String: Any]])
        #expect(page.map { $0["id"] as? String } == alerts.suffix(4).map { $0["id"] as? String })
        let table = try sandbox.chime("history", "--limit", "2")
        #expect(table.stdout.split(separator: "\n").count == 3, "\(table.stdout)")
        #expect(table.stdout.hasPrefix("DUE "))
    }
}
