// gate: `chime gate stats` at 100,000 usage events; launch to gate drawn, and the gate's CPU
// while it counts down, under an Xvfb of its own.
import ArgumentParser
import ChimeCore
import ChimeGateway
import ChimeStore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

struct GateBench: Workload {
    static let configuration = CommandConfiguration(
        commandName: "gate",
        abstract: "`chime gate stats` at 100,000 events; launch to gate drawn; the gate's CPU while counting down."
    )

    @OptionGroup var options: BenchOptions

    static func measure(_ options: BenchOptions) async throws {
        try benchGateStats(events: options.quick ? 10_000 : 100_000, runs: options.quick ? 3 : 11)
        try benchGateWindow(runs: options.quick ? 3 : 9, cpuSeconds: options.quick ? 2 : 5)
    }
}

/// `chime gate stats --json` on a store of `events` usage events over 90 days, against the same
/// command on an empty store (start-up and the store's open) in the same run.
func benchGateStats(events count: Int, runs: Int) throws {
    print("\n## `chime gate stats --json` at \(count) usage events (wall ms, median of \(runs))")
    let directory = temporaryDirectory("gate-stats")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let full = directory + "/full.sqlite"
    let empty = directory + "/empty.sqlite"
    let now = Date()
    let book = GateBook(store: try ReminderStore(path: full, schemas: chimeSchemas), clock: SystemWallClock())
    _ = try ReminderStore(path: empty, schemas: chimeSchemas)
    var generator = SeededGenerator(seed: 7)
    let outcomes: [GateEvent.Outcome] = [.exit, .exit, .proceed, .deepen, .closed, .notGated(reason: "grace after Proceed")]
    let events = (0..<count).map { index in
        GateEvent(
            programID: ["firefox-esr.desktop", "code.desktop", "org.telegram.desktop.desktop"][index % 3],
            at: now.addingTimeInterval(-Double.random(in: 0..<(90 * 86_400), using: &generator)),
            pauseSeconds: Double.random(in: 5..<60, using: &generator),
            outcome: outcomes.randomElement(using: &generator)!,
            quote: Quote(text: "Quote \(index % 130)", author: "Seneca", source: "Letters", interest: .stoicism)
        )
    }
    // Recorded as they happen: in time order.
    try book.record(events.sorted { $0.at < $1.at })
    let environment = ProcessInfo.processInfo.environment
    let stats = try (0..<runs).map { _ in
        try timeSpawn(chimeExecutable, ["gate", "stats", "--json", "--store", full], environment: environment)
    }
    let baseline = try (0..<runs).map { _ in
        try timeSpawn(chimeExecutable, ["gate", "stats", "--json", "--store", empty], environment: environment)
    }
    let widths = [48, 10]
    print(row(["what", "ms"], widths: widths))
    print(row(["chime gate stats --json, \(count) events", fmt(median(stats), 2)], widths: widths))
    print(row(["baseline: the same on an empty store", fmt(median(baseline), 2)], widths: widths))
    print("(target: under 100 ms at 100,000 events)")
}

