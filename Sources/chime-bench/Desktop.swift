// desktop: LibnotifyNotifier.post against a real notification server, next to spawning notify-send;
// the runner with the desktop backend.
import ArgumentParser
import ChimeCore
import ChimeLibnotify
import Foundation

#if canImport(Glibc)
import Glibc
#endif

struct Desktop: Workload {
    static let configuration = CommandConfiguration(
        abstract: "Desktop posts to a real notification server (notify-send); the runner with the desktop backend."
    )

    @OptionGroup var options: BenchOptions

    static func measure(_ options: BenchOptions) async throws {
        try await benchDesktop(posts: 1_000, spawns: 200)
    }
}

func benchDesktop(posts: Int, spawns: Int) async throws {
    print("\n## Desktop: LibnotifyNotifier.post against the notification server on the session bus (ms)")
    var environment = ProcessInfo.processInfo.environment
    var serverDirectory: String?
    if (environment["DBUS_SESSION_BUS_ADDRESS"] ?? "").isEmpty {
        // No desktop here: start the project's private one (scripts/notification-server), stopped at the end.
        let directory = temporaryDirectory("desktop")
        guard try timeSpawn("/bin/bash", ["scripts/notification-server", "start", directory], environment: environment) > 0,
            let env = try? String(contentsOfFile: directory + "/env", encoding: .utf8)
        else {
            print("(no session bus, and scripts/notification-server could not start one: skipped)")
            return
        }
        for line in env.split(separator: "\n") {
            let assignment = line.replacingOccurrences(of: "export ", with: "")
            if let equals = assignment.firstIndex(of: "=") {
                environment[String(assignment[..<equals])] = String(assignment[assignment.index(after: equals)...])
                setenv(String(assignment[..<equals]), String(assignment[assignment.index(after: equals)...]), 1)
            }
        }
        serverDirectory = directory
    }
    defer {
        if let serverDirectory {
            _ = try? timeSpawn("/bin/bash", ["scripts/notification-server", "stop", serverDirectory], environment: environment)
        }
    }
    let notifier: LibnotifyNotifier
    switch await LibnotifyNotifier.connect() {
    case .success(let connected): notifier = connected
    case .failure(let status):
        print("(\(status.problem ?? "no desktop"): skipped)")
        return
    }
    print("server: \([notifier.status.serverName, notifier.status.serverVersion].compactMap { $0 }.joined(separator: " "))")
    var latencies: [Double] = []
    for index in 0..<posts {
        // 20 ids in turn: most posts update a shown alert in place, as a runner's would.
        let note = Note(id: "bench-\(index % 20)", title: "Bench \(index)", body: "Latency", postedAt: Date())
        let start = monotonicSeconds()
        _ = try await notifier.post(note)
        latencies.append((monotonicSeconds() - start) * 1000)
    }
    let notifySend = try (0..<spawns).map { index in
        try timeSpawn("/usr/bin/notify-send", ["Bench \(index)", "Latency"], environment: environment)
    }
    let widths = [44, 8, 8]
    print(row(["what", "p50", "p99"], widths: widths))
    print(
        row(
            ["chime: post (owner check + Notify), \(posts)×", fmt(percentile(latencies, 50)), fmt(percentile(latencies, 99))],
            widths: widths
        )
    )
    print(
        row(["baseline: spawn notify-send, \(spawns)×", fmt(percentile(notifySend, 50)), fmt(percentile(notifySend, 99))], widths: widths)
    )

    // The runner with the desktop backend: RSS and idle wake-ups.
    let directory = temporaryDirectory("desktop-runner")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    var runnerEnvironment = environment
    runnerEnvironment["XDG_RUNTIME_DIR"] = directory
    let process = try launchRunner(store: directory + "/chime.sqlite", notifier: "desktop", environment: runnerEnvironment)
    usleep(1_500_000)
    let pid = process.processIdentifier
    let before = contextSwitches(pid)
    usleep(10_000_000)
    let switches = switchesBetween(before, contextSwitches(pid))
    print("runner with the desktop backend: RSS \(procStatus(pid, "VmRSS") ?? -1) kB, context switches over 10 s idle: \(switches)")
    stop(process)
}
