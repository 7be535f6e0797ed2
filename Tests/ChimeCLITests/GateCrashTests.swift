import ChimeGateway
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The gate's launcher overrides never lose a person's file, whatever stops a command: a real
/// `chime` killed with SIGKILL before each of its changes to a file or directory in turn (a debug
/// build's `CHIME_TEST_GATE_KILL_AT`), and commands run at once.
@Suite struct GateCrashTests {
    /// The person's own entry, private to their group.
    static let own = "[Desktop Entry]\nType=Application\nName=Mine\nExec=mine %U\n# mine\n"
    static let system = "[Desktop Entry]\nType=Application\nName=App\nExec=app %f\n"

    /// A machine in a sandbox: the person's own `mine.desktop` (mode 0640) and a system `app.desktop`.
    struct Machine: ~Copyable {
        let sandbox: Sandbox
        var dataHome: String { sandbox.environment["XDG_DATA_HOME"]! }
        var dataDirectory: String { sandbox.environment["XDG_DATA_DIRS"]! }
        var ownPath: String { dataHome + "/applications/mine.desktop" }
        var overrides: LauncherOverrides { get throws { try LauncherOverrides(environment: sandbox.environment) } }

        init() throws {
            let sandbox = try Sandbox()
            let environment = sandbox.environment
            let (dataHome, dataDirectory) = (environment["XDG_DATA_HOME"]!, environment["XDG_DATA_DIRS"]!)
            try FileManager.default.createDirectory(atPath: dataHome + "/applications", withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: dataDirectory + "/applications", withIntermediateDirectories: true)
            try Data(GateCrashTests.own.utf8).write(to: URL(fileURLWithPath: dataHome + "/applications/mine.desktop"))
            chmod(dataHome + "/applications/mine.desktop", 0o640)
            try Data(GateCrashTests.system.utf8).write(to: URL(fileURLWithPath: dataDirectory + "/applications/app.desktop"))
            self.sandbox = sandbox
        }

        /// Every file, link and directory under the data home and the data directory: kind,
        /// permissions, link count and bytes.
        func tree() throws -> [String: String] {
            var tree: [String: String] = [:]
            for root in [dataHome, dataDirectory] {
                for path in try FileManager.default.subpathsOfDirectory(atPath: root) {
                    let full = root + "/" + path
                    var info = stat()
                    guard lstat(full, &info) == 0 else { continue }
                    let mode = String(info.st_mode & 0o7777, radix: 8)
                    switch info.st_mode & S_IFMT {
                    case S_IFDIR: tree[full] = "dir \(mode)"
                    case S_IFREG:
                        let bytes = try Data(contentsOf: URL(fileURLWithPath: full)).base64EncodedString()
                        tree[full] = "file \(mode) links \(info.st_nlink) \(bytes)"
                    default: tree[full] = "other \(mode)"
                    }
                }
            }
            return tree
        }

        /// Runs `chime` with `arguments`, killed before its `killAt`th change when given.
        func chime(_ arguments: [String], killAt: Int? = nil) throws -> (status: Int32, killed: Bool, stdout: String, stderr: String) {
            var environment = sandbox.environment
            environment["CHIME_TEST_GATE_KILL_AT"] = killAt.map(String.init)
            let (process, out, err) = ChimeExecutable.process(arguments, environment: environment)
            try process.run()
            let stdout = out.fileHandleForReading.readDataToEndOfFile()
            let stderr = err.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            let killed = process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL
            return (process.terminationStatus, killed, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
        }
    }

    /// How the machine stands before the command that is killed.
    enum Given: Sendable {
        case notGated
        /// Both gated, as `chime` gates them.
        case gated
        /// Both gated, the chime recorded moved away, the system's entry updated.
        case stale
    }

    /// A command to kill at every step.
    struct Scenario: Sendable, CustomTestStringConvertible {
        var given: Given
        var command: [String]
        var testDescription: String { "\(given): chime \(command.joined(separator: " "))" }
    }

    static let scenarios: [Scenario] = [
        Scenario(given: .notGated, command: ["gate", "add", "mine"]),
        Scenario(given: .notGated, command: ["gate", "add", "app"]),
        Scenario(given: .gated, command: ["gate", "remove", "mine"]),
        Scenario(given: .gated, command: ["gate", "remove", "app"]),
        Scenario(given: .gated, command: ["gate", "off"]),
        Scenario(given: .stale, command: ["gate", "doctor"]),
    ]

