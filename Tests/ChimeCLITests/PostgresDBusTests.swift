import ChimeDBus
import ChimePostgres
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `chime run` on a PostgreSQL store serves the D-Bus interface as the SQLite runner does
/// (DBusTests), driven by `gdbus` and `busctl` on a private session bus.
@Suite("PostgreSQL store: the runner serves D-Bus", .serialized)
struct PostgresDBusTests {
    typealias Bus = DBusTests.Bus

    @Test("Schedule, Get, List, Snooze, Done, Cancel, an error and the properties, over the bus")
    func theInterfaceThroughGdbusAndBusctl() async throws {
        try await withFreshCLIDatabase { url in
            let bus = try Bus()
            let sandbox = try Sandbox(extra: ["CHIME_STORE": url.description, "DBUS_SESSION_BUS_ADDRESS": bus.address])
            let runner = try sandbox.startRunner("--notifier", "json")
            defer { kill(runner.process.processIdentifier, SIGKILL) }
            #expect(
                await DBusTests.wait { runner.stderr.contains("D-Bus service: \(ChimeBus.name) on the session bus") },
                "\(runner.stderr)"
            )
            #expect(!runner.stderr.contains("No D-Bus service"), "\(runner.stderr)")

            let monitorLog = sandbox.directory.appendingPathComponent("monitor.log")
            let monitor = try bus.spawn(
                "/usr/bin/gdbus",
                ["monitor", "--session", "--dest", ChimeBus.name, "--object-path", ChimeBus.objectPath],
                output: monitorLog.path
            )
            defer { Bus.stop(monitor) }
            let monitored = { (try? String(contentsOf: monitorLog, encoding: .utf8)) ?? "" }
            #expect(await DBusTests.wait { monitored().contains("is owned by") }, "\(monitored())")

            // Schedule: in the database (the command line lists it), Changed names it.
            let scheduled = try DBusTests.gdbus("Schedule", "{'title': <'Tea'>, 'in': <'1s'>, 'id': <'tea'>}", bus: bus)
            #expect(scheduled.stdout == "('tea',)\n", "\(scheduled)")
            #expect(try sandbox.chime("list").stdout.contains("tea"))
            #expect(await DBusTests.wait { monitored().contains("\(ChimeBus.interface).Changed (['tea'],)") }, "\(monitored())")

            // Fired as the runner posts it (its JSON line is the post).
            #expect(
                await DBusTests.wait(timeout: 20) { monitored().contains("\(ChimeBus.interface).Fired ('tea', int64 ") },
                "\(monitored())"
            )
            #expect(await runner.nextLine(timeout: 5)?.contains("\"Tea\"") == true)

            // Snooze, then Done (which ends the snooze), then Done again: refused as on the command line.
            let snoozed = try DBusTests.gdbus("Snooze", "tea", "10m", bus: bus)
            #expect(snoozed.status == 0 && snoozed.stdout == "()\n", "\(snoozed)")
            #expect(await DBusTests.wait { monitored().contains("\(ChimeBus.interface).Answered ('tea', 'snooze')") }, "\(monitored())")
            let history = try sandbox.chime("history", "tea").stdout
            #expect(history.contains("snooze"), "\(history)")
            let done = try DBusTests.gdbus("Done", "tea", bus: bus)
            #expect(done.status == 0 && done.stdout == "()\n", "\(done)")
            #expect(await DBusTests.wait { monitored().contains("\(ChimeBus.interface).Answered ('tea', 'done')") }, "\(monitored())")
            let doneAgain = try DBusTests.gdbus("Done", "tea", bus: bus)
            let cliDoneAgain = try sandbox.chime("done", "tea")
            #expect(cliDoneAgain.status == 4, "\(cliDoneAgain)")
            #expect(doneAgain.status != 0 && doneAgain.stderr.contains("\(ChimeBus.name).Error.Conflict: "), "\(doneAgain)")

            // Get and List, with an app's id and its own actions kept in the database.
            let stretch = try DBusTests.gdbus(
                "Schedule",
                "{'title': <'Stretch'>, 'every': <'weekday 08:00'>, 'id': <'stretch'>, 'app-id': <'org.example.Notes'>, 'actions': <[('open', 'Open')]>}",
                bus: bus
            )
            #expect(stretch.stdout == "('stretch',)\n", "\(stretch)")
            let got = try DBusTests.gdbus("Get", "stretch", bus: bus)
            for field in [
                "'id': <'stretch'>", "'title': <'Stretch'>", "'recurring': <true>", "'next_due_us': <int64 ",
                "'app-id': <'org.example.Notes'>",
                "'actions': <[('open', 'Open')]>",
            ] {
                #expect(got.stdout.contains(field), "\(field) in \(got.stdout)")
            }
            // The properties: NextDue and Next from the database (read again after the runner's
            // pass that follows the change: waited for); the families' read as none.
            var lines: [String] = []
            var properties = (status: Int32(0), stdout: "", stderr: "")
            let refreshed = await DBusTests.wait {
                properties =
                    (try? DBusTests.run(
                        "/usr/bin/busctl",
                        [
                            "--address=" + bus.address, "get-property", ChimeBus.name, ChimeBus.objectPath, ChimeBus.interface, "NextDue",
                            "Next", "Focus", "NextDose", "Quiet",
                        ],
                        bus: bus
                    )) ?? properties
                lines = properties.stdout.split(separator: "\n").map(String.init)
                return lines.count > 1 && lines[1].contains("\"id\" s \"stretch\"")
            }
            #expect(refreshed, "\(properties)")
            #expect(lines.count == 5, "\(properties)")
            #expect(lines.first?.hasPrefix("x ") == true && lines.first != "x 0", "\(properties)")
            #expect(lines.count > 2 && lines[2].contains("\"state\" s \"none\""), "\(properties)")
            #expect(lines.count > 3 && lines[3] == "a{sv} 0", "\(properties)")
            #expect(lines.count > 4 && lines[4].contains("\"active\" b false"), "\(properties)")
            let listed = try DBusTests.busctl("List", bus: bus)
            #expect(listed.stdout.hasPrefix("aa{sv} 1 "), "\(listed)")
            #expect(listed.stdout.contains("\"id\" s \"stretch\""), "\(listed)")

