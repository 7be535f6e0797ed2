import ChimeCore
import ChimeDBus
import ChimePostgres
import ChimeStore
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Programs written by others that call the service as apps: Python with GIO (PyGObject,
/// Debian's python3-gi), as a GTK or GNOME app would.
enum PythonApps {
    /// A client that owns the bus name APP-ID (as a `GApplication` does; `-`: none) and makes one
    /// call: `schedule ID TITLE` (under APP-ID), `list`, `get ID`, `cancel ID`. Prints the answer,
    /// or the D-Bus error's name.
    static let client = """
        import sys
        import gi
        gi.require_version("Gio", "2.0")
        from gi.repository import Gio, GLib

        app_id, method, args = sys.argv[1], sys.argv[2], sys.argv[3:]
        bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
        if app_id != "-":
            bus.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "RequestName",
                          GLib.Variant("(su)", (app_id, 4)), GLib.VariantType("(u)"), Gio.DBusCallFlags.NONE, 5000, None)

        def call(name, parameters, reply):
            return bus.call_sync("io.github.chime.Chime", "/io/github/chime/Chime", "io.github.chime.Chime.Reminders1", name,
                                 parameters, GLib.VariantType(reply), Gio.DBusCallFlags.NONE, 10000, None).unpack()

        try:
            if method == "schedule":
                fields = {"title": GLib.Variant("s", args[1]), "in": GLib.Variant("s", "1h"), "id": GLib.Variant("s", args[0])}
                if app_id != "-":
                    fields["app-id"] = GLib.Variant("s", app_id)
                print(call("Schedule", GLib.Variant("(a{sv})", (fields,)), "(s)")[0])
            elif method == "list":
                print(" ".join(sorted(item["id"] for item in call("List", None, "(aa{sv})")[0])))
            elif method == "get":
                print(call("Get", GLib.Variant("(s)", (args[0],)), "(a{sv})")[0]["title"])
            elif method == "cancel":
                print(call("Cancel", GLib.Variant("(s)", (args[0],)), "(s)")[0])
        except GLib.Error as error:
            print(Gio.DBusError.get_remote_error(error))
        """

    /// Writes `text` to `name` in `directory`; returns its path.
    static func write(_ text: String, named name: String, in directory: URL) throws -> String {
        let file = directory.appendingPathComponent(name)
        try text.write(to: file, atomically: true, encoding: .utf8)
        return file.path
    }
}

extension DBusTests {
    /// Runs the client as app `appID` on `bus`; its printed line.
    static func python(_ script: String, _ arguments: [String], bus: Bus) throws -> String {
        let result = try run("/usr/bin/python3", [script] + arguments, bus: bus)
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func anAppListsAndCancelsOnlyItsOwnRemindersAndChimeSeesAll() async throws {
        let bus = try Bus()
        let sandbox = try Sandbox(extra: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        let runner = try sandbox.startRunner("--notifier", "json")
        defer { kill(runner.process.processIdentifier, SIGKILL) }
        #expect(await Self.wait { runner.stderr.contains("D-Bus service: \(ChimeBus.name) on the session bus") }, "\(runner.stderr)")
        let client = try PythonApps.write(PythonApps.client, named: "client.py", in: sandbox.directory)
        func app(_ arguments: String...) throws -> String { try Self.python(client, arguments, bus: bus) }

        #expect(try app("org.example.A", "schedule", "a1", "From A") == "a1")
        #expect(try app("org.example.B", "schedule", "b1", "From B") == "b1")
        #expect(try app("-", "schedule", "plain", "From a script") == "plain")

        // Each app sees its own; a program that is no app (gdbus, a script) sees all, as chime does.
        #expect(try app("org.example.A", "list") == "a1")
        #expect(try app("org.example.B", "list") == "b1")
        #expect(try app("-", "list") == "a1 b1 plain")
        let listed = try Self.busctl("List", bus: bus)
        #expect(listed.stdout.hasPrefix("aa{sv} 3 ") && listed.stdout.contains("\"app-id\" s \"org.example.A\""), "\(listed)")

        // Another app's reminder is not found, as one that does not exist; nor replaced.
        let notFound = "\(ChimeBus.name).Error.NotFound"
        #expect(try app("org.example.A", "cancel", "b1") == notFound)
        #expect(try app("org.example.A", "get", "b1") == notFound)
        #expect(try app("org.example.A", "cancel", "plain") == notFound)
        #expect(try app("org.example.A", "get", "a1") == "From A")
        #expect(try app("org.example.A", "schedule", "b1", "Taken") == "\(ChimeBus.name).Error.Conflict")
        #expect(try app("org.example.B", "get", "b1") == "From B")
        #expect(try app("org.example.B", "cancel", "b1") == "cancelled")

        // chime sees all, and says whose.
        let list = try sandbox.chime("list")
        #expect(list.stdout.contains("a1") && list.stdout.contains("plain") && !list.stdout.contains("b1"), "\(list)")
        #expect(try sandbox.chime("show", "a1").stdout.contains("app:      org.example.A"))
        let json = try sandbox.chime("list", "--json").stdout
        #expect(json.contains("\"app_id\":\"org.example.A\"") || json.contains("\"app_id\" : \"org.example.A\""), "\(json)")
        #expect(await runner.terminate() == 0)
    }
}

extension DesktopTests {
    /// The issue's proof: a PyGObject `Gio.Application` schedules a reminder with an action and
    /// exits; the alert shows on the real notification server; pressing its button makes the
    /// runner invoke the action on the app (`org.freedesktop.Application.ActivateAction`), the
    /// bus starts the closed app again (D-Bus activation, as for GNotification), and it receives
    /// the action.
    @Test("An app's action: a closed Gio.Application is started by D-Bus activation and receives the pressed action")
    func aClosedAppIsStartedToReceiveItsAction() async throws {
        try await closedAppReceivesItsAction(store: [:]) { path in
            let store = try ReminderStore(path: path, schemas: chimeSchemas)
            return try await ledger(of: "notes", in: store) { $0.first?.response != nil }.map(\.response)
        }
    }

    /// The same on a PostgreSQL store: its runner serves D-Bus as the SQLite runner does.
    @Test("On PostgreSQL: an app's action reaches the closed Gio.Application that scheduled it over D-Bus")
    func onPostgresAClosedAppIsStartedToReceiveItsAction() async throws {
        try await withFreshCLIDatabase { url in
            try await closedAppReceivesItsAction(store: ["CHIME_STORE": url.description]) { _ in
                let store = PostgresStore(url)
                defer { store.client.reset() }
                for _ in 0..<100 {
                    if let response = try store.lastShown(id: "notes")?.response { return [response] }
                    try await Task.sleep(for: .milliseconds(50))
                }
                return [try store.lastShown(id: "notes")?.response]
            }
        }
    }

    /// The proof above, on the store `store` names (none: the sandbox's SQLite store);
    /// `responses` reads the answers recorded for reminder `notes` (given the sandbox's store path).
    func closedAppReceivesItsAction(
        store: [String: String],
        responses: (String) async throws -> [String?]
    ) async throws {
        let appID = "org.example.ChimeTestApp"
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chime-app-\(UUID().uuidString)")
        let services = directory.appendingPathComponent("services")
        try FileManager.default.createDirectory(at: services, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let marks = directory.appendingPathComponent("marks")
        let app = try PythonApps.write(
            """
            import sys
            import gi
            gi.require_version("Gio", "2.0")
            from gi.repository import Gio, GLib

            def mark(line):
                with open("\(marks.path)", "a") as marks:
                    marks.write(line + "\\n")

            app = Gio.Application(application_id="\(appID)", flags=Gio.ApplicationFlags.FLAGS_NONE)

            def opened(action, parameter):
                mark("action open")
                app.quit()

            action = Gio.SimpleAction.new("open", None)
            action.connect("activate", opened)
            app.add_action(action)

            def activated(app):
                fields = {
                    "title": GLib.Variant("s", "Open the notes"), "in": GLib.Variant("s", "1s"), "id": GLib.Variant("s", "notes"),
                    "app-id": GLib.Variant("s", "\(appID)"), "actions": GLib.Variant("a(ss)", [("open", "Open")]),
                }
                reply = app.get_dbus_connection().call_sync(
                    "io.github.chime.Chime", "/io/github/chime/Chime", "io.github.chime.Chime.Reminders1", "Schedule",
                    GLib.Variant("(a{sv})", (fields,)), GLib.VariantType("(s)"), Gio.DBusCallFlags.NONE, 10000, None)
                mark("scheduled " + reply.unpack()[0])

            app.connect("activate", activated)
            sys.exit(app.run(sys.argv))
            """,
            named: "app.py",
            in: directory
        )
        _ = try PythonApps.write(
            "[D-BUS Service]\nName=\(appID)\nExec=/usr/bin/python3 \(app) --gapplication-service\n",
            named: "\(appID).service",
            in: services
        )
        let server = try NotificationServer(services: services)
        defer { server.stop() }
        let choice = server.directory.appendingPathComponent("choice")
        // (The menu's line for the app's button, "#Open (…) […]", not Chime's own "#Open Chime": the body's.)
        try "#Open (".write(to: choice, atomically: true, encoding: .utf8)
        let dunst = try startDunst(choosingFrom: choice, server)
        defer {
            kill(dunst, SIGKILL)
            _ = NotificationServer.wait(dunst)
        }
        let sandbox = try Sandbox(extra: server.environment.merging(store) { _, given in given })
        // The app's desktop entry: D-Bus activatable, so its actions are sent back to it.
        let applications = URL(fileURLWithPath: try #require(sandbox.environment["XDG_DATA_HOME"])).appendingPathComponent("applications")
        try FileManager.default.createDirectory(at: applications, withIntermediateDirectories: true)
        try "[Desktop Entry]\nType=Application\nName=Chime test app\nExec=/usr/bin/python3 \(app)\nDBusActivatable=true\n"
            .write(to: applications.appendingPathComponent("\(appID).desktop"), atomically: true, encoding: .utf8)
        let runner = try sandbox.startRunner("--notifier", "desktop")
        defer { kill(runner.process.processIdentifier, SIGKILL) }
        #expect(await DBusTests.wait { runner.stderr.contains("D-Bus service: \(ChimeBus.name) on the session bus") }, "\(runner.stderr)")

        // First run: schedules, and exits.
        let first = try NotificationServer.spawn(
            "/usr/bin/python3",
            [app],
            environment: ["DBUS_SESSION_BUS_ADDRESS": try #require(server.environment["DBUS_SESSION_BUS_ADDRESS"])],
            output: directory.appendingPathComponent("first.log").path
        )
        let firstLog = (try? String(contentsOf: directory.appendingPathComponent("first.log"), encoding: .utf8)) ?? ""
        #expect(NotificationServer.wait(first) == 0, "\(firstLog)")
        let marked = { (try? String(contentsOf: marks, encoding: .utf8)) ?? "" }
        #expect(marked() == "scheduled notes\n")

        // The alert, with the app's button instead of Done and Snooze.
        #expect(await server.waitForLog { $0.contains(#"string "Open the notes""#) }, "\(runner.stderr)")
        let call = try #require(server.monitorLog.components(separatedBy: "member=Notify\n").last)
        #expect(call.contains(#"string "action:open""#) && call.contains(#"string "Open""#), "\(call)")
        #expect(!call.contains(#"string "done""#), "\(call)")

        // Pressed as a person would: the app, not running, is started and gets "open".
        try server.dunstctl("context")
        #expect(await DBusTests.wait(timeout: 20) { marked().contains("action open") }, "\(marked()) \(runner.stderr)")
        #expect(marked() == "scheduled notes\naction open\n")
        // (Logged once the app's reply comes, which may be after its mark.)
        #expect(await DBusTests.wait { runner.stderr.contains("Action 'open' of reminder notes sent to \(appID)") }, "\(runner.stderr)")
        #expect(try await responses(sandbox.store) == ["action:open"])
        #expect(await runner.terminate() == 0)
    }
}

extension PythonApps {
    /// A listener, as an app or a status bar listens: owns the bus name APP-ID (`-`: none),
    /// subscribes to every signal of the interface (from any sender), writes `ready`, then each
    /// signal received as `NAME ARGS` to the file LOG, and runs until stopped.
    static let listener = """
        import sys
        import gi
        gi.require_version("Gio", "2.0")
        from gi.repository import Gio, GLib

        app_id, log = sys.argv[1], sys.argv[2]
        out = open(log, "a", buffering=1)
        bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)

        def received(connection, sender, path, interface, signal, parameters):
            out.write(signal + " " + str(parameters) + "\\n")

        bus.signal_subscribe(None, "io.github.chime.Chime.Reminders1", None, "/io/github/chime/Chime", None,
                             Gio.DBusSignalFlags.NONE, received)
        if app_id != "-":
            bus.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "RequestName",
                          GLib.Variant("(su)", (app_id, 4)), GLib.VariantType("(u)"), Gio.DBusCallFlags.NONE, 5000, None)
        bus.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetId",
                      None, GLib.VariantType("(s)"), Gio.DBusCallFlags.NONE, 5000, None)
        out.write("ready\\n")
        GLib.MainLoop().run()
        """
}

extension DBusTests {
    /// The signals about an app's reminder go to that app only (the owner of its id's bus name),
    /// not to every listener; those about a reminder of no app are still broadcast, and those
    /// of an app that is not on the bus are sent to no one.
    @Test func signalsAboutAnAppsReminderGoToThatAppOnly() async throws {
        let bus = try Bus()
        let sandbox = try Sandbox(extra: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        let runner = try sandbox.startRunner("--notifier", "json")
        defer { kill(runner.process.processIdentifier, SIGKILL) }
        #expect(await Self.wait { runner.stderr.contains("D-Bus service: \(ChimeBus.name) on the session bus") }, "\(runner.stderr)")
        let script = try PythonApps.write(PythonApps.listener, named: "listener.py", in: sandbox.directory)
        func listen(_ appID: String, _ name: String) throws -> (pid: pid_t, log: () -> String) {
            let log = sandbox.directory.appendingPathComponent(name + ".log")
            let output = sandbox.directory.appendingPathComponent(name + ".out").path
            let pid = try bus.spawn("/usr/bin/python3", [script, appID, log.path], output: output)
            return (pid, { (try? String(contentsOf: log, encoding: .utf8)) ?? "" })
        }
        let appA = try listen("org.example.A", "a")
        defer { Bus.stop(appA.pid) }
        let other = try listen("-", "other")
        defer { Bus.stop(other.pid) }
        #expect(await Self.wait { appA.log().hasPrefix("ready\n") && other.log().hasPrefix("ready\n") }, "\(appA.log()) \(other.log())")

        // A's reminder, one of an app not on the bus, and one of no app: all fire in a second.
        for fields in [
            "{'title': <'Secret of A'>, 'in': <'1s'>, 'id': <'a1'>, 'app-id': <'org.example.A'>}",
            "{'title': <'Secret of Gone'>, 'in': <'1s'>, 'id': <'gone1'>, 'app-id': <'org.example.Gone'>}",
            "{'title': <'Tea'>, 'in': <'1s'>, 'id': <'tea'>}",
        ] {
            let scheduled = try Self.gdbus("Schedule", fields, bus: bus)
            #expect(scheduled.status == 0, "\(scheduled)")
        }
        #expect(
            await Self.wait { appA.log().contains("Fired ('a1', ") && other.log().contains("Fired ('tea', ") },
            "\(appA.log()) \(other.log())"
        )
        // (The JSON notifier's lines are the posts: each signal is sent after its post.)
        var posted = ""
        while !["Secret of A", "Secret of Gone", "Tea"].allSatisfy(posted.contains), let line = await runner.nextLine(timeout: 10) {
            posted += line
        }
        #expect(posted.contains("Secret of Gone"), "\(posted)")
        // The app answers its alert: Answered to it alone.
        let done = try Self.gdbus("Done", "a1", bus: bus)
        #expect(done.status == 0, "\(done)")
        #expect(await Self.wait { appA.log().contains("Answered ('a1', 'done')") }, "\(appA.log())")
        // A last broadcast: once the other listener has it, it had every earlier signal sent to it.
        _ = try Self.gdbus("Schedule", "{'title': <'Last'>, 'in': <'1h'>, 'id': <'last'>}", bus: bus)
        #expect(
            await Self.wait { other.log().contains("Changed (['last'],)") && appA.log().contains("Changed (['last'],)") },
            "\(other.log())"
        )

        // A had its own: Changed, Fired (with its title), Answered; and the broadcasts.
        #expect(appA.log().contains("Changed (['a1'],)"), "\(appA.log())")
        #expect(appA.log().contains("'title': <'Secret of A'>"), "\(appA.log())")
        #expect(appA.log().contains("Fired ('tea', "), "\(appA.log())")
        // The other listener: the broadcasts only, nothing of A's nor of the absent app's.
        #expect(other.log().contains("Changed (['tea'],)"), "\(other.log())")
        for secret in ["a1", "Secret", "gone1"] {
            #expect(!other.log().contains(secret), "\(secret) in \(other.log())")
        }
        #expect(!appA.log().contains("gone1"), "\(appA.log())")
        #expect(await runner.terminate() == 0)
    }
}
