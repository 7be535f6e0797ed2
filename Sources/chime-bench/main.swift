// chime-bench: Chime's figures, printed as tables of medians over several runs, each with a baseline measured in the
// same run. Build in release: `swift run -c release chime-bench [all|schedule|cancel|lateness|crash|idle|cli|desktop|focus|doses] [--quick]`.
// One file per workload: W1 Schedule.swift, W2 Cancel.swift, W3 Lateness.swift, W4 Crash.swift, W5 Idle.swift; CLI.swift;
// Desktop.swift; Focus.swift; Doses.swift. What they share: Support.swift.
import Foundation

// MARK: - Main

let arguments = Array(CommandLine.arguments.dropFirst())
let what = arguments.first ?? "all"
let quick = arguments.contains("--quick")
let runs = quick ? 1 : 3
print("chime-bench (\(what)); runs per figure: \(runs); chime: \(chimeExecutable)")
do {
    if what == "all" || what == "schedule" { try benchSchedule(runs: runs, count: 100_000) }
    if what == "all" || what == "cancel" { try benchCancel(runs: runs, scheduled: 100_000, cancelled: 50_000) }
    if what == "all" || what == "lateness" {
        try await benchLateness(runs: runs, count: 2_000, spread: 10, others: 100_000)
    }
    if what == "all" || what == "crash" { try await benchCrash(runs: runs, count: 1_000) }
    if what == "all" || what == "idle" { try benchIdle(seconds: quick ? 5 : 30, sizes: [100_000, 1_000_000]) }
    if what == "all" || what == "cli" { try benchCLI(runs: quick ? 5 : 21) }
    if what == "all" || what == "desktop" { try await benchDesktop(posts: 1_000, spawns: 200) }
    if what == "all" || what == "focus" { try benchFocus(runs: quick ? 3 : 5, sizes: quick ? [5_000] : [5_000, 100_000]) }
    if what == "all" || what == "doses" { try benchDoses(runs: quick ? 3 : 5, medications: 20, years: quick ? 1 : 5) }
} catch {
    FileHandle.standardError.write(Data("chime-bench: \(error)\n".utf8))
    exit(1)
}