            // Cancel: the outcome word, then NotFound with the command line's line.
            let cancelled = try DBusTests.busctl("Cancel", "s", "stretch", bus: bus)
            #expect(cancelled.stdout == "s \"cancelled\"\n", "\(cancelled)")
            #expect(try !sandbox.chime("list").stdout.contains("stretch"))
            let again = try DBusTests.gdbus("Cancel", "stretch", bus: bus)
            let cliAgain = try sandbox.chime("cancel", "stretch")
            #expect(again.status != 0 && cliAgain.status == 3, "\(again) \(cliAgain)")
            #expect(again.stderr.contains("GDBus.Error:\(ChimeBus.name).Error.NotFound: "), "\(again.stderr)")
            let cliLine = cliAgain.stderr.split(separator: "\n").first.map { String($0.drop { $0 != " " }.dropFirst()) } ?? "?"
            #expect(again.stderr.contains(cliLine), "'\(cliLine)' in \(again.stderr)")

            // Bad input: Invalid, with `chime in`'s own line; the runner goes on.
            let bad = try DBusTests.gdbus("Schedule", "{'title': <'T'>, 'in': <'5 minutes'>}", bus: bus)
            #expect(bad.stderr.contains("\(ChimeBus.name).Error.Invalid: invalid duration '5 minutes': "), "\(bad)")
            #expect(runner.process.isRunning)

            // The service's own changes were told by id only: the database's notifications of them
            // (sent by the service's own connection) are not taken for another process's change.
            // Tea (of no app) to every listener, at its schedule and its snooze; Stretch's, an
            // app's reminder, to that app alone, and it is not on the bus: to no one.
            #expect(monitored().components(separatedBy: ".Changed (['tea'],)").count == 3, "\(monitored())")
            #expect(!monitored().contains(".Changed (['stretch'],)"), "\(monitored())")
            #expect(!monitored().contains(".Changed (@as [],)"), "\(monitored())")

            // A change from another process on the database: Changed with no ids.
            #expect(try sandbox.chime("in", "1h", "Later", "--id", "later").status == 0)
            #expect(await DBusTests.wait { monitored().contains("\(ChimeBus.interface).Changed (@as [],)") }, "\(monitored())")
            #expect(await runner.terminate() == 0, "\(runner.stderr)")
        }
    }

    @Test("A second runner in the same session, on the same database, runs without the name")
    func aSecondRunnerOnTheSameBusRunsWithoutServing() async throws {
        try await withFreshCLIDatabase { url in
            let bus = try Bus()
            let first = try Sandbox(extra: ["CHIME_STORE": url.description, "DBUS_SESSION_BUS_ADDRESS": bus.address])
            let second = try Sandbox(extra: ["CHIME_STORE": url.description, "DBUS_SESSION_BUS_ADDRESS": bus.address])
            let one = try first.startRunner("--notifier", "console")
            defer { kill(one.process.processIdentifier, SIGKILL) }
            #expect(await DBusTests.wait { one.stderr.contains("D-Bus service: \(ChimeBus.name)") }, "\(one.stderr)")
            let two = try second.startRunner("--notifier", "console")
            defer { kill(two.process.processIdentifier, SIGKILL) }
            #expect(await DBusTests.wait { two.stderr.contains("is owned by another process: no D-Bus service") }, "\(two.stderr)")
            #expect(two.process.isRunning)
            // The first serves on: a reminder scheduled over the bus is the database's.
            let scheduled = try DBusTests.gdbus("Schedule", "{'title': <'Tea'>, 'in': <'1h'>, 'id': <'tea'>}", bus: bus)
            #expect(scheduled.stdout == "('tea',)\n", "\(scheduled)")
            #expect(try second.chime("list").stdout.contains("tea"))
            #expect(await two.terminate() == 0, "\(two.stderr)")
            #expect(await one.terminate() == 0, "\(one.stderr)")
        }
    }
}
