import ChimeCore
import ChimeLibnotify
import ChimeStore
import ChimeTesting
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A private notification stack started by the project's own script (`scripts/notification-server`):
/// a session dbus-daemon with no service activation, Xvfb, dunst, and a bus monitor whose log
/// says what the server received. Stopped by pid when the test ends.
final class NotificationServer {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/notification-server").path
    /// The home and XDG directories of the stack's processes (dbus-daemon, Xvfb, dunst, dunstctl):
    /// one per test process, never the home of whoever runs the tests.
    static let home = FileManager.default.temporaryDirectory.appendingPathComponent("chime-desktop-home-\(getpid())")

    let directory: URL
    private(set) var environment: [String: String] = [:]
    private var restartedPID: pid_t?

    /// - Parameter services: a directory of D-Bus service files the bus activates (none by default).
    init(services: URL? = nil) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("chime-desktop-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let start = try Self.run([Self.script, "start", directory.path] + (services.map { [$0.path] } ?? []))
        guard start.status == 0 else { throw ServerError(message: "notification-server start failed: \(start.output)") }
        for line in try String(contentsOf: directory.appendingPathComponent("env"), encoding: .utf8).split(separator: "\n") {
            let assignment = line.replacingOccurrences(of: "export ", with: "")
            guard let equals = assignment.firstIndex(of: "=") else { continue }
            environment[String(assignment[..<equals])] = String(assignment[assignment.index(after: equals)...])
        }
    }

