import ChimeCore
import ChimeGateway
import ChimeStore
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Through the real executable: `quiet status` and `list` say what
/// holds an alert and until when, `list` shows snoozed alerts and fits 80 columns, the doses
/// table lines up, the stats read as people read them, `gate add --pick` lists names, and
/// `doctor` reports the config file and the gateway.
@Suite("What is held, and a table that fits", .serialized)
struct HoldsAndListTests {
    /// An ISO 8601 instant with milliseconds, as Chime writes them.
    static func date(_ text: Any?) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return (text as? String).flatMap { formatter.date(from: $0) }
    }

    func json(_ sandbox: borrowing Sandbox, _ arguments: String...) throws -> [String: Any] {
        let result = try sandbox.chime(arguments)
        #expect(result.status == 0, "\(arguments): \(result.stderr)")
        return try jsonObject(result.stdout)
    }

    @Test("A focus session's hold: quiet status and list name it, with its end; the held reminder is listed as held")
    func focusSessionHoldIsNamed() async throws {
        let sandbox = try Sandbox()
        let runner = try sandbox.startRunner("--notifier", "json")
        #expect(await runner.waitUntilStarted(), "\(runner.stderr)")
        #expect(try sandbox.chime("focus", "start").status == 0)
        #expect(try sandbox.chime("in", "1s", "Tea", "--id", "tea").status == 0)
        let deadline = Date().addingTimeInterval(10)
        while try json(sandbox, "quiet", "status", "--json")["held"] as? Int != 1 && Date() < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        let status = try json(sandbox, "quiet", "status", "--json")
        #expect(status["held"] as? Int == 1)
        let holds = try #require(status["holds"] as? [[String: Any]])
        #expect(holds.count == 1, "\(holds)")
        #expect(holds.first?["source"] as? String == "family")
        #expect(holds.first?["reason"] as? String == "focus session #1")
        let until = try #require(Self.date(holds.first?["until"]))
        #expect(abs(until.timeIntervalSinceNow - 25 * 60) < 60, "\(until)")
        let held = try #require((status["held_alerts"] as? [[String: Any]])?.first)
        #expect(held["id"] as? String == "tea")
        #expect(held["reason"] as? String == "focus session #1")
        #expect(held["until"] as? String == holds.first?["until"] as? String)

        let human = try sandbox.chime("quiet", "status")
        #expect(human.stdout.contains("Holding:      focus session #1, until "), "\(human.stdout)")
        #expect(human.stdout.contains("  tea: Tea (due "), "\(human.stdout)")
        #expect(human.stdout.contains("held by focus session #1, until "), "\(human.stdout)")

        let list = try sandbox.chime("list")
        let row = try #require(list.stdout.split(separator: "\n").first { $0.hasPrefix("tea ") }, "\(list.stdout)")
        #expect(row.contains("held (focus)") && row.hasSuffix("Tea"), "\(row)")
        let listed = try json(sandbox, "list", "--json")
        let waiting = try #require((listed["waiting"] as? [[String: Any]])?.first, "\(listed)")
        #expect(waiting["held"] as? Bool == true && waiting["snoozed"] as? Bool == false)
        #expect(waiting["reason"] as? String == "focus session #1")
        // The session's completion alert is a focus reminder: counted under the table, kept in the JSON
        #expect(list.stdout.contains("Focus: 1 session alert (chime focus status)"), "\(list.stdout)")
        #expect((listed["reminders"] as? [[String: Any]])?.contains { $0["kind"] as? String == "focus" } == true)
        #expect(await runner.terminate() == 0)
    }

    @Test("A snoozed plain reminder is listed with its snoozed-until time, marked snoozed")
    func snoozedReminderIsListed() async throws {
        let sandbox = try Sandbox()
        let runner = try sandbox.startRunner("--notifier", "json")
        #expect(await runner.waitUntilStarted(), "\(runner.stderr)")
        #expect(try sandbox.chime("in", "1s", "Tea is ready", "--id", "tea").status == 0)
        _ = try #require(await runner.nextLine(timeout: 10), "\(runner.stderr)")
        let snoozed = try sandbox.chime("snooze", "tea", "30m")
        #expect(snoozed.status == 0, "\(snoozed.stderr)")
        let listed = try json(sandbox, "list", "--json")
        let waiting = try #require((listed["waiting"] as? [[String: Any]])?.first, "\(listed)")
        #expect(waiting["id"] as? String == "tea" && waiting["snoozed"] as? Bool == true && waiting["held"] as? Bool == false)
        let due = try #require(Self.date(waiting["due"]))
        #expect(abs(due.timeIntervalSinceNow - 1_800) < 60)

        let list = try sandbox.chime("list")
        let row = try #require(list.stdout.split(separator: "\n").first { $0.hasPrefix("tea ") }, "\(list.stdout)")
        #expect(row.contains("snoozed") && row.hasSuffix("Tea is ready"), "\(row)")
        #expect(row.contains(TimeText.local(due, in: .current).split(separator: " ").dropLast().joined(separator: " ")), "\(row)")
        #expect(await runner.terminate() == 0)
    }

    @Test("The list fits 80 columns: a long title of wide characters cut with …, whole characters; doses counted under it")
    func listFitsEightyColumns() throws {
        let sandbox = try Sandbox()
        let wide = String(repeating: "漢字🍵", count: 30)
        #expect(try sandbox.chime("in", "1h", wide, "--id", "wide").status == 0)
        #expect(try sandbox.chime("every", "day", "09:00", "A plain daily title that goes on", "--id", "daily").status == 0)
        #expect(try sandbox.chime("med", "add", "Aspirin", "--amount", "100", "--unit", "mg", "--at", "08:00,20:00").status == 0)

        let list = try sandbox.chime("list")
        #expect(list.status == 0, "\(list.stderr)")
        let lines = list.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        for line in lines { #expect(DisplayWidth.of(line) <= 80, "\(DisplayWidth.of(line)) columns: \(line)") }
        let row = try #require(lines.first { $0.hasPrefix("wide ") })
        #expect(row.hasSuffix("…"), "\(row)")
        let shown = try #require(row.split(separator: "  ").last).drop { $0 == " " }.dropLast()
        #expect(wide.hasPrefix(shown), "a character was split: \(shown)")
        #expect(DisplayWidth.of(row) >= 78, "the title takes the room there is: \(row)")
        // Dose alerts are left to 'chime doses': one line under the table
        #expect(!list.stdout.contains("Aspirin"), "\(list.stdout)")
        #expect(lines.contains { $0.hasPrefix("Doses: ") && $0.hasSuffix(" scheduled (chime doses)") }, "\(list.stdout)")
        // The JSON keeps every reminder, with its kind
        let reminders = try #require(try json(sandbox, "list", "--json")["reminders"] as? [[String: Any]])
        #expect(reminders.contains { $0["kind"] as? String == "dose" })
        #expect(reminders.contains { $0["id"] as? String == "wide" && $0["title"] as? String == wide })
    }

    @Test("The doses table's columns line up, by display width")
    func dosesTableLinesUp() throws {
        let sandbox = try Sandbox()
        for (name, amount) in [("Zinc", "25"), ("アスピリン", "100"), ("Vitamin D3 extra", "1000")] {
            let added = try sandbox.chime("med", "add", name, "--amount", amount, "--unit", "mg", "--at", "23:59")
            #expect(added.status == 0, "\(added.stderr)")
        }
        let doses = try sandbox.chime("doses")
        #expect(doses.status == 0, "\(doses.stderr)")
        let rows = doses.stdout.split(separator: "\n").filter { $0.hasPrefix("  ") }
        #expect(rows.count == 3, "\(doses.stdout)")
        let columns = Set(
            rows.map { row in
                let status = row.range(of: " pending") ?? row.range(of: " overdue")!
                return DisplayWidth.of(row[..<status.lowerBound])
            }
        )
        #expect(columns.count == 1, "status columns at \(columns): \(doses.stdout)")
    }

    @Test("Focus stats with no session read — for the completion rate; gate stats show the intentionality score in percent")
    func statsReadAsPeopleReadThem() throws {
        let sandbox = try Sandbox()
        let stats = try sandbox.chime("stats")
        #expect(stats.status == 0, "\(stats.stderr)")
        #expect(stats.stdout.contains("Completion rate  —\n"), "\(stats.stdout)")

        let store = try ReminderStore(path: sandbox.store, schemas: chimeSchemas)
        let book = GateBook(store: store)
        let now = Date()
        try book.record([
            GateEvent(programID: "firefox", at: now.addingTimeInterval(-60), pauseSeconds: 30, outcome: .exit),
            GateEvent(programID: "firefox", at: now.addingTimeInterval(-30), pauseSeconds: 30, outcome: .proceed),
        ])
        let gate = try sandbox.chime("gate", "stats")
        #expect(gate.status == 0, "\(gate.stderr)")
        #expect(gate.stdout.contains("Intentionality score:  50 %\n"), "\(gate.stdout)")
    }

    /// `chime gate add --pick` on a pty of `script`'s, answering `answer`.
    func pick(_ sandbox: borrowing Sandbox, answer: String) async throws -> (status: Int32, screen: String) {
        let script = sandbox.directory.appendingPathComponent("pick.sh")
        try "#!/bin/sh\nexec '\(ChimeExecutable.url.path)' gate add --pick\n".write(to: script, atomically: true, encoding: .utf8)
        chmod(script.path, 0o755)
        let process = Process()
        let input = Pipe()
        let output = Pipe()
        let screen = Mutex("")
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qefc", script.path, "/dev/null"]
        process.environment = sandbox.environment
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        // Read by polling a non-blocking descriptor, not with a readabilityHandler: Foundation's
        // dispatch source for it crashed libdispatch's event loop once the pipe closed.
        let fd = output.fileHandleForReading.fileDescriptor
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        func drain() {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(fd, &buffer, buffer.count)
                guard count > 0 else { return }
                screen.withLock { $0 += String(decoding: buffer[..<count], as: UTF8.self) }
            }
        }
        try process.run()
        let deadline = Date().addingTimeInterval(20)
        while !screen.withLock({ $0.contains("Gate which program?") }) && Date() < deadline {
            drain()
            try await Task.sleep(for: .milliseconds(20))
        }
        input.fileHandleForWriting.write(Data((answer + "\n").utf8))
        while process.isRunning && Date() < deadline {
            drain()
            try await Task.sleep(for: .milliseconds(20))
        }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        drain()
        return (process.terminationStatus, screen.withLock { $0 })
    }

    @Test("gate add --pick lists programs by name (ids only for duplicates), skips gated ones, and asks clearly")
    func pickListsNames() async throws {
        let sandbox = try Sandbox()
        let applications = sandbox.environment["XDG_DATA_HOME"]! + "/applications"
        try FileManager.default.createDirectory(atPath: applications, withIntermediateDirectories: true)
        let entries = [
            ("display-im6.q16", "ImageMagick (display Q16)"), ("eog", "Image Viewer"), ("org.gnome.Loupe", "Image Viewer"),
            ("mine", "Mine"), ("hidden", "Hidden one"),
        ]
        for (id, name) in entries {
            var text = "[Desktop Entry]\nType=Application\nName=\(name)\nExec=\(id)\n"
            if id == "hidden" { text += "NoDisplay=true\n" }
            try text.write(toFile: "\(applications)/\(id).desktop", atomically: true, encoding: .utf8)
        }
        #expect(try sandbox.chime("gate", "add", "mine").status == 0)

        let (status, screen) = try await pick(sandbox, answer: "1")
        #expect(status == 0, "\(screen)")
        #expect(screen.contains("Programs you can gate (1 already gated, not listed):"), "\(screen)")
        #expect(screen.contains("1. Image Viewer (eog.desktop)"), "\(screen)")
        #expect(screen.contains("2. Image Viewer (org.gnome.Loupe.desktop)"), "\(screen)")
        #expect(screen.contains("3. ImageMagick (display Q16)\r\n"), "\(screen)")
        #expect(!screen.contains("display-im6.q16.desktop") && !screen.contains("Mine") && !screen.contains("Hidden one"), "\(screen)")
        #expect(screen.contains("Gate which program? Type its number, 1 to 3: "), "\(screen)")
        #expect(screen.contains("Gated eog.desktop"), "\(screen)")
        let gated = try json(sandbox, "gate", "list", "--json")["programs"] as? [[String: Any]]
        #expect(gated?.compactMap { $0["id"] as? String }.sorted() == ["eog.desktop", "mine.desktop"])
    }

    @Test("doctor reports the config file (path, errors) and the gateway (gated, stale), writing nothing")
    func doctorReportsConfigAndGateway() throws {
        let sandbox = try Sandbox()
        let applications = sandbox.environment["XDG_DATA_HOME"]! + "/applications"
        try FileManager.default.createDirectory(atPath: applications, withIntermediateDirectories: true)
        let mine = applications + "/mine.desktop"
        try "[Desktop Entry]\nType=Application\nName=Mine\nExec=mine\n".write(toFile: mine, atomically: true, encoding: .utf8)
        #expect(try sandbox.chime("gate", "add", "mine").status == 0)

        var doctor = try json(sandbox, "doctor", "--json")
        let config = try #require(doctor["config"] as? [String: Any])
        let path = try #require(config["path"] as? String)
        #expect(path.hasSuffix("/chime/config.toml"))
        #expect(config["exists"] as? Bool == false && config["valid"] as? Bool == true && config["problem"] is NSNull)
        var gateway = try #require(doctor["gateway"] as? [String: Any])
        #expect(gateway["gated"] as? Int == 1 && (gateway["problems"] as? [String])?.isEmpty == true)
        #expect(try sandbox.chime("doctor").stdout.contains("Gateway:              1 program gated, all in order"))

        // The override edited by hand: a problem doctor names, and leaves as it is
        let edited = try String(contentsOfFile: mine, encoding: .utf8) + "Keywords=edited;\n"
        try edited.write(toFile: mine, atomically: true, encoding: .utf8)
        doctor = try json(sandbox, "doctor", "--json")
        gateway = try #require(doctor["gateway"] as? [String: Any])
        let problems = try #require(gateway["problems"] as? [String])
        #expect(problems.count == 1 && problems[0].hasPrefix("mine.desktop: "), "\(problems)")
        #expect(try String(contentsOfFile: mine, encoding: .utf8) == edited)

        // A bad config file: doctor still reports, names the error, exits 78
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent,
            withIntermediateDirectories: true
        )
        try "nonsense = = 1\n".write(toFile: path, atomically: true, encoding: .utf8)
        let bad = try sandbox.chime("doctor")
        #expect(bad.status == 78, "\(bad.stderr)")
        #expect(bad.stdout.contains("Config file:          \(path): "), "\(bad.stdout)")
        #expect(bad.stdout.contains("Runner:"), "\(bad.stdout)")
        #expect(bad.stderr.hasPrefix("chime: config file \(path)") && bad.stderr.split(separator: "\n").count == 1, "\(bad.stderr)")
        let badJSON = try jsonObject(try sandbox.chime("doctor", "--json").stdout)
        let badConfig = try #require(badJSON["config"] as? [String: Any])
        #expect(badConfig["exists"] as? Bool == true && badConfig["valid"] as? Bool == false)
        #expect((badConfig["problem"] as? String)?.isEmpty == false)
    }
    @Test("A plain reminder's alert carries Chime's icon and desktop-entry hint, its application id, as the real server received them")
    func plainAlertCarriesChimeIcon() async throws {
        let entry = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("packaging/io.github.chime.Chime.desktop")
        #expect(try String(contentsOf: entry, encoding: .utf8).contains("\nIcon=io.github.chime.Chime\n"))
        let server = try NotificationServer()
        defer { server.stop() }
        let sandbox = try Sandbox(extra: server.environment)
        let runner = try sandbox.startRunner("--notifier", "desktop")
        #expect(await runner.waitUntilStarted(), "\(runner.stderr)")
        #expect(try sandbox.chime("in", "1s", "Tea is ready", "--id", "tea").status == 0)
        #expect(
            await server.waitForLog { log in
                let call = log.components(separatedBy: "member=Notify\n").last ?? ""
                return call.contains(#"string "Tea is ready""#) && call.contains("\n   int32 ")
            },
            "\(runner.stderr)"
        )
        // Notify(app_name, replaces_id, app_icon, summary, body, …)
        let strings = NotificationServer.stringArguments(ofLastNotifyIn: server.monitorLog)
        try #require(strings.count >= 4, "\(server.monitorLog)")
        #expect(strings[1] == "io.github.chime.Chime", "\(strings)")
        #expect(strings[2] == "Tea is ready")
        // The hints: … dict entry( string "desktop-entry" variant string "io.github.chime.Chime" ) …
        let call = server.monitorLog.components(separatedBy: "member=Notify\n").last ?? ""
        let hint = call.components(separatedBy: #"string "desktop-entry""#).dropFirst().first ?? ""
        let value = hint.split(whereSeparator: \.isWhitespace).prefix(3).joined(separator: " ")
        #expect(value == #"variant string "io.github.chime.Chime""#, "\(call)")
        #expect(await runner.terminate() == 0)
    }
}
