import ChimePostgres
import Foundation
import Testing

/// `chime edit ID --exec ARGV... | --exec-shell CMD | --no-exec`: a reminder's command changed
/// in place, on either store.
@Suite("chime edit: a reminder's command", .serialized)
struct EditCommandTests {
    func command(_ sandbox: borrowing Sandbox, _ id: String) throws -> [String: Any]? {
        let list = try sandbox.chime("list", "--json")
        let reminders = try #require(try jsonObject(list.stdout)["reminders"] as? [[String: Any]], "\(list)")
        return try #require(reminders.first { $0["id"] as? String == id }, "\(reminders)")["command"] as? [String: Any]
    }

    /// The same steps on the store `sandbox` uses.
    func editsTheCommand(_ sandbox: borrowing Sandbox) throws {
        #expect(try sandbox.chime("in", "1h", "Backup", "--id", "backup").status == 0)
        #expect(try command(sandbox, "backup") == nil)

        let shell = try sandbox.chime("edit", "backup", "--exec-shell", "echo backup >> log", "--exec-timeout", "2m")
        #expect(shell.status == 0, "\(shell)")
        let set = try #require(try command(sandbox, "backup"))
        #expect(set["shell"] as? String == "echo backup >> log" && set["timeout_s"] as? Int == 120, "\(set)")

        // An argv: everything after --exec, options included; the title stays.
        let argv = try sandbox.chime("edit", "backup", "--title", "Nightly backup", "--exec", "/bin/echo", "--title", "x")
        #expect(argv.status == 0, "\(argv)")
        let replaced = try #require(try command(sandbox, "backup"))
        #expect(replaced["argv"] as? [String] == ["/bin/echo", "--title", "x"] && replaced["shell"] == nil, "\(replaced)")
        #expect(argv.stdout.contains("Nightly backup"), "\(argv.stdout)")
        // The table marks it.
        let table = try sandbox.chime("list").stdout
        #expect(table.contains("[exec] Nightly backup"), "\(table)")

        // Refused: one line, exit 64, nothing changed.
        let both = try sandbox.chime("edit", "backup", "--no-exec", "--exec-shell", "true")
        #expect(both.status == 64 && both.stderr.contains("both --no-exec and a command"), "\(both)")
        let missing = try sandbox.chime("edit", "backup", "--exec", "no-such-program-here")
        #expect(missing.status == 64 && missing.stderr.contains("no-such-program-here"), "\(missing)")
        let timeoutAlone = try sandbox.chime("edit", "backup", "--exec-timeout", "5m")
        #expect(timeoutAlone.status == 64 && timeoutAlone.stderr.contains("--exec-timeout without a command"), "\(timeoutAlone)")
        #expect(try command(sandbox, "backup")?["argv"] as? [String] == ["/bin/echo", "--title", "x"])

        // Taken away.
        let none = try sandbox.chime("edit", "backup", "--no-exec")
        #expect(none.status == 0, "\(none)")
        #expect(try command(sandbox, "backup") == nil)
        #expect(!(try sandbox.chime("list").stdout.contains("[exec]")))
    }

    @Test("On SQLite: --exec-shell, --exec and --no-exec change the command; bad ones change nothing")
    func onSQLite() throws {
        try editsTheCommand(try Sandbox())
    }

    @Test("On PostgreSQL: the same")
    func onPostgres() async throws {
        try await withFreshCLIDatabase { url in
            try editsTheCommand(try Sandbox(extra: ["CHIME_STORE": url.description]))
        }
    }
}
