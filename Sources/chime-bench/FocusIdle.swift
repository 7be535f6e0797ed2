// focus-idle: the runner's wake-ups over a whole focus cycle (a session's last seconds, its end,
// its break, the break's end and, with auto_start_sessions, the next session's first seconds),
// counted between the due instants apart from those at them, with an idle source on a private
// session bus: a stand-in of GNOME's org.gnome.Mutter.IdleMonitor (watches and signals), one of
// org.freedesktop.ScreenSaver (GetSessionIdleTime, polled), and, as the baseline in the same run,
// no idle source (`[focus] idle_pause = "off"`). The goal: 0 between due instants.
import ArgumentParser
import ChimeCore
import Foundation
import GRDB
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

struct FocusIdleBench: Workload {
    static let configuration = CommandConfiguration(
        commandName: "focus-idle",
        abstract:
            "The runner's wake-ups over a focus cycle (session, break, next session), between and at the due instants, per idle source."
    )

    @OptionGroup var options: BenchOptions

    static func measure(_ options: BenchOptions) async throws {
        try benchFocusIdle(lead: options.quick ? 10 : 20, tail: options.quick ? 10 : 20, runs: options.quick ? 1 : 5)
    }
}

/// The idle sources compared, each the stand-in (Tests/ChimeCLITests/Fixtures/idle-service.py)
/// of one interface, or none.
private enum IdleCase: String, CaseIterable, Sendable {
    case none, mutter, screensaver

    var label: String {
        switch self {
        case .none: "baseline: no idle source (idle_pause = \"off\")"
        case .mutter: "GNOME Mutter IdleMonitor (stand-in)"
        case .screensaver: "org.freedesktop.ScreenSaver (stand-in, polled)"
        }
    }
}

/// One cycle's counts: the runner's context switches and the stand-in's calls, between the due
/// instants (and the seconds that makes) and within the windows around them.
private struct CycleCounts: Sendable {
    var betweenSeconds = 0.0
    var betweenSwitches = 0
    var betweenCalls = 0
    var atSwitches = 0
    var atCalls = 0
    var instants = 0
}

/// What the runs' threads write to.
private final class Shared<Value: Sendable>: Sendable {
    let value: Mutex<Value>
    init(_ initial: Value) { value = Mutex(initial) }
}

/// A due instant's window: from half a second before (the ledger's record 25 ms ahead) to three
/// seconds after (the settle, the posts, the idle watch taken or given back, the log folded).
private let windowBefore = 0.5
private let windowAfter = 3.0
/// The break, `[focus] short_break`'s shortest.
private let breakSeconds = 60.0

