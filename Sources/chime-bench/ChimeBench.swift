// chime-bench: Chime's figures, printed as tables of medians over several runs, each with a baseline measured in the
// same run. Build in release as installed: `scripts/release-build`, then
// `.build/release/chime-bench [all|schedule|cancel|lateness|crash|idle|cli|desktop|focus|doses|gate|import|dbus|focus-idle] [--quick]`.
// One file per workload: W1 Schedule.swift, W2 Cancel.swift, W3 Lateness.swift, W4 Crash.swift, W5 Idle.swift; CLI.swift;
// Desktop.swift; Focus.swift; FocusIdle.swift; Doses.swift; ImportBounds.swift; DBus.swift; `postgres` (the scale benchmark, not in `all`): Postgres*.swift. What they
// share: Support.swift.
import ArgumentParser
import Foundation

#if canImport(Glibc)
import Glibc
#endif

@main
struct ChimeBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chime-bench",
        abstract: "Chime's figures: tables of medians over several runs, each with a baseline measured in the same run.",
        discussion: """
            Build in release as installed (scripts/release-build); chime is looked for beside \
            chime-bench, or at $CHIME_EXECUTABLE.
            Examples:
              chime-bench                  (all of them)
              chime-bench lateness --quick
            """,
        subcommands: [All.self, ChildPeak.self, PostgresBench.self, FiringPath.self, LatenessStages.self] + workloads,
        defaultSubcommand: All.self
    )

    /// The workloads, in the order `all` runs them.
    static let workloads: [any Workload.Type] = [
        Schedule.self, Cancel.self, Lateness.self, Crash.self, Idle.self, CLI.self, Desktop.self, Focus.self, Doses.self,
        GateBench.self, ImportBounds.self, DBusBench.self, AppBench.self, FocusIdleBench.self,
    ]
}

/// The options every workload takes.
struct BenchOptions: ParsableArguments {
    @Flag(help: "Fewer runs and smaller sizes: a quick look, not figures to quote.")
    var quick = false

    /// Runs per figure, where a workload does not choose its own.
    var runs: Int { quick ? 1 : 3 }

    /// The line that opens the output.
    func printHeader(_ what: String) {
        print("chime-bench (\(what)); runs per figure: \(runs); chime: \(chimeExecutable)")
    }
}

/// One part of the figures: a subcommand of its own, and a step of `chime-bench all`.
protocol Workload: AsyncParsableCommand {
    var options: BenchOptions { get }

    /// Measures and prints this workload's tables.
    static func measure(_ options: BenchOptions) async throws
}

extension Workload {
    mutating func run() async throws {
        options.printHeader(Self._commandName)
        try await Self.measure(options)
    }
}

struct All: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Every workload below, in turn.")

    @OptionGroup var options: BenchOptions

    mutating func run() async throws {
        options.printHeader("all")
        for workload in ChimeBench.workloads { try await workload.measure(options) }
    }
}

/// Runs a command and prints its wall seconds, exit status, peak RSS (kB) and this process's
/// own peak RSS (kB) when it started it: see `runMeasuredAlone`.
struct ChildPeak: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "child-peak",
        abstract: "Run a command; print its wall seconds, status, peak RSS kB and this helper's own.",
        shouldDisplay: false
    )

    @Argument(parsing: .captureForPassthrough) var command: [String]

    func run() throws {
        guard let executable = command.first else { throw ValidationError("name a command to run") }
        let floor = procStatus(getpid(), "VmHWM") ?? -1
        let run = try runMeasured(executable, Array(command.dropFirst()))
        print(fmt(run.seconds, 6), run.status, run.maxRSSkB, floor)
    }
}
