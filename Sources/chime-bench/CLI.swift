// cli: start-up. `chime in 5m x` end to end with the runner up next to `at now + 5 minutes`, and
// `chime --version` and `chime list` (10 pending) next to a static Foundation hello-world the
// benchmark builds itself, each pair run alternately so that load on the machine falls on both.
import ArgumentParser
import ChimeCore
import ChimeStore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

struct CLI: Workload {
    static let configuration = CommandConfiguration(
        abstract: "Start-up: chime in 5m x (runner up) vs at; chime --version and chime list vs a Foundation hello-world."
    )

    @OptionGroup var options: BenchOptions

    static func measure(_ options: BenchOptions) async throws {
        try benchCLI(runs: options.quick ? 5 : 21)
    }
}

/// The baseline program: what any Swift program that uses Foundation pays to start, built as
/// Chime's release build is (static Swift libraries, -O). It reads a time zone, as Chime does.
private let helloWorldSource = """
    import Foundation
    let zone = TimeZone(identifier: "Europe/Berlin")
    print(zone?.identifier ?? "no zone")
    """

/// Compiles the hello-world into `directory`; returns its path, or nil (with why) when swiftc
/// cannot be found or fails.
private func buildHelloWorld(in directory: String) -> (path: String?, why: String) {
    let source = directory + "/hello.swift"
    let binary = directory + "/hello"
    guard (try? helloWorldSource.write(toFile: source, atomically: true, encoding: .utf8)) != nil else {
        return (nil, "cannot write \(source)")
    }
    // swiftc beside the swift that is on PATH (the toolchain that built Chime).
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    guard
        let swiftc = path.split(separator: ":").map({ $0 + "/swiftc" }).first(where: {
            FileManager.default.isExecutableFile(atPath: $0)
        })
    else { return (nil, "swiftc is not on PATH") }
    // The baseline must do the work it stands for: linked by gold (swiftc's default linker
    // here), the static hello-world's TimeZone(identifier: "Europe/Berlin") returned nil
    // (Swift 6.3.1: the ICU-backed time zones of FoundationInternationalization were left out,
    // a 20 MB binary), so it started faster than any program that reads a zone. Linked by lld
    // it finds the zone (a 70 MB binary, like Chime's ICU data). Each linker is tried in turn
    // and the first binary that prints the zone is the baseline.
    for linker in [[], ["-use-ld=lld"]] {
        let compile = try? runMeasured(
            swiftc,
            ["-O", "-static-stdlib", source, "-o", binary, "-module-cache-path", directory + "/module-cache"] + linker
        )
        guard let compile, compile.status == 0 else { continue }
        if output(of: binary) == "Europe/Berlin\n" { return (binary, "") }
    }
    return (nil, "\(swiftc) built no hello-world that reads the zone Europe/Berlin")
}

/// What `binary` prints on its standard output (nil when it cannot be run).
private func output(of binary: String) -> String? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: binary)
    let pipe = Pipe()
    process.standardOutput = pipe
    guard (try? process.run()) != nil else { return nil }
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self)
}

