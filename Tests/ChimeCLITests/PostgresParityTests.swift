import ChimeCore
import ChimePostgres
import Foundation
import Testing

/// Plain reminders on PostgreSQL as on SQLite: the same commands run on a SQLite
/// sandbox and on a PostgreSQL one, and what they say is compared.
extension PostgresCLITests {
    @Test("--urgency, --sticky, --icon and --sound on in, at and every: kept, listed and shown as on SQLite")
    func thePresentationOptionsOnPostgres() async throws {
        try await withFreshCLIDatabase { url in
            let postgres = try Sandbox(extra: ["CHIME_STORE": url.description])
            let sqlite = try Sandbox()
            try Self.schedulePresented(sqlite)
            try Self.schedulePresented(postgres)
            // list --json, next --json and show --json: the same fields and values on both stores.
            for arguments in [["list", "--json"], ["next", "tea", "--json"], ["show", "tea", "--json"], ["show", "standup", "--json"]] {
                let onSQLite = try sqlite.chime(arguments)
                let onPostgres = try postgres.chime(arguments)
                #expect(onSQLite.status == 0 && onPostgres.status == 0, "\(arguments): \(onSQLite) \(onPostgres)")
                #expect(Self.presentations(onPostgres.stdout) == Self.presentations(onSQLite.stdout), "\(arguments)")
                #expect(Self.keys(onPostgres.stdout) == Self.keys(onSQLite.stdout), "\(arguments)")
            }
            let listed = try #require(try jsonObject(try postgres.chime("list", "--json").stdout)["reminders"] as? [[String: Any]])
            let byID = Dictionary(uniqueKeysWithValues: listed.map { ($0["id"] as? String ?? "", $0) })
            #expect(byID["tea"]?["urgency"] as? String == "critical" && byID["tea"]?["sticky"] as? Bool == true)
            #expect(byID["standup"]?["urgency"] as? String == "low" && byID["standup"]?["sound"] is NSNull)
            #expect(byID["dentist"]?["sound"] as? String == "message-new-instant" && byID["dentist"]?["urgency"] as? String == "normal")
            let shown = try postgres.chime("show", "tea")
            #expect(shown.status == 0 && shown.stdout.contains("title:    Tea") && shown.stdout.contains("state:    pending"), "\(shown)")
        }
    }

