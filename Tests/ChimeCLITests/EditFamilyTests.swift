import Foundation
import Testing

/// `chime edit` of a family's reminder: the store refuses it knowing no family (the kind goes
/// with the error); the CLI names the family's own commands (ChimeApp), and nothing changes.
struct EditFamilyTests {
    @Test("chime edit of a dose's or a focus session's reminder names the family's commands (exit 4)")
    func aFamilysReminderNamesItsCommands() throws {
        let sandbox = try Sandbox()
        #expect(try sandbox.chime("med", "add", "Aspirin", "--amount", "100", "--unit", "mg", "--at", "08:00").status == 0)
        #expect(try sandbox.chime("focus", "start").status == 0)
        let listed = try sandbox.chime("list", "--json")
        let reminders = try #require(try jsonObject(listed.stdout)["reminders"] as? [[String: Any]], "\(listed)")
        let ids = Dictionary(reminders.compactMap { r in (r["kind"] as? String).flatMap { k in (r["id"] as? String).map { (k, $0) } } }) {
            first,
            _ in first
        }
        for (kind, commands) in [("dose", "'chime dose' and 'chime med'"), ("focus", "'chime focus'")] {
            let id = try #require(ids[kind], "\(ids)")
            let refused = try sandbox.chime("edit", id, "--title", "Other")
            #expect(refused.status == 4, "\(refused)")
            #expect(
                refused.stderr
                    == "chime: '\(id)' is a \(kind) reminder, not a plain one: 'chime edit' changes plain reminders only; use \(commands)\n"
            )
        }
        let after = try #require(try jsonObject(try sandbox.chime("list", "--json").stdout)["reminders"] as? [[String: Any]])
        #expect(!after.contains { $0["title"] as? String == "Other" })
    }
}