    /// Stops everything this server started, by pid. Called by each test; deinit is the backstop.
    func stop() {
        if let pid = restartedPID {
            kill(pid, SIGKILL)
            _ = Self.wait(pid)
        }
        restartedPID = nil
        guard FileManager.default.fileExists(atPath: directory.path) else { return }
        _ = try? Self.run([Self.script, "stop", directory.path])
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { stop() }

    struct ServerError: Error { var message: String }

    var monitorLog: String { (try? String(contentsOf: directory.appendingPathComponent("monitor.log"), encoding: .utf8)) ?? "" }

    /// The top-level string arguments of the last `Notify` call in a monitor log, as the server
    /// received them (app_name, app_icon, summary, body: one line each for text without newlines).
    static func stringArguments(ofLastNotifyIn log: String) -> [String] {
        guard let call = log.components(separatedBy: "member=Notify\n").last else { return [] }
        var strings: [String] = []
        for line in call.split(separator: "\n", omittingEmptySubsequences: false) {
            // Arguments are indented by three spaces; array members (actions, hints) by more.
            guard line.hasPrefix("   string \""), line.hasSuffix("\"") else {
                if line.hasPrefix("   array") { break }
                continue
            }
            strings.append(String(line.dropFirst("   string \"".count).dropLast()))
        }
        return strings
    }

    /// Waits (bounded) until the monitor log satisfies `predicate`.
    func waitForLog(timeout: Double = 8, _ predicate: (String) -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if predicate(monitorLog) { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return predicate(monitorLog)
    }

    /// The pid of dunst, as the script recorded it.
    var serverPID: pid_t? {
        let pids = (try? String(contentsOf: directory.appendingPathComponent("pids"), encoding: .utf8)) ?? ""
        return pids.split(separator: "\n").first { $0.hasPrefix("dunst ") }.flatMap { pid_t($0.split(separator: " ")[1]) }
    }

    /// Kills the notification server (by its pid), as a crash would: the bus stays, the name
    /// loses its owner. (SIGKILL: a child of a test thread may have SIGTERM blocked.)
    /// Replaces this server's dunst with one whose context menu (`dmenu`) is `chooser`, a shell
    /// script that reads the menu's lines and prints the one to choose: how a test picks an
    /// alert's action as a person would (`dunstctl context`: the runner's alerts have a default
    /// action, the body's click, which `dunstctl action 0` would invoke instead). Returns the new dunst's pid (the caller stops it by
    /// pid) once it owns the name; its configuration and log are `dunstrc-NAME` and
    /// `dunst-NAME.log` in the server's directory.
    func restartDunst(choosingWith chooser: String, name: String) throws -> pid_t {
        let script = directory.appendingPathComponent("choose-\(name)")
        try chooser.write(to: script, atomically: true, encoding: .utf8)
        chmod(script.path, 0o700)
        let testConfiguration = URL(fileURLWithPath: Self.script).deletingLastPathComponent()
            .appendingPathComponent("test-notification/dunstrc")
        let original = try String(contentsOf: testConfiguration, encoding: .utf8)
        guard original.contains("dmenu = /bin/false") else {
            throw ServerError(message: "\(testConfiguration.path) has no 'dmenu = /bin/false' to replace")
        }
        let configuration = directory.appendingPathComponent("dunstrc-\(name)")
        try original.replacingOccurrences(of: "dmenu = /bin/false", with: "dmenu = \(script.path)")
            .write(to: configuration, atomically: true, encoding: .utf8)
        stopServer()
        let log = directory.appendingPathComponent("dunst-\(name).log").path
        let pid = try Self.spawn("/usr/bin/dunst", ["-config", configuration.path], environment: environment, output: log)
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            let probe = try Self.spawn("/usr/bin/dunstctl", ["is-paused"], environment: environment, output: "/dev/null")
            if Self.wait(probe) == 0 { return pid }
            usleep(50_000)
        }
        kill(pid, SIGKILL)
        _ = Self.wait(pid)
        throw ServerError(message: "dunst did not start: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
    }

    func stopServer() {
        guard let pid = serverPID else { return }
        kill(pid, SIGKILL)
        Self.waitUntilGone(pid)
    }

    /// Waits (at most 5 s) until `pid` has exited: gone, or a zombie waiting to be reaped.
    static func waitUntilGone(_ pid: pid_t) {
        for _ in 0..<250 {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return }
            if let close = stat.lastIndex(of: ")"), stat[stat.index(close, offsetBy: 2)] == "Z" { return }
            usleep(20_000)
        }
    }

    /// Starts dunst again on the same bus and display; stopped by pid in ``stop()``.
    func restartServer() throws {
        let dunstrc = URL(fileURLWithPath: Self.script).deletingLastPathComponent().appendingPathComponent("test-notification/dunstrc")
        restartedPID = try Self.spawn("/usr/bin/dunst", ["-config", dunstrc.path], environment: environment, output: "/dev/null")
    }

    /// Stops only dunst, through the script (`stop-server`: by its recorded pid, TERM then
    /// KILL), and returns once the name has no owner: the bus and the display stay.
    func stopServerByScript() throws {
        let stop = try Self.run([Self.script, "stop-server", directory.path])
        guard stop.status == 0 else { throw ServerError(message: "notification-server stop-server failed: \(stop.output)") }
    }

    /// Starts dunst again through the script (`start-server`: recorded in its pids, so
    /// ``stop()`` stops it), and returns once it owns the name.
    func startServerByScript() throws {
        let start = try Self.run([Self.script, "start-server", directory.path])
        guard start.status == 0 else { throw ServerError(message: "notification-server start-server failed: \(start.output)") }
    }

    /// How many `Notify` calls carried `title` as their summary, per the bus monitor.
    func notifyCount(of title: String) -> Int {
        monitorLog.components(separatedBy: "member=Notify\n").dropFirst().filter { call in
            Self.stringArguments(ofLastNotifyIn: "member=Notify\n" + call).dropFirst(2).first == title
        }.count
    }

    /// Runs `dunstctl` on this server's bus: `close` dismisses the newest alert (reason 2),
    /// `action 0` invokes its lone action.
    func dunstctl(_ arguments: String...) throws {
        let pid = try Self.spawn("/usr/bin/dunstctl", arguments, environment: environment, output: "/dev/null")
        _ = Self.wait(pid)
    }

    /// Runs the script and waits for it, output in a file.
    private static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("chime-notification-server-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: log) }
        let status = wait(try spawn("/bin/bash", arguments, environment: [:], output: log.path))
        return (status, (try? String(contentsOf: log, encoding: .utf8)) ?? "")
    }

    /// Starts a program (see ``Spawn``) in an isolated environment (its home under the system's
    /// temporary directory, see ``IsolatedEnvironment``) with `extra` added.
    static func spawn(_ path: String, _ arguments: [String], environment extra: [String: String], output: String) throws -> pid_t {
        var environment = try IsolatedEnvironment.variables(root: home)
        environment.merge(extra) { $1 }
        guard case .success(let pid) = Spawn.start(path, arguments, environment: environment, output: output) else {
            throw ServerError(message: "cannot run \(path) \(arguments)")
        }
        return pid
    }

    static func wait(_ pid: pid_t) -> Int32 { Spawn.wait(pid) }
}

/// The desktop notifier against a real notification server: the real `chime` executable,
/// a real bus, dunst. These wait a few real seconds.
@Suite("Desktop: libnotify against a real notification server", .serialized)
struct DesktopTests {
    @Test(
        "notify: the title reaches the server as typed, the body escaped for a server that reads markup, and --json gives the server's id",
        arguments: [
            (#"Tea & biscuits"#, #"Milk & sugar"#),
            (#"<b>x</b> & y"#, #"<i>more</i> & less"#),
            (#"Say "hi" to 'Bo' > 2 < 3"#, #""quoted" and 'single' > < "#),
            (#"Fish & chips &"#, #"Lone at the end &"#),
            (#"&amp; stays &amp;"#, #"&lt;b&gt; stays too"#),
        ]
    )
    func titleAsTypedBodyEscaped(title: String, body: String) async throws {
        let server = try NotificationServer()
        defer { server.stop() }
        let sandbox = try Sandbox(extra: server.environment)
        let result = try sandbox.chime("notify", title, body, "--notifier", "desktop", "--json")
        #expect(result.status == 0, "\(result.stderr)")
        let shown = try jsonObject(result.stdout)
        #expect((shown["server_id"] as? Int ?? 0) > 0)

        // What the server received: Notify(app_name, replaces_id, app_icon, summary, body, …)
        #expect(
            await server.waitForLog { log in
                log.contains("member=Notify\n") && log.components(separatedBy: "member=Notify\n").last!.contains("\n   int32 ")
            }
        )
        let strings = NotificationServer.stringArguments(ofLastNotifyIn: server.monitorLog)
        try #require(strings.count >= 4, "\(server.monitorLog)")
        // The summary is plain text (the specification): exactly what the person typed
        #expect(strings[2] == title)
        // The body is markup for this server (dunst has body-markup): escaped, and it reads back as typed
        #expect(strings[3] == body.map { Self.entities[$0] ?? String($0) }.joined())
        #expect(Self.unescapeMarkup(strings[3]) == body)
        #expect(!strings[3].contains("<") && !strings[3].contains(">"))
    }

    /// The five characters markup gives a meaning to, and their entities.
    static let entities: [Character: String] = ["&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&apos;"]

    /// The five XML entities back to their characters (what a server that reads markup shows).
    static func unescapeMarkup(_ text: String) -> String {
        var out = ""
        var rest = Substring(text)
        while let first = rest.first {
            if first == "&", let (character, entity) = entities.first(where: { rest.hasPrefix($0.value) }) {
                out.append(character)
                rest = rest.dropFirst(entity.count)
            } else {
                out.append(first)
                rest = rest.dropFirst()
            }
        }
        return out
    }

    @Test("auto: the desktop when a server owns the name, else the console, and never a hang")
    func autoChoosesAndNeverHangs() async throws {
        let server = try NotificationServer()
        defer { server.stop() }
        let sandbox = try Sandbox(extra: server.environment)
        let desktop = try sandbox.chime("notify", "Hello")
        #expect(desktop.status == 0)
        #expect(desktop.stderr.isEmpty, "\(desktop.stderr)")

        // The bus without a server: console, at once
        server.stopServer()
        let started = Date()
        let console = try sandbox.chime("notify", "Hello again")
        #expect(Date().timeIntervalSince(started) < 3)
        #expect(console.status == 0)
        #expect(console.stderr.contains("Alerts go to the console"))
        #expect(console.stdout.contains("Hello again"))

        // No bus at all: console, and no bus or server is ever launched
        let noBus = try Sandbox(extra: ["DBUS_SESSION_BUS_ADDRESS": "", "DISPLAY": server.environment["DISPLAY"] ?? ":0"])
        let plain = try noBus.chime("notify", "No bus")
        #expect(plain.status == 0)
        #expect(plain.stderr.contains("No session bus"))
        #expect(try noBus.chime("notify", "x", "--notifier", "desktop").status == 7)
    }

    @Test("The runner shows a recurring alert, updates it in place, and cancel closes it")
    func runnerUpdatesInPlaceAndCancelCloses() async throws {
        let server = try NotificationServer()
        defer { server.stop() }
        let sandbox = try Sandbox(extra: server.environment)
        let runner = try sandbox.startRunner("--notifier", "desktop", "--log-level", "debug")
        #expect(await runner.waitUntilStarted(), "\(runner.stderr)")
        #expect(try sandbox.chime("every", "1s", "Blink", "--id", "blink").status == 0)

        // Two occurrences: the second replaces the first (same server id), not a second alert
        #expect(await server.waitForLog { log in log.components(separatedBy: #"string "Blink""#).count >= 3 })
        let notifies = server.monitorLog.components(separatedBy: "member=Notify\n").dropFirst()
        let replacesIDs = notifies.compactMap { call in
            call.split(separator: "\n").dropFirst().first.flatMap {
                UInt32($0.replacingOccurrences(of: "uint32", with: "").trimmingCharacters(in: .whitespaces))
            }
        }
        #expect(replacesIDs.first == 0)
        #expect(replacesIDs.count >= 2 && replacesIDs.dropFirst().allSatisfy { $0 != 0 }, "\(replacesIDs)")

        // Dismissing it is recorded in the ledger as the answer
        let store = try ReminderStore(path: sandbox.store, schemas: chimeSchemas)
        try server.dunstctl("close")
        var answered: String?
        for _ in 0..<100 where answered == nil {
            answered = try store.ledger(id: "blink").compactMap(\.response).first
            if answered == nil { try await Task.sleep(for: .milliseconds(30)) }
        }
        let ledger = try store.ledger(id: "blink")
        #expect(answered == "closed:dismissed", "\(runner.stderr)\n\(ledger)")

        // Cancel closes the shown alert (NotificationClosed, reason 3: closed by a call)
        #expect(try sandbox.chime("cancel", "blink").status == 0)
        #expect(await server.waitForLog { $0.contains("member=CloseNotification") && $0.contains("member=NotificationClosed") })
        #expect(await runner.terminate() == 0)
    }

    @Test("With no runner up, cancel closes the alert a runner showed, by the server's id")
    func cancelClosesWithoutARunner() async throws {
        let server = try NotificationServer()
        defer { server.stop() }
        let sandbox = try Sandbox(extra: server.environment)
        let runner = try sandbox.startRunner("--notifier", "desktop")
        #expect(await runner.waitUntilStarted(), "\(runner.stderr)")
        #expect(try sandbox.chime("every", "1s", "Blink", "--id", "blink").status == 0)
        #expect(await server.waitForLog { $0.contains(#"string "Blink""#) })
        #expect(await runner.terminate() == 0)
        let before = server.monitorLog.count
        #expect(!server.monitorLog.contains("member=CloseNotification"))

        // When it is cancelled with no runner to withdraw it, the command closes it itself
        #expect(try sandbox.chime("cancel", "blink").status == 0)
        #expect(await server.waitForLog { String($0.dropFirst(before)).contains("member=CloseNotification") })
    }

    @Test("Server gone: nothing is lost, the console shows it meanwhile, and it goes out once when the server is back")
    func serverGoneAndBack() async throws {
        let server = try NotificationServer()
        defer { server.stop() }
        let sandbox = try Sandbox(extra: server.environment)
        let runner = try sandbox.startRunner("--notifier", "desktop")
        #expect(await runner.waitUntilStarted(), "\(runner.stderr)")
        server.stopServer()

        // When a reminder falls due with no server, the console says so, and it stays undelivered
        #expect(try sandbox.chime("in", "1s", "Tea while away", "--id", "tea").status == 0)
        let echo = try #require(await runner.nextLine(timeout: 5))
        #expect(echo.contains("Tea while away") && echo.contains("not shown on the desktop yet"))
        let doctor = try jsonObject(try sandbox.chime("doctor", "--json").stdout)
        #expect((doctor["store"] as? [String: Any])?["undelivered"] as? Int == 1)

        // Then when the server is back, the retry shows it, once
        try server.restartServer()
        #expect(await server.waitForLog(timeout: 10) { $0.contains(#"string "Tea while away""#) })
        try await Task.sleep(for: .seconds(1))
        #expect(server.monitorLog.components(separatedBy: #"string "Tea while away""#).count == 2)
        let after = try jsonObject(try sandbox.chime("doctor", "--json").stdout)
        #expect((after["store"] as? [String: Any])?["undelivered"] as? Int == 0)
        #expect(await runner.terminate() == 0)
    }
}

/// `--notifier auto` follows the notification server: started and stopped by pid under a
/// running runner. These wait a few real seconds.
@Suite("Desktop: the runner follows the notification server", .serialized)
struct DesktopFollowTests {
    /// The runner's `where alerts go`, as `chime doctor --json` reports it.
    static func doctor(_ sandbox: borrowing Sandbox) throws -> (notifier: String, runner: String?, undelivered: Int?, waiting: Int?) {
        let doctor = try jsonObject(try sandbox.chime("doctor", "--json").stdout)
        return (
            doctor["notifier"] as? String ?? "",
            (doctor["runner"] as? [String: Any])?["notifier"] as? String,
            (doctor["store"] as? [String: Any])?["undelivered"] as? Int,
            (doctor["store"] as? [String: Any])?["waiting_for_server"] as? Int
        )
    }

    /// Waits (bounded) until doctor says the runner's alerts go to `word`.
    static func waitForDoctor(_ sandbox: borrowing Sandbox, saying word: String) async throws -> Bool {
        for _ in 0..<100 {
            if try doctor(sandbox).notifier == word { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    @Test("auto: started before the server, the runner switches to it and back, and what was only echoed is shown once")
    func autoSwitchFollowsTheServer() async throws {
        let server = try NotificationServer()
        defer { server.stop() }
        try server.stopServerByScript()
        let sandbox = try Sandbox(extra: server.environment)

        // Given a runner started on a bus with no notification server: the console, and doctor says so
        let runner = try sandbox.startRunner("--notifier", "auto")
        #expect(await runner.waitUntilStarted(), "\(runner.stderr)")
        #expect(runner.stderr.contains("Alerts go to the console until a notification server starts"), "\(runner.stderr)")
        #expect(!runner.stderr.contains("--notifier console"))
        var doctor = try Self.doctor(sandbox)
        #expect(doctor.notifier == "console")
        #expect(doctor.runner?.hasPrefix("console") == true, "\(doctor)")

        // When a reminder falls due: echoed on the console, and still due in the ledger
        #expect(try sandbox.chime("in", "1s", "Tea while away", "--id", "tea").status == 0)
        let echo = try #require(await runner.nextLine(timeout: 5))
        #expect(echo.contains("Tea while away") && echo.contains("when a notification server starts"), "\(echo)")
        doctor = try Self.doctor(sandbox)
        #expect(doctor.undelivered == 1 && doctor.waiting == 1, "\(doctor)")

        // Then a server appears: the runner switches to it and shows the echoed one there, at once
        try server.startServerByScript()
        #expect(await server.waitForLog(timeout: 10) { $0.contains(#"string "Tea while away""#) }, "\(runner.stderr)")
        #expect(try await Self.waitForDoctor(sandbox, saying: "desktop"))
        doctor = try Self.doctor(sandbox)
        #expect(doctor.runner?.hasPrefix("desktop (dunst") == true, "\(doctor)")
        // (Recorded as posted just after the server has it.)
        for _ in 0..<100 where try Self.doctor(sandbox).undelivered != 0 { try await Task.sleep(for: .milliseconds(50)) }
        #expect(try Self.doctor(sandbox).undelivered == 0)

        // The server leaves: back to the console; a server again: the new one shows it, once
        try server.stopServerByScript()
        #expect(try await Self.waitForDoctor(sandbox, saying: "console"))
        #expect(try sandbox.chime("in", "1s", "Second tea", "--id", "second").status == 0)
        let second = try #require(await runner.nextLine(timeout: 5))
        #expect(second.contains("Second tea"), "\(second)")
        try server.startServerByScript()
        #expect(await server.waitForLog(timeout: 10) { $0.contains(#"string "Second tea""#) }, "\(runner.stderr)")
        #expect(await runner.terminate() == 0)

        // A runner started again on the same store shows neither again: the ledger has them
        let again = try sandbox.startRunner("--notifier", "auto")
        #expect(await again.waitUntilStarted(), "\(again.stderr)")
        #expect(await again.lines(for: 2).isEmpty)
        #expect(await again.terminate() == 0)
        #expect(server.notifyCount(of: "Tea while away") == 1, "\(server.monitorLog)")
        #expect(server.notifyCount(of: "Second tea") == 1, "\(server.monitorLog)")
        #expect(try Self.doctor(sandbox).undelivered == 0)
    }

    @Test("notify: the desktop prints nothing on stderr unless -v; with no bus it does not suggest the option it fell back to")
    func notifyIsQuiet() async throws {
        let server = try NotificationServer()
        defer { server.stop() }
        let sandbox = try Sandbox(extra: server.environment)
        let quiet = try sandbox.chime("notify", "Quiet")
        #expect(quiet.status == 0)
        #expect(quiet.stderr.isEmpty, "\(quiet.stderr)")
        #expect(quiet.stdout.isEmpty, "\(quiet.stdout)")
        let verbose = try sandbox.chime("notify", "-v", "Loud")
        #expect(verbose.status == 0)
        #expect(verbose.stderr.contains("Alerts go to the desktop (dunst"), "\(verbose.stderr)")
        #expect(await server.waitForLog { $0.contains(#"string "Quiet""#) && $0.contains(#"string "Loud""#) })

        let noBus = try Sandbox(extra: ["DBUS_SESSION_BUS_ADDRESS": ""])
        let fellBack = try noBus.chime("notify", "No bus")
        #expect(fellBack.status == 0)
        #expect(fellBack.stdout.contains("No bus"))
        #expect(fellBack.stderr.contains("No session bus") && fellBack.stderr.contains("Alerts go to the console"), "\(fellBack.stderr)")
        #expect(!fellBack.stderr.contains("--notifier console"), "\(fellBack.stderr)")
    }
}

/// The notifier itself, in this process, against the real server: every field as sent, update
/// in place, withdraw, and the server's answers (action, dismiss, close, expiry) as responses.
/// One test: GLib keeps one session bus per process.
@Suite("Desktop: LibnotifyNotifier in process", .serialized)
struct LibnotifyNotifierTests {
    @Test("Fields, update in place, withdraw, and responses from the real server")
    func notifierAgainstTheRealServer() async throws {
        let server = try NotificationServer()
        defer { server.stop() }
        setenv("DBUS_SESSION_BUS_ADDRESS", try #require(server.environment["DBUS_SESSION_BUS_ADDRESS"]), 1)
        let notifier = try await LibnotifyNotifier.connect().get()
        #expect(notifier.status.serverName == "dunst")
        #expect(notifier.status.capabilities.contains("actions") && notifier.status.capabilities.contains("body-markup"))
        let responses = ResponseLog(notifier.responses)

        // Every field arrives as sent
        var note = Note(
            id: "med",
            title: "Medication Reminder",
            body: "Aspirin (100 mg) <take with water>",
            urgency: .critical,
            actions: [.init(key: "take", label: "Mark as Taken"), .init(key: "snooze", label: "Snooze 10 min")],
            timeout: .seconds(600),
            postedAt: Date()
        )
        note.icon = "appointment-soon"
        note.category = "x-chime.dose"
        note.hints = ["x-chime-schedule": "12"]
        let first = try await notifier.post(note)
        let serverID = try #require(first.serverID)
        #expect(await server.waitForLog { $0.contains(#"string "Aspirin (100 mg) &lt;take with water&gt;""#) })
        let call = try #require(server.monitorLog.components(separatedBy: "member=Notify\n").last)
        for expected in [
            #"string "Medication Reminder""#, #"string "take""#, #"string "Mark as Taken""#, #"string "snooze""#,
            #"string "appointment-soon""#, #"string "x-chime.dose""#, #"string "x-chime-schedule""#, #"string "12""#,
            "byte 2", "int32 600000",
        ] {
            #expect(call.contains(expected), "\(expected) not in \(call)")
        }

        // Posting the same id again updates it in place
        var again = note
        again.title = "Medication Reminder (Snoozed)"
        #expect(try await notifier.post(again).serverID == serverID)

        // Withdraw closes it: closed by a call
        try await notifier.withdraw(PostedNote(id: "med"))
        #expect(await responses.next() == NoteResponse(noteID: "med", kind: .closed(.closedByCall)))

        // An action invoked on the server comes back as a response (dunst invokes a lone action)
        _ = try await notifier.post(
            Note(id: "dose", title: "Dose", actions: [.init(key: "take", label: "Mark as Taken")], postedAt: Date())
        )
        try server.dunstctl("action", "0")
        #expect(await responses.next() == NoteResponse(noteID: "dose", kind: .action("take")))
        try await notifier.withdraw(PostedNote(id: "dose"))
        #expect(await responses.next() == NoteResponse(noteID: "dose", kind: .closed(.closedByCall)))

        // Dismissed by the person
        _ = try await notifier.post(Note(id: "tea", title: "Tea", postedAt: Date()))
        try server.dunstctl("close")
        #expect(await responses.next() == NoteResponse(noteID: "tea", kind: .closed(.dismissed)))

        // A short timeout expires
        _ = try await notifier.post(Note(id: "blink", title: "Blink", timeout: .milliseconds(200), postedAt: Date()))
        #expect(await responses.next() == NoteResponse(noteID: "blink", kind: .closed(.expired)))
    }
}

/// Responses as they arrive; ``next()`` waits at most a few seconds, so a missing answer fails
/// the test instead of hanging it.
final class ResponseLog: Sendable {
    private final class Box: Sendable { let items = Mutex<[NoteResponse]>([]) }
    private let box = Box()
    private let reader: Task<Void, Never>

    init(_ stream: AsyncStream<NoteResponse>) {
        let box = box
        reader = Task { for await response in stream { box.items.withLock { $0.append(response) } } }
    }

    deinit { reader.cancel() }

    func next(timeout: Double = 5) async -> NoteResponse? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let first = box.items.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { return first }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }
}