/// `chime gate open ID --window -- /bin/true` on an Xvfb of its own: from chime's start to the
/// gate's first frame (chime says when, with CHIME_LOG_LEVEL=debug), against the window alone
/// (`chime-gate-window --exit-after-first-frame`, GTK's cold start) in the same run; then the
/// CPU of chime and of its window over `cpuSeconds` of countdown.
func benchGateWindow(runs: Int, cpuSeconds: Double) throws {
    print("\n## Launch to gate drawn, and the gate's CPU while counting down (Xvfb; median of \(runs))")
    let window = (chimeExecutable as NSString).deletingLastPathComponent + "/chime-gate-window"
    guard FileManager.default.isExecutableFile(atPath: "/usr/bin/Xvfb"), FileManager.default.isExecutableFile(atPath: window) else {
        print("(no Xvfb, or no chime-gate-window beside chime: skipped)")
        return
    }
    let directory = temporaryDirectory("gate-window")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let xvfb = Process()
    xvfb.executableURL = URL(fileURLWithPath: "/usr/bin/Xvfb")
    xvfb.arguments = ["-displayfd", "1", "-nolisten", "tcp", "-screen", "0", "1280x800x24"]
    let number = Pipe()
    xvfb.standardOutput = number
    xvfb.standardError = FileHandle.nullDevice
    try xvfb.run()
    defer {
        // SIGKILL: a child of Foundation's Process keeps the spawning thread's blocked signals,
        // SIGTERM among them.
        kill(xvfb.processIdentifier, SIGKILL)
        xvfb.waitUntilExit()
    }
    let line = String(decoding: number.fileHandleForReading.availableData, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    guard let display = Int(line) else {
        print("(Xvfb gave no display number: skipped)")
        return
    }
    var environment: [String: String] = [
        "PATH": "/usr/bin:/bin", "HOME": directory, "XDG_CONFIG_HOME": directory + "/config", "XDG_DATA_HOME": directory + "/data",
        "XDG_CACHE_HOME": directory + "/cache", "XDG_RUNTIME_DIR": directory, "XDG_DATA_DIRS": "/usr/share",
        "DISPLAY": ":\(display)", "GTK_A11Y": "none", "GSETTINGS_BACKEND": "memory", "LANG": "C.UTF-8",
        "CHIME_STORE": directory + "/chime.sqlite", "CHIME_LOG_LEVEL": "debug",
    ]
    _ = try runMeasured(chimeExecutable, ["gate", "setup", "--grace", "0s", "--pause", "120s"], environment: environment)

    /// Starts `chime gate open`; returns it once it says the gate is drawn, with the ms it took.
    func openGate() throws -> (Process, Double?) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: chimeExecutable)
        process.arguments = ["gate", "open", "bench.desktop", "--window", "--", "/bin/true"]
        process.environment = environment
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        var text = ""
        let deadline = Date().addingTimeInterval(30)
        while !text.contains(" ms after chime started"), Date() < deadline {
            let chunk = errors.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        let ms = text.split(separator: "\n").first { $0.contains("gate drawn") }
            .flatMap { Double($0.split(separator: " ").dropFirst(3).first ?? "") }
        return (process, ms)
    }

    var drawn: [Double] = []
    for _ in 0..<runs {
        let (process, ms) = try openGate()
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        if let ms { drawn.append(ms) }
    }
    environment["CHIME_LOG_LEVEL"] = nil
    let alone = try (0..<runs).compactMap { _ -> Double? in
        let output = try runCapturing(window, ["--exit-after-first-frame"], environment: environment)
        return output.split(separator: " ").first { $0.hasPrefix("since-process-start-ms=") }
            .flatMap { Double($0.dropFirst("since-process-start-ms=".count).prefix { $0 != "\n" }) }
    }
    let widths = [56, 10]
    print(row(["what", "ms"], widths: widths))
    print(row(["chime gate open → first frame (from chime's start)", drawn.isEmpty ? "—" : fmt(median(drawn), 0)], widths: widths))
    print(row(["baseline: chime-gate-window alone → first frame", alone.isEmpty ? "—" : fmt(median(alone), 0)], widths: widths))
    print("(target: under 150 ms; resolution 10 ms, a clock tick)")

    // The CPU of a gate counting down: chime (the state machine, 10 ticks a second) and its window.
    environment["CHIME_LOG_LEVEL"] = "debug"
    let (process, _) = try openGate()
    defer {
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }
    let pid = String(process.processIdentifier)
    let child = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8))?
        .split(separator: " ").first.map(String.init)
    let before = (ProcessStat.cpuSeconds(pid) ?? 0, child.flatMap { ProcessStat.cpuSeconds($0) } ?? 0)
    usleep(UInt32(cpuSeconds * 1_000_000))
    let after = (ProcessStat.cpuSeconds(pid) ?? 0, child.flatMap { ProcessStat.cpuSeconds($0) } ?? 0)
    print(row(["what", "% of a core"], widths: widths))
    print(row(["chime gate open (state machine, 10 ticks/s)", fmt((after.0 - before.0) / cpuSeconds * 100, 2)], widths: widths))
    print(row(["chime-gate-window (GTK, 10 draws/s)", fmt((after.1 - before.1) / cpuSeconds * 100, 2)], widths: widths))
    print("(over \(fmt(cpuSeconds, 0)) s of countdown; resolution 10 ms of CPU)")
}

/// Runs `executable` to the end; its standard output.
func runCapturing(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.environment = environment
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self)
}