    @Test("A cancel of a one-shot already shown is too late (exit 8); show and history read the ledger, as on SQLite")
    func tooLateShowAndHistoryOnPostgres() async throws {
        try await withFreshCLIDatabase { url in
            let postgres = try Sandbox(extra: ["CHIME_STORE": url.description])
            let sqlite = try Sandbox()
            let lite = try await Self.fireAndCancel(sqlite)
            let pg = try await Self.fireAndCancel(postgres)
            let pgHistory = try #require(pg["history"])
            let liteHistory = try #require(lite["history"])
            let pgLast = try #require(pg["last"])
            let pgShow = try #require(pg["show"])
            let liteShow = try #require(lite["show"])
            for key in ["empty", "emptyJSON", "never", "showNever"] {
                #expect(
                    pg[key]?.status == lite[key]?.status && pg[key]?.stdout == lite[key]?.stdout,
                    "\(key): \(pg[key].map { "\($0)" } ?? "")"
                )
                #expect(pg[key]?.stderr == lite[key]?.stderr, "\(key)")
            }
            #expect(pg["empty"]?.stdout == "Nothing has fired yet.\n")
            #expect(pg["never"]?.status == 3)
            // The cancel came too late: exit 8, the same words (times differ).
            let cancel = try #require(pg["cancel"])
            #expect(cancel.status == 8 && lite["cancel"]?.status == 8, "\(cancel) \(lite["cancel"].map { "\($0)" } ?? "")")
            #expect(cancel.stderr.contains("too late: 'now' was shown at ") && cancel.stderr.contains("(due "), "\(cancel.stderr)")
            #expect(
                pg["again"]?.status == 3 && pg["again"]?.stderr.contains("it has already fired") == true,
                "\(pg["again"].map { "\($0)" } ?? "")"
            )
            #expect(pg["again"]?.stderr == lite["again"]?.stderr)
            // history --json: the same fields; the alert shown, then cancelled; the channel that showed it, as on SQLite.
            let alerts = try #require(try jsonObject(pgHistory.stdout)["alerts"] as? [[String: Any]])
            let liteAlerts = try #require(try jsonObject(liteHistory.stdout)["alerts"] as? [[String: Any]])
            #expect(alerts.count == 1 && liteAlerts.count == 1)
            #expect(Set(alerts[0].keys) == Set(liteAlerts[0].keys))
            for field in ["id", "kind", "title", "state", "result", "response", "missed", "attempts", "via"] {
                #expect("\(alerts[0][field] ?? "?")" == "\(liteAlerts[0][field] ?? "?")", "\(field)")
            }
            #expect(alerts[0]["result"] as? String == "cancelled" && alerts[0]["state"] as? String == "posted")
            #expect(alerts[0]["via"] is String && alerts[0]["posted"] is String && alerts[0]["answered"] is String, "\(alerts[0])")
            let table = try #require(pg["table"])
            #expect(table.status == 0 && table.stdout.hasPrefix("DUE"), "\(table)")
            #expect(table.stdout.contains("cancelled") && table.stdout.contains("now  Now"), "\(table.stdout)")
            #expect(try jsonObject(pgLast.stdout)["alerts"] as? [Any] != nil)
            // show: done, shown once, nothing next; the same fields as on SQLite.
            let shown = try jsonObject(pgShow.stdout)
            #expect(shown["state"] as? String == "done" && shown["shown"] as? Int == 1, "\(shown)")
            #expect((shown["next"] as? [Any])?.isEmpty == true)
            #expect(Set(shown.keys) == Set(try jsonObject(liteShow.stdout).keys))
        }
    }

    typealias Said = (status: Int32, stdout: String, stderr: String)

    /// A one-shot shown by a runner, then cancelled (too late), with what history and show say
    /// before and after.
    static func fireAndCancel(_ sandbox: borrowing Sandbox) async throws -> [String: Said] {
        var said: [String: Said] = [:]
        said["empty"] = try sandbox.chime("history")
        said["emptyJSON"] = try sandbox.chime("history", "--json")
        said["never"] = try sandbox.chime("history", "nosuch")
        said["showNever"] = try sandbox.chime("show", "nosuch")
        let runner = try sandbox.startRunner("--notifier", "json")
        #expect(await runner.waitUntilStarted(), "\(runner.stderr)")
        let now = try sandbox.chime("in", "1s", "Now", "--id", "now", "--json")
        #expect(now.status == 0, "\(now)")
        let line = await runner.nextLine(timeout: 20)
        #expect(line?.contains("\"Now\"") == true, "\(line ?? "nothing shown")")
        // The runner records the post just after it: wait for the ledger to say so.
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, !(try sandbox.chime("history", "now", "--json").stdout.contains("\"posted\":\"")) {
            try await Task.sleep(for: .milliseconds(50))
        }
        said["cancel"] = try sandbox.chime("cancel", "now")
        said["again"] = try sandbox.chime("cancel", "now")
        said["history"] = try sandbox.chime("history", "now", "--json")
        said["table"] = try sandbox.chime("history", "--limit", "5")
        said["show"] = try sandbox.chime("show", "now", "--json")
        said["last"] = try sandbox.chime("history", "--last", "1d", "--json")
        #expect(await runner.terminate() == 0)
        return said
    }

    /// in, every and at with presentation options, and one refused.
    static func schedulePresented(_ sandbox: borrowing Sandbox) throws {
        let tea = try sandbox.chime(
            "in",
            "25m",
            "Tea",
            "--id",
            "tea",
            "--urgency",
            "critical",
            "--sticky",
            "--icon",
            "appointment-soon",
            "--sound",
            "bell",
            "--json"
        )
        #expect(tea.status == 0, "\(tea)")
        let reminder = try #require(try jsonObject(tea.stdout)["reminder"] as? [String: Any])
        #expect(reminder["urgency"] as? String == "critical" && reminder["sticky"] as? Bool == true, "\(tea.stdout)")
        #expect(reminder["icon"] as? String == "appointment-soon" && reminder["sound"] as? String == "bell", "\(tea.stdout)")
        let standup = try sandbox.chime("every", "day", "at", "09:00", "Stand-up", "--id", "standup", "--urgency", "low")
        #expect(standup.status == 0, "\(standup)")
        let dentist = try sandbox.chime("at", "tomorrow 10:00", "Dentist", "--id", "dentist", "--sound", "message-new-instant")
        #expect(dentist.status == 0, "\(dentist)")
        let bad = try sandbox.chime("in", "5m", "x", "--urgency", "loud")
        #expect(bad.status == 64 && bad.stderr.contains("'loud'"), "\(bad)")
    }

    /// The presentation fields of every reminder in a command's JSON, by id.
    static func presentations(_ json: String) -> [String] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) else { return [] }
        var found: [String] = []
        func walk(_ value: Any) {
            if let dictionary = value as? [String: Any] {
                if let id = dictionary["id"] as? String, dictionary["urgency"] != nil {
                    found.append(
                        [
                            id, "\(dictionary["urgency"] ?? "")", "\(dictionary["sticky"] ?? "")", "\(dictionary["icon"] ?? "")",
                            "\(dictionary["sound"] ?? "")",
                        ]
                        .joined(separator: "|")
                    )
                }
                for key in dictionary.keys.sorted() { walk(dictionary[key] as Any) }
            } else if let array = value as? [Any] {
                array.forEach(walk)
            }
        }
        walk(object)
        return found
    }

    /// Every key path in a command's JSON (array items merged).
    static func keys(_ json: String) -> Set<String> {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) else { return [] }
        var found: Set<String> = []
        func walk(_ value: Any, _ path: String) {
            if let dictionary = value as? [String: Any] {
                for (key, item) in dictionary {
                    found.insert(path + "." + key)
                    walk(item, path + "." + key)
                }
            } else if let array = value as? [Any] {
                for item in array { walk(item, path + "[]") }
            }
        }
        walk(object, "")
        return found
    }
}
