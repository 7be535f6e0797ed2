// app: `chime app` to its first frame drawn (the runner up), the open window's wake-ups and RSS
// while idle, and the package's Installed-Size, under an Xvfb and a session bus of its own.
import ArgumentParser
import ChimeCore
import ChimeStore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

struct AppBench: Workload {
    static let configuration = CommandConfiguration(
        commandName: "app",
        abstract: "`chime app` to its first frame (runner up); the idle window's wake-ups and RSS; the package's Installed-Size."
    )

    @OptionGroup var options: BenchOptions

    static func measure(_ options: BenchOptions) async throws {
        try benchApp(runs: options.quick ? 3 : 9, idleSeconds: options.quick ? 3 : 10)
    }
}

/// The figures issue 36 asks for. Each start is a fresh `chime app` (chime execs the windows'
/// executable: the figure counts from chime's start), on a store of a few reminders, doses and
/// sessions, with `chime run` up on the same bus; against, in the same run, the gate's window
/// alone to its first frame (GTK's cold start without libadwaita and the store).
func benchApp(runs: Int, idleSeconds: Double) throws {
    print("\n## `chime app`: to the first frame, and the open window at rest (Xvfb, a bus of its own)")
    let window = (chimeExecutable as NSString).deletingLastPathComponent + "/chime-gate-window"
    for needed in ["/usr/bin/Xvfb", "/usr/bin/dbus-daemon", window] where !FileManager.default.isExecutableFile(atPath: needed) {
        print("(no \(needed): skipped)")
        return
    }
    let directory = temporaryDirectory("app")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    var environment: [String: String] = [
        "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "XDG_DATA_DIRS": "/usr/share", "GTK_A11Y": "none", "GSETTINGS_BACKEND": "memory",
    ]
    for (key, sub) in [
        ("HOME", "home"), ("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"), ("XDG_STATE_HOME", "state"),
        ("XDG_CACHE_HOME", "cache"), ("XDG_RUNTIME_DIR", "runtime"),
    ] {
        let path = directory + "/" + sub
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        chmod(path, 0o700)
        environment[key] = path
    }
    let store = directory + "/chime.sqlite"
    environment["CHIME_STORE"] = store

    let xvfb = try spawn(
        "/usr/bin/Xvfb",
        ["-displayfd", "1", "-nolisten", "tcp", "-screen", "0", "1280x800x24"],
        environment: environment,
        output: directory + "/display"
    )
    defer {
        kill(xvfb, SIGKILL)
        waitpid(xvfb, nil, 0)
    }
    let bus = try spawn(
        "/usr/bin/dbus-daemon",
        ["--session", "--nofork", "--nopidfile", "--print-address=1"],
        environment: environment,
        output: directory + "/bus.address"
    )
    defer {
        kill(bus, SIGKILL)
        waitpid(bus, nil, 0)
    }
    guard let display = firstLine(of: directory + "/display"), let address = firstLine(of: directory + "/bus.address") else {
        print("(Xvfb or dbus-daemon did not start: skipped)")
        return
    }
    environment["DISPLAY"] = ":" + display
    environment["DBUS_SESSION_BUS_ADDRESS"] = address

    // A store a person has after a week: reminders, a medication, finished sessions.
    for index in 0..<20 {
        _ = try runMeasured(chimeExecutable, ["in", "\(index + 1)h", "Reminder \(index)", "-q"], environment: environment)
    }
    _ = try runMeasured(
        chimeExecutable,
        ["med", "add", "Aspirin", "--amount", "100", "--unit", "mg", "--at", "08:00"],
        environment: environment
    )
    let runner = try startRunner(store: store, runtime: environment["XDG_RUNTIME_DIR"]!, base: environment)
    defer { stop(runner) }

    /// Starts `chime app PAGE`; returns its pid once it prints its first frame, with the ms
    /// since chime started (the app's own figure), or nil after 30 s.
    func openApp(_ page: String) throws -> (pid: pid_t, ms: Double?) {
        let output = directory + "/app-\(UUID().uuidString.prefix(8)).out"
        let pid = try spawn(chimeExecutable, ["app", page], environment: environment, output: output)
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("first-frame ") }) {
                let value = line.split(separator: " ").first { $0.hasPrefix("since-process-start-ms=") }
                return (pid, value.flatMap { Double($0.dropFirst("since-process-start-ms=".count)) })
            }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid { return (0, nil) }
            usleep(5_000)
        }
        return (pid, nil)
    }
    func close(_ pid: pid_t) {
        guard pid > 0 else { return }
        kill(pid, SIGKILL)
        waitpid(pid, nil, 0)
    }

    var firstFrames: [Double] = []
    for _ in 0..<runs {
        let (pid, ms) = try openApp("today")
        close(pid)
        if let ms { firstFrames.append(ms) }
    }
    let alone = try (0..<runs).compactMap { _ -> Double? in
        let output = try runCapturing(window, ["--exit-after-first-frame"], environment: environment)
        return output.split(separator: " ").first { $0.hasPrefix("since-process-start-ms=") }
            .flatMap { Double($0.dropFirst("since-process-start-ms=".count).prefix { $0 != "\n" }) }
    }
    let widths = [60, 12]
    print(row(["what", "ms"], widths: widths))
    print(
        row(
            ["chime app → first frame (from chime's start, runner up)", firstFrames.isEmpty ? "—" : fmt(median(firstFrames), 0)],
            widths: widths
        )
    )
    print(row(["baseline: the gate's window alone → first frame", alone.isEmpty ? "—" : fmt(median(alone), 0)], widths: widths))
    print("(target: under 300 ms; medians of \(runs); resolution 10 ms, a clock tick)")

    // At rest: each page shown, then `idleSeconds` of nothing; the process's context switches
    // (all its threads) and its RSS. On Focus with a session running, the countdown's ticks.
    print(row(["open window at rest, \(fmt(idleSeconds, 0)) s", "wake-ups"], widths: widths) + "  RSS MB")
    for (label, page, session) in [
        ("Today", "today", false), ("Doses", "doses", false), ("Focus, no session", "focus", false),
        ("Focus, a session ticking (1/s expected)", "focus", true),
    ] {
        if session { _ = try runMeasured(chimeExecutable, ["focus", "start"], environment: environment) }
        let (pid, ms) = try openApp(page)
        defer { close(pid) }
        guard pid > 0, ms != nil else {
            print(row([label, "—"], widths: widths))
            continue
        }
        usleep(2_000_000)  // settle: fonts, the accessibility of nothing, the first refresh
        let before = contextSwitches(pid)
        usleep(UInt32(idleSeconds * 1_000_000))
        let woke = switchesBetween(before, contextSwitches(pid))
        let rss = Double(procStatus(pid, "VmRSS") ?? 0) / 1024
        print(row([label, String(woke)], widths: widths) + "  " + fmt(rss, 1))
        if session { _ = try runMeasured(chimeExecutable, ["focus", "give-up", "--yes"], environment: environment) }
    }
    print("(target: 0 wake-ups at rest but for the focus countdown on screen)")

    // The package: Installed-Size of the newest dist/*.deb, if one was built.
    let dist = URL(fileURLWithPath: chimeExecutable).deletingLastPathComponent().appendingPathComponent("../../../dist").standardized
    let debs = ((try? FileManager.default.contentsOfDirectory(atPath: dist.path)) ?? []).filter { $0.hasSuffix(".deb") }.sorted()
    if let deb = debs.last {
        let size = try runCapturing("/usr/bin/dpkg-deb", ["-f", dist.path + "/" + deb, "Installed-Size"], environment: environment)
        print("package \(deb): Installed-Size \(size.trimmingCharacters(in: .whitespacesAndNewlines)) KiB (before the app: 130.8 MB)")
    } else {
        print("(no dist/*.deb: scripts/package-deb builds one, then this prints its Installed-Size)")
    }
}

/// The first line of the file at `path`, waiting up to 10 s for it.
private func firstLine(of path: String) -> String? {
    for _ in 0..<1000 {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        if let end = text.firstIndex(of: "\n") { return String(text[..<end]) }
        usleep(10_000)
    }
    return nil
}