func benchFocusIdle(lead: Double, tail: Double, runs: Int) throws {
    let total = lead + breakSeconds + tail
    print(
        "\n## Focus cycle with an idle source: the runner's wake-ups between and at the due instants, median of \(runs) runs"
    )
    print(
        "(a 10-minute session's last \(Int(lead)) s, its end, a \(Int(breakSeconds)) s break, the break's end and the next session's first "
            + "\(Int(tail)) s (auto_start_sessions); context switches of all the runner's threads, voluntary + involuntary, as the other "
            + "benches count; at an instant: \(windowBefore) s before to \(Int(windowAfter)) s after; notifier json (no live alert); goal: 0 between)"
    )
    let python = "/usr/bin/python3"  // Debian's, where python3-gi is installed
    let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Tests/ChimeCLITests/Fixtures/idle-service.py").standardized.path
    for needed in ["/usr/bin/dbus-daemon", python] where !FileManager.default.isExecutableFile(atPath: needed) {
        print("(no \(needed): skipped)")
        return
    }
    guard FileManager.default.fileExists(atPath: fixture) else {
        print("(no \(fixture): run chime-bench from the source tree it was built in; skipped)")
        return
    }
    // Every run of every case at once, each on its own bus and store: the cycle takes as long
    // whatever the runs (the runners sleep side by side).
    let results = Shared<[IdleCase: [CycleCounts]]>([:])
    let failures = Shared<[String]>([])
    let group = DispatchGroup()
    for index in 0..<runs {
        for idleCase in IdleCase.allCases {
            group.enter()
            let thread = Thread {
                do {
                    let counts = try measureFocusCycle(idleCase, lead: lead, tail: tail, python: python, fixture: fixture)
                    results.value.withLock { $0[idleCase, default: []].append(counts) }
                } catch {
                    failures.value.withLock { $0.append("\(idleCase.rawValue) run \(index + 1): \(error)") }
                }
                group.leave()
            }
            thread.start()
            usleep(300_000)  // staggered, so that their due instants are not all the same
        }
    }
    group.wait()
    for failure in failures.value.withLock({ $0 }) { print("failed: \(failure)") }
    let widths = [50, 14, 14, 16, 18]
    print(row(["runner", "wakes/min btw", "wakes/instant", "calls/min btw", "calls/instant"], widths: widths))
    let figures = results.value.withLock { $0 }
    for idleCase in IdleCase.allCases {
        let counts = figures[idleCase] ?? []
        guard !counts.isEmpty else {
            print(row([idleCase.label, "—"], widths: widths))
            continue
        }
        let perInstant = { (value: KeyPath<CycleCounts, Int>) in
            median(counts.map { Double($0[keyPath: value]) / Double(max(1, $0.instants)) })
        }
        let perMinute = { (value: KeyPath<CycleCounts, Int>) in median(counts.map { Double($0[keyPath: value]) / $0.betweenSeconds * 60 }) }
        print(
            row(
                [
                    idleCase.label, fmt(perMinute(\.betweenSwitches), 2), fmt(perInstant(\.atSwitches), 1),
                    idleCase == .none ? "-" : fmt(perMinute(\.betweenCalls), 2), idleCase == .none ? "-" : fmt(perInstant(\.atCalls), 1),
                ],
                widths: widths
            )
        )
    }
    print(
        "(btw: between the due instants, \(Int(total - 2 * (windowBefore + windowAfter))) s of the cycle's \(Int(total)); instants: the "
            + "session's end (its alert, the break's) and the break's end (its alert, the next session started); calls: the stand-in's "
            + "D-Bus calls from the runner)"
    )
}

