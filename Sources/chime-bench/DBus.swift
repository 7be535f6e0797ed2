// dbus: the runner's D-Bus service. A Schedule call's round trip (median, p99) from a client
// already connected, next to `chime in`'s whole process in the same run; Fired's lateness (its
// arrival at a subscribed client minus the due instant it carries); and an idle runner's
// wake-ups with that client subscribed (0, as without one). The client is a small Python
// program on Debian's PyGObject (python3-gi): a real client written by others, as a status bar
// or an app would be; its own marshalling is in the round trip.
import ArgumentParser
import ChimeCore
import ChimeStore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

struct DBusBench: Workload {
    static let configuration = CommandConfiguration(
        commandName: "dbus",
        abstract: "The D-Bus service: Schedule's round trip vs chime in; Fired's lateness; idle wake-ups with a client subscribed."
    )

    @OptionGroup var options: BenchOptions

    static func measure(_ options: BenchOptions) async throws {
        try benchDBus(calls: options.quick ? 50 : 500, fired: options.quick ? 20 : 200, idleSeconds: options.quick ? 3 : 10)
    }
}

/// The client: `calls` Schedule round trips (each time printed, ms), then `fired` reminders due
/// over 2 s whose Fired it waits for (each lateness printed, ms), then it stays subscribed
/// until its standard input closes.
private let clientSource = #"""
    import json, sys, time
    import gi
    gi.require_version("Gio", "2.0")
    from gi.repository import Gio, GLib

    address, calls, fired = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    bus = Gio.DBusConnection.new_for_address_sync(
        address, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)
    name, path, interface = "io.github.chime.Chime", "/io/github/chime/Chime", "io.github.chime.Chime.Reminders1"

    def schedule(fields):
        return bus.call_sync(name, path, interface, "Schedule", GLib.Variant("(a{sv})", (fields,)),
                             GLib.VariantType("(s)"), Gio.DBusCallFlags.NONE, 10000, None).unpack()[0]

    trips = []
    for index in range(calls):
        start = time.perf_counter()
        schedule({"title": GLib.Variant("s", "Trip"), "in": GLib.Variant("s", "1h"), "id": GLib.Variant("s", "trip-%d" % index)})
        trips.append((time.perf_counter() - start) * 1000)
    print(json.dumps({"trips": trips}), flush=True)

    late = []
    loop = GLib.MainLoop()
    def on_fired(connection, sender, object_path, interface_name, signal, parameters):
        reminder, due_us, details = parameters.unpack()
        if reminder.startswith("fire-"):
            late.append(time.time() * 1000 - due_us / 1000)
            if len(late) == fired:
                loop.quit()
    bus.signal_subscribe(name, interface, "Fired", path, None, Gio.DBusSignalFlags.NONE, on_fired)
    first = time.time() + 2
    for index in range(fired):
        # From 2 s on, spread over 2 s, each at its millisecond (RFC 3339, as `chime at` takes it).
        due = first + index * 2.0 / fired
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(due)) + ".%03dZ" % int(due % 1 * 1000)
        schedule({"title": GLib.Variant("s", "Fire"), "at": GLib.Variant("s", stamp), "id": GLib.Variant("s", "fire-%d" % index)})
    GLib.timeout_add_seconds(60, loop.quit)
    loop.run()
    print(json.dumps({"late": late}), flush=True)
    sys.stdin.read()
    """#

func benchDBus(calls: Int, fired: Int, idleSeconds: Double) throws {
    let python = "/usr/bin/python3"  // Debian's, where python3-gi is installed
    guard FileManager.default.isExecutableFile(atPath: python) else {
        print("\n## D-Bus service: skipped (no \(python))")
        return
    }
    let directory = temporaryDirectory("dbus")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    var environment = ProcessInfo.processInfo.environment
    for (key, sub) in [
        ("HOME", "home"), ("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"), ("XDG_STATE_HOME", "state"),
        ("XDG_RUNTIME_DIR", "runtime"),
    ] {
        let path = directory + "/" + sub
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        environment[key] = path
    }
    for key in ["CHIME_STORE", "CHIME_NOTIFIER", "CHIME_LOG_LEVEL", "NOTIFY_SOCKET"] { environment[key] = nil }

    // A session bus of the benchmark's own (stopped by its pid).
    let addressFile = directory + "/bus.address"
    let bus = try spawn(
        "/usr/bin/dbus-daemon",
        ["--session", "--nofork", "--nopidfile", "--print-address=1"],
        environment: environment,
        output: addressFile
    )
    defer {
        // SIGKILL: spawn does not reset the signal mask, and this thread's blocks SIGTERM.
        kill(bus, SIGKILL)
        waitpid(bus, nil, 0)
    }
    var address = ""
    for _ in 0..<500 where address.isEmpty {
        usleep(10_000)
        address = ((try? String(contentsOfFile: addressFile, encoding: .utf8)) ?? "").split(separator: "\n").first.map(String.init) ?? ""
    }
    guard !address.isEmpty else { throw ChimeError(.failure, "dbus-daemon gave no address") }
    environment["DBUS_SESSION_BUS_ADDRESS"] = address

    let storePath = directory + "/chime.sqlite"
    _ = try ReminderStore(path: storePath, schemas: chimeSchemas)
    let runner = try startRunner(store: storePath, runtime: environment["XDG_RUNTIME_DIR"]!, base: environment)
    defer { stop(runner) }

    // `chime in` as a whole process, on the same store with the same runner up.
    var chimeIn: [Double] = []
    for round in 0...(calls >= 500 ? 21 : 5) {
        let ms = try timeChime(["in", "1h", "x", "--store", storePath], environment: environment)
        if round > 0 { chimeIn.append(ms) }
    }

    // The client, its output read line by line; its standard input held open until the idle
    // span is measured (it stays subscribed meanwhile).
    let script = directory + "/client.py"
    try clientSource.write(toFile: script, atomically: true, encoding: .utf8)
    let client = Process()
    client.executableURL = URL(fileURLWithPath: python)
    client.arguments = [script, address, String(calls), String(fired)]
    client.environment = environment
    let output = Pipe()
    let input = Pipe()
    client.standardOutput = output
    client.standardInput = input
    try client.run()
    let reader = output.fileHandleForReading
    func line() throws -> [String: [Double]] {
        var data = Data()
        while true {
            let byte = reader.readData(ofLength: 1)
            if byte.isEmpty || byte.first == UInt8(ascii: "\n") { break }
            data.append(byte)
        }
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: [Double]] else {
            throw ChimeError(.failure, "the D-Bus client printed no figures")
        }
        return object
    }
    let trips = try line()["trips"] ?? []
    let late = try line()["late"] ?? []

    // Idle: the runner with nothing due for an hour, the client subscribed to its signals.
    usleep(500_000)
    let pid = runner.processIdentifier
    let before = contextSwitches(pid)
    let cpuBefore = cpuSeconds(pid)
    usleep(useconds_t(idleSeconds * 1_000_000))
    let switches = switchesBetween(before, contextSwitches(pid))
    let cpu = cpuSeconds(pid) - cpuBefore
    try input.fileHandleForWriting.close()
    client.waitUntilExit()

    print("\n## D-Bus service: wall ms (a Python Gio client already connected; chime in: whole processes)")
    let widths = [52, 10, 10, 10, 30]
    print(row(["what", "median", "p99", "max", "target"], widths: widths))
    print(
        row(
            [
                "Schedule round trip (\(trips.count) calls)", fmt(median(trips), 3), fmt(percentile(trips, 99), 3),
                fmt(trips.max() ?? .nan, 3),
                // Both commit the reminder durably (SQLite's WAL, synchronous=FULL): the call
                // saves chime's process start, not the write.
                median(trips) < median(chimeIn) ? "< chime in: met" : "< chime in: OVER",
            ],
            widths: widths
        )
    )
    print(
        row(
            [
                "baseline: chime in 1h x (whole process, runner up)", fmt(median(chimeIn), 3), fmt(percentile(chimeIn, 99), 3),
                fmt(chimeIn.max() ?? .nan, 3), "",
            ],
            widths: widths
        )
    )
    print(
        row(
            [
                "Fired at the client minus its due instant (\(late.count) of \(fired))", fmt(median(late), 3),
                fmt(percentile(late, 99), 3),
                fmt(late.max() ?? .nan, 3), "p50 under 5 ms",
            ],
            widths: widths
        )
    )
    print(
        row(
            [
                "idle runner, client subscribed: ctx switches in \(Int(idleSeconds)) s", "\(switches)", "", "",
                switches == 0 ? "0: met" : "0: OVER",
            ],
            widths: widths
        )
    )
    print(row(["  its CPU seconds meanwhile", fmt(cpu, 3), "", "", ""], widths: widths))
}
