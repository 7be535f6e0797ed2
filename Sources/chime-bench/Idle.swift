// W5: an idle runner with many reminders pending: context switches, CPU and RSS.
import ArgumentParser
import ChimeStore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

struct Idle: Workload {
    static let configuration = CommandConfiguration(
        abstract: "W5: an idle runner with 100,000 and 1,000,000 pending: context switches, CPU, RSS."
    )

    @OptionGroup var options: BenchOptions

    static func measure(_ options: BenchOptions) async throws {
        try benchIdle(seconds: options.quick ? 5 : 30, sizes: [100_000, 1_000_000])
    }
}

func benchIdle(seconds: Double, sizes: [Int]) throws {
    print("\n## Idle runner: context switches (all threads, voluntary + involuntary) and CPU over \(Int(seconds)) s; RSS")
    let widths = [12, 18, 10, 10, 10]
    print(row(["pending", "ctx switches", "CPU s", "RSS kB", "HWM kB"], widths: widths))
    for (index, size) in sizes.enumerated() {
        let directory = temporaryDirectory("idle")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let storePath = directory + "/chime.sqlite"
        try populate(try ReminderStore(path: storePath, schemas: chimeSchemas), count: size)
        let runner = try startRunner(store: storePath, runtime: directory)
        let pid = runner.processIdentifier
        // Only the first size is watched for the whole span; the others are measured for RSS.
        let span = index == 0 ? seconds : 2
        let switchesBefore = contextSwitches(pid)
        let cpuBefore = cpuSeconds(pid)
        usleep(useconds_t(span * 1_000_000))
        let switches = switchesBetween(switchesBefore, contextSwitches(pid))
        let cpu = cpuSeconds(pid) - cpuBefore
        let rss = procStatus(pid, "VmRSS") ?? -1
        let hwm = procStatus(pid, "VmHWM") ?? -1
        stop(runner)
        print(
            row(
                ["\(size)", index == 0 ? "\(switches)" : "\(switches) (in \(Int(span)) s)", fmt(cpu, 2), "\(rss)", "\(hwm)"],
                widths: widths
            )
        )
    }
}