/// One cycle: a private session bus (and the stand-in of `idleCase`), a runner on a fresh store
/// whose 10-minute session ends `lead` s after the runner is up, a 60 s break, the next session
/// started by itself; sampled every 100 ms until `tail` s into that session.
private func measureFocusCycle(_ idleCase: IdleCase, lead: Double, tail: Double, python: String, fixture: String) throws -> CycleCounts {
    let directory = temporaryDirectory("focus-idle")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    var environment = ProcessInfo.processInfo.environment
    for (key, sub) in [("HOME", "home"), ("XDG_CONFIG_HOME", "config"), ("XDG_DATA_HOME", "data"), ("XDG_RUNTIME_DIR", "runtime")] {
        let path = directory + "/" + sub
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        environment[key] = path
    }
    for key in ["CHIME_STORE", "CHIME_NOTIFIER", "CHIME_LOG_LEVEL", "NOTIFY_SOCKET", "XDG_SESSION_ID"] { environment[key] = nil }
    // No system bus (logind) to find: the session bus is the whole desktop here.
    environment["CHIME_SYSTEM_BUS_ADDRESS"] = "unix:path=\(directory)/no-system-bus"
    environment["CHIME_FOCUS_IDLE_PAUSE"] = idleCase == .none ? "off" : "10m"
    environment["CHIME_FOCUS_SHORT_BREAK"] = "1m"
    environment["CHIME_FOCUS_AUTO_START_SESSIONS"] = "true"
    environment["CHIME_FOCUS_WAIT_FOR_ACTIVITY"] = "false"
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
    func text(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
    var address = ""
    for _ in 0..<500 where address.isEmpty {
        usleep(10_000)
        address = text(addressFile).split(separator: "\n").first.map(String.init) ?? ""
    }
    guard !address.isEmpty else { throw ChimeError(.failure, "dbus-daemon gave no address") }
    environment["DBUS_SESSION_BUS_ADDRESS"] = address

    var standIn: pid_t?
    let standInLog = directory + "/stand-in.log"
    if idleCase != .none {
        let control = directory + "/control"
        guard mkfifo(control, 0o600) == 0 else { throw ChimeError(.failure, "cannot make the FIFO \(control)") }
        standIn = try spawn(python, [fixture, idleCase.rawValue, control], environment: environment, output: standInLog)
        for _ in 0..<1000 where !text(standInLog).contains("ready") { usleep(10_000) }
        guard text(standInLog).contains("ready") else { throw ChimeError(.failure, "the \(idleCase.rawValue) stand-in did not start") }
    }
    defer {
        if let standIn {
            kill(standIn, SIGKILL)
            waitpid(standIn, nil, 0)
        }
    }
    func standInCalls() -> Int { text(standInLog).components(separatedBy: "\ncall ").count - 1 }

    // The shortest session the CLI starts (10 min), then moved on so that it ends `lead` s from
    // now (the runner is not up yet: it reads the row as it starts).
    let storePath = directory + "/chime.sqlite"
    environment["CHIME_STORE"] = storePath
    _ = try chimeJSON(["focus", "start", "--minutes", "10", "--json"], environment: environment, scratch: directory)
    let sessionEnd = monotonicSeconds() + lead
    try rawConnection(storePath).write { db in
        try db.execute(
            sql: "UPDATE focus_session SET focus_us = length_s * 1000000 - ? - (? - segment_awake_us) WHERE state = 'active'",
            arguments: [Int64(lead * 1_000_000), Int64(monotonicSeconds() * 1_000_000)]
        )
    }
    let runner = try startRunner(store: storePath, runtime: environment["XDG_RUNTIME_DIR"]!, base: environment)
    defer { stop(runner) }
    if idleCase != .none {
        // Subscribed (Mutter: its watch added; ScreenSaver: its first poll) before the span begins.
        let first = idleCase == .mutter ? "AddIdleWatch" : "GetSessionIdleTime"
        for _ in 0..<500 where !text(standInLog).contains(first) { usleep(10_000) }
        guard text(standInLog).contains(first) else {
            throw ChimeError(.failure, "the runner did not call the \(idleCase.rawValue) stand-in (no \(first))")
        }
        usleep(200_000)
    }
    let instants = [sessionEnd, sessionEnd + breakSeconds]
    let end = sessionEnd + breakSeconds + tail
    guard monotonicSeconds() < sessionEnd - windowBefore else {
        throw ChimeError(.failure, "the runner took longer than \(lead) s to start: the session ended before the span")
    }
    let pid = runner.processIdentifier
    var counts = CycleCounts(instants: instants.count)
    var previous = (time: monotonicSeconds(), switches: contextSwitches(pid), calls: standInCalls())
    while previous.time < end {
        usleep(100_000)
        let now = (time: monotonicSeconds(), switches: contextSwitches(pid), calls: standInCalls())
        let switches = switchesBetween(previous.switches, now.switches)
        let calls = now.calls - previous.calls
        if instants.contains(where: { previous.time < $0 + windowAfter && now.time > $0 - windowBefore }) {
            counts.atSwitches += switches
            counts.atCalls += calls
        } else {
            counts.betweenSeconds += now.time - previous.time
            counts.betweenSwitches += switches
            counts.betweenCalls += calls
        }
        previous = now
    }
    // The cycle happened: the session completed, its break was taken, the next session runs.
    let (sessions, taken, active) = try rawConnection(storePath).read { db in
        (
            try Int.fetchOne(db, sql: "SELECT count(*) FROM focus_session WHERE state = 'completed'") ?? 0,
            try Int.fetchOne(db, sql: "SELECT count(*) FROM focus_break WHERE state = 'taken'") ?? 0,
            try Int.fetchOne(db, sql: "SELECT count(*) FROM focus_session WHERE state = 'active'") ?? 0
        )
    }
    guard sessions == 1, taken == 1, active == 1 else {
        throw ChimeError(
            .failure,
            "the cycle did not run: \(sessions) session(s) completed, \(taken) break(s) taken, \(active) session(s) active (1, 1, 1 expected)"
        )
    }
    return counts
}