    @Test(arguments: scenarios)
    func killedAtEveryStepTheNextCommandRecovers(_ scenario: Scenario) throws {
        var steps = 0
        every: for step in 1...200 {
            for recovery in 0..<3 {
                // Given the machine as the scenario has it
                let machine = try Machine()
                let baseline = try machine.tree()
                let overrides = try machine.overrides
                if scenario.given != .notGated {
                    let chime: String
                    if scenario.given == .stale {
                        chime = machine.sandbox.directory.path + "/moved/chime"
                        try FileManager.default.createDirectory(
                            atPath: machine.sandbox.directory.path + "/moved",
                            withIntermediateDirectories: true
                        )
                        try Data("#!/bin/sh\n".utf8).write(to: URL(fileURLWithPath: chime))
                        chmod(chime, 0o755)
                    } else {
                        chime = ChimeExecutable.url.path
                    }
                    for id in ["mine", "app"] { try overrides.gate(DesktopFileID(id), chime: chime) }
                    if scenario.given == .stale {
                        try FileManager.default.removeItem(atPath: chime)
                        try Data((Self.system + "Comment=updated\n").utf8).write(
                            to: URL(fileURLWithPath: machine.dataDirectory + "/applications/app.desktop")
                        )
                    }
                }
                var updated = baseline
                if scenario.given == .stale {
                    let key = machine.dataDirectory + "/applications/app.desktop"
                    updated[key] = try machine.tree()[key]
                }

                // When the command is killed before its step-th change
                let run = try machine.chime(scenario.command, killAt: step)
                guard run.killed else {
                    // It ran to its end: every step was tried.
                    #expect(step > 1, "never killed: \(run.stderr)")
                    #expect([0, 1].contains(run.status), "\(run.stderr)")
                    steps = step - 1
                    break every
                }
                let context = "step \(step), recovery \(recovery): \(run.stderr)"

                // Then the person's entry is as it was (bytes, mode, one link), or Chime's gate
                var info = stat()
                #expect(lstat(machine.ownPath, &info) == 0, "\(context)")
                let bytes = try String(decoding: Data(contentsOf: URL(fileURLWithPath: machine.ownPath)), as: UTF8.self)
                #expect(bytes == Self.own || bytes.contains("X-Chime-Gate=mine.desktop"), "\(context)")
                #expect(info.st_mode & 0o7777 == 0o640 && info.st_nlink == 1, "\(context)")
                // No file is taken for an edit
                let list = try machine.chime(["gate", "list", "--json"])
                #expect(list.status == 0, "\(context): \(list.stderr)")
                #expect(!list.stdout.contains("override_edited"), "\(context): \(list.stdout)")

                // And the next command recovers: off; remove; or add and then off
                switch recovery {
                case 0:
                    let off = try machine.chime(["gate", "off"])
                    #expect(off.status == 0, "\(context): \(off.stderr)")
                case 1:
                    for id in ["mine", "app"] {
                        let remove = try machine.chime(["gate", "remove", id])
                        #expect([0, 3].contains(remove.status), "\(context): \(remove.stderr)")
                    }
                default:
                    let add = try machine.chime(["gate", "add", "mine"])
                    #expect(add.status == 0 || add.stderr.contains("gated already"), "\(context): \(add.stderr)")
                    if add.status == 0 {
                        let listed = try machine.chime(["gate", "list", "--json"])
                        let programs = try jsonObject(listed.stdout)["programs"] as? [[String: Any]]
                        let mine = programs?.first { $0["id"] as? String == "mine.desktop" }
                        #expect(mine?["status"] as? String == "ok", "\(context): \(listed.stdout)")
                    }
                    let off = try machine.chime(["gate", "off"])
                    #expect(off.status == 0, "\(context): \(off.stderr)")
                }
                // Everything is as before the gate: the person's bytes, modes and links, nothing of
                // Chime's left (no temporary file, no record, no lock)
                var after = try machine.tree()
                // Except an empty chime/ (Chime's own, made again by the next gate): a command killed
                // between making it and the gate directory in it, or between deleting the two, leaves
                // it, and nothing is gated to take the lock for.
                if after[machine.dataHome + "/chime"] == "dir 700" && updated[machine.dataHome + "/chime"] == nil {
                    after[machine.dataHome + "/chime"] = nil
                }
                let differences = Set(after.keys).union(updated.keys).filter { after[$0] != updated[$0] }.sorted()
                #expect(after == updated, "\(context): \(differences)")
            }
        }
        #expect(steps > 0)
    }
}