func benchCLI(runs: Int) throws {
    let directory = temporaryDirectory("cli")
    defer { try? FileManager.default.removeItem(atPath: directory) }
    // Every process here gets this directory as its home, config, data and runtime directory:
    // no config file, store or runner of whoever runs the benchmark counts.
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
    let runtime = environment["XDG_RUNTIME_DIR"]!

    // The store `chime in` writes to, with a runner up (the socket poke included).
    let storePath = directory + "/chime.sqlite"
    _ = try ReminderStore(path: storePath, schemas: chimeSchemas)
    let runner = try startRunner(store: storePath, runtime: runtime, base: environment)
    defer { stop(runner) }
    // The store `chime list` reads: 10 pending reminders.
    let listStore = directory + "/list.sqlite"
    try populate(try ReminderStore(path: listStore, schemas: chimeSchemas), count: 10)

    let hello = buildHelloWorld(in: directory)
    let hasAt = FileManager.default.isExecutableFile(atPath: "/usr/bin/at")

    func time(_ executable: String, _ arguments: [String]) throws -> Double {
        let run = try runMeasured(executable, arguments, environment: environment)
        guard run.status == 0 else {
            throw ChimeError(.failure, "\(executable) \(arguments.joined(separator: " ")) exited with status \(run.status)")
        }
        return run.seconds * 1000
    }
    var chimeIn: [Double] = []
    var at: [Double] = []
    var shell: [Double] = []
    var version: [Double] = []
    var list: [Double] = []
    var helloTimes: [Double] = []
    var trueTimes: [Double] = []
    // One warm-up round (page cache, the runner's first wake), then `runs` rounds; in each round
    // every command once, in the same order, so that a slow moment of the machine falls on a
    // command and its baseline alike.
    for round in 0...runs {
        let chimeInMs = try time(chimeExecutable, ["in", "5m", "x", "--store", storePath])
        // In at's queue "z", emptied afterwards: the jobs are only for timing.
        let atMs = hasAt ? try time("/bin/sh", ["-c", "echo true | at -q z now + 5 minutes 2>/dev/null"]) : .nan
        let shellMs = try time("/bin/sh", ["-c", "echo true > /dev/null"])
        let versionMs = try time(chimeExecutable, ["--version"])
        let helloMs = try hello.path.map { try time($0, []) } ?? .nan
        let listMs = try time(chimeExecutable, ["list", "--store", listStore])
        let trueMs = try time("/bin/true", [])
        guard round > 0 else { continue }
        chimeIn.append(chimeInMs)
        at.append(atMs)
        shell.append(shellMs)
        version.append(versionMs)
        helloTimes.append(helloMs)
        list.append(listMs)
        trueTimes.append(trueMs)
    }
    if hasAt { _ = try? time("/bin/sh", ["-c", "atq -q z | cut -f1 | xargs -r atrm"]) }

    print("\n## Start-up: whole processes, wall ms, median of \(runs) alternating rounds")
    let widths = [44, 10, 44]
    print(row(["what", "ms", "target"], widths: widths))
    let helloMedian = median(helloTimes)
    let atMedian = median(at)
    func verdict(_ value: Double, _ limit: Double, _ text: String) -> String {
        limit.isNaN ? text + ": no baseline" : text + (value <= limit ? ": met" : ": OVER (\(fmt(value / limit * 100, 0))%)")
    }
    print(
        row(
            ["chime in 5m x (runner up)", fmt(median(chimeIn), 2), verdict(median(chimeIn), atMedian, "<= at now + 5 minutes")],
            widths: widths
        )
    )
    if hasAt {
        print(row(["baseline: echo true | at now + 5 minutes", fmt(atMedian, 2), ""], widths: widths))
        print(row(["  of which the shell alone (sh -c echo)", fmt(median(shell), 2), ""], widths: widths))
    } else {
        print("(at is not installed (apt install at): no `at now + 5 minutes` baseline)")
    }
    print(
        row(["chime --version", fmt(median(version), 2), verdict(median(version), 2 * helloMedian, "<= 2 × hello-world")], widths: widths)
    )
    print(
        row(
            ["chime list (10 pending)", fmt(median(list), 2), verdict(median(list), 2 * helloMedian, "<= 2 × hello-world")],
            widths: widths
        )
    )
    if hello.path != nil {
        print(row(["baseline: static Foundation hello-world", fmt(helloMedian, 2), "(reads Europe/Berlin, prints it)"], widths: widths))
    } else {
        print("(no hello-world baseline: \(hello.why))")
    }
    print(row(["baseline: spawn /bin/true", fmt(median(trueTimes), 2), ""], widths: widths))

    print("\n## Sizes (bytes)")
    let sizeWidths = [44, 14]
    for (name, path) in [("chime", chimeExecutable), ("hello-world", hello.path)] {
        guard let path, let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { continue }
        let bytes = (attributes[.size] as? NSNumber)?.intValue ?? 0
        print(row([name + " (" + path + ")", String(bytes)], widths: sizeWidths))
        // What a package installs: the same binary without its debug sections (package-deb strips).
        let stripped = directory + "/" + name + ".stripped"
        if (try? runMeasured("/usr/bin/strip", ["-o", stripped, path]))?.status == 0,
            let size = (try? FileManager.default.attributesOfItem(atPath: stripped))?[.size] as? NSNumber
        {
            print(row(["  stripped (as installed)", String(size.intValue)], widths: sizeWidths))
        }
    }
}
