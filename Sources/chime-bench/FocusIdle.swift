// focus-idle: the runner's wake-ups per minute at rest during a focus session with an idle
// monitor subscribed (a stand-in of GNOME's org.gnome.Mutter.IdleMonitor on a private session
// bus), next to the same session with no idle source (`[focus] idle_pause = "off"`), measured in
// the same run. The goal: 0 between due instants (the monitor's watches are signals, not polls).
import ArgumentParser
import ChimeCore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

struct FocusIdleBench: Workload {
    static let configuration = CommandConfiguration(
        commandName: "focus-idle",
        abstract: "The runner's wake-ups per minute during a focus session, with and without an idle monitor subscribed."
    )

    @OptionGroup var options: BenchOptions

    static func measure(_ options: BenchOptions) async throws {
        try benchFocusIdle(seconds: options.quick ? 10 : 60, runs: options.runs)
    }
}

/// The Mutter IdleMonitor stand-in: watches and their removal, and one line per call (counted).
private let mutterStandIn = """
    import sys
    from gi.repository import Gio, GLib
    XML = '''<node><interface name="org.gnome.Mutter.IdleMonitor">
    <method name="GetIdletime"><arg type="t" direction="out"/></method>
    <method name="AddIdleWatch"><arg type="t" direction="in"/><arg type="u" direction="out"/></method>
    <method name="AddUserActiveWatch"><arg type="u" direction="out"/></method>
    <method name="RemoveWatch"><arg type="u" direction="in"/></method>
    <signal name="WatchFired"><arg type="u"/></signal></interface></node>'''
    bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
    count = [0]
    def method(connection, sender, path, interface, name, parameters, invocation):
        count[0] += 1
        print("call", name, flush=True)
        if name == "GetIdletime": invocation.return_value(GLib.Variant("(t)", (1000,)))
        elif name == "RemoveWatch": invocation.return_value(None)
        else: invocation.return_value(GLib.Variant("(u)", (count[0],)))
    bus.register_object("/org/gnome/Mutter/IdleMonitor/Core", Gio.DBusNodeInfo.new_for_xml(XML).interfaces[0], method, None, None)
    loop = GLib.MainLoop()
    Gio.bus_own_name_on_connection(bus, "org.gnome.Mutter.IdleMonitor", Gio.BusNameOwnerFlags.NONE,
                                   lambda *a: print("ready", flush=True), lambda *a: loop.quit())
    loop.run()
    """

func benchFocusIdle(seconds: Double, runs: Int) throws {
    print("\n## Focus with an idle monitor: the runner's wake-ups per minute at rest during a session, median of \(runs) runs")
    print("(context switches of all its threads, voluntary + involuntary, over \(Int(seconds)) s between due instants; goal: 0)")
    let python = "/usr/bin/python3"  // Debian's, where python3-gi is installed
    guard FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon"), FileManager.default.isExecutableFile(atPath: python) else {
        print("(dbus-daemon or /usr/bin/python3 missing: skipped)")
        return
    }
    let widths = [58, 16, 18]
    print(row(["runner", "wakes / min", "monitor calls"], widths: widths))
    var figures: [String: [Double]] = [:]
    var calls: [String: [Int]] = [:]
    let cases = [("baseline: no idle source (idle_pause = \"off\")", false), ("GNOME Mutter IdleMonitor subscribed (stand-in)", true)]
    for _ in 0..<runs {
        for (label, subscribed) in cases {
            let (perMinute, monitorCalls) = try measureFocusRest(seconds: seconds, subscribed: subscribed, python: python)
            figures[label, default: []].append(perMinute)
            calls[label, default: []].append(monitorCalls)
        }
    }
    for (label, subscribed) in cases {
        let monitor = subscribed ? "\(calls[label]?.max() ?? 0) during the span" : "-"
        print(row([label, fmt(median(figures[label] ?? []), 2), monitor], widths: widths))
    }
}

/// One span at rest: a private session bus (and the Mutter stand-in when `subscribed`), a
/// runner on a fresh store with a 25-minute session started, then `seconds` of nothing. Returns
/// the runner's context switches per minute and the stand-in's calls during the span.
private func measureFocusRest(seconds: Double, subscribed: Bool, python: String) throws -> (Double, Int) {
    let directory = temporaryDirectory("focus-idle")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    var environment = ProcessInfo.processInfo.environment
    for (key, sub) in [("HOME", "home"), ("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"), ("XDG_RUNTIME_DIR", "runtime")] {
        let path = directory + "/" + sub
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        environment[key] = path
    }
    for key in ["CHIME_STORE", "CHIME_NOTIFIER", "CHIME_LOG_LEVEL", "NOTIFY_SOCKET"] { environment[key] = nil }
    // No system bus (logind) to find: the session bus is the whole desktop here.
    environment["CHIME_SYSTEM_BUS_ADDRESS"] = "unix:path=\(directory)/no-system-bus"
    environment["CHIME_FOCUS_IDLE_PAUSE"] = subscribed ? "10m" : "off"
    let addressFile = directory + "/bus.address"
    let bus = try spawn(
        "/usr/bin/dbus-daemon",
        ["--session", "--nofork", "--nopidfile", "--print-address=1"],
        environment: environment,
        output: addressFile
    )
    defer {
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

    var standIn: pid_t?
    let standInLog = directory + "/mutter.log"
    if subscribed {
        let script = directory + "/mutter.py"
        try mutterStandIn.write(toFile: script, atomically: true, encoding: .utf8)
        standIn = try spawn(python, [script], environment: environment, output: standInLog)
        for _ in 0..<500 where !((try? String(contentsOfFile: standInLog, encoding: .utf8)) ?? "").contains("ready") { usleep(10_000) }
    }
    defer {
        if let standIn {
            kill(standIn, SIGKILL)
            waitpid(standIn, nil, 0)
        }
    }
    func standInCalls() -> Int {
        ((try? String(contentsOfFile: standInLog, encoding: .utf8)) ?? "").components(separatedBy: "call ").count - 1
    }

    let storePath = directory + "/chime.sqlite"
    environment["CHIME_STORE"] = storePath
    _ = try chimeJSON(["focus", "start", "--json"], environment: environment, scratch: directory)
    let runner = try startRunner(store: storePath, runtime: environment["XDG_RUNTIME_DIR"]!, base: environment)
    defer { stop(runner) }
    if subscribed {
        // Subscribed: its watch is added (AddIdleWatch) before the span begins.
        for _ in 0..<500 where !((try? String(contentsOfFile: standInLog, encoding: .utf8)) ?? "").contains("AddIdleWatch") {
            usleep(10_000)
        }
        guard ((try? String(contentsOfFile: standInLog, encoding: .utf8)) ?? "").contains("AddIdleWatch") else {
            throw ChimeError(.failure, "the runner did not subscribe to the Mutter stand-in (no AddIdleWatch)")
        }
        usleep(200_000)
    }
    let pid = runner.processIdentifier
    let callsBefore = standInCalls()
    let before = contextSwitches(pid)
    usleep(useconds_t(seconds * 1_000_000))
    let switches = switchesBetween(before, contextSwitches(pid))
    return (Double(switches) / seconds * 60, standInCalls() - callsBefore)
}
