import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A command a reminder runs when it fires (`--exec ARGV…`, or `--exec-shell 'CMD'` when a
/// shell is asked for): once per occurrence, under the same ledger as its alert.
public struct ReminderCommand: Sendable, Hashable {
    /// What runs: an argv (no shell), or a command line for `/bin/sh -c`.
    public enum Program: Sendable, Hashable {
        case argv([String])
        case shell(String)
    }

    public var program: Program
    /// How long it may run before its process group is sent SIGTERM (then SIGKILL after ``grace``).
    public var timeout: Duration

    /// The time limit when none is given: 10 minutes.
    public static let defaultTimeout: Duration = .seconds(600)
    /// The wait between SIGTERM and SIGKILL when the time limit is reached.
    public static let grace: Duration = .seconds(5)
    /// The time limits `--exec-timeout` accepts: 1 second to 1 day.
    public static let timeoutRule = OptionDuration(option: "--exec-timeout", unit: .second, bareNumbers: false, range: 1...86_400)
    /// How much of a command's output (standard output and error together) is kept: its first
    /// ``outputLines`` lines, at most ``outputBytes`` bytes.
    public static let outputLines = 10
    public static let outputBytes = 4_096
    /// The longest argv or shell line accepted, in bytes.
    public static let lengthLimit = 8_192

    public init(_ program: Program, timeout: Duration = ReminderCommand.defaultTimeout) {
        self.program = program
        self.timeout = timeout
    }

    /// The argv that runs: the program's own, or `/bin/sh -c CMD`.
    public var argv: [String] {
        switch program {
        case .argv(let argv): argv
        case .shell(let line): ["/bin/sh", "-c", line]
        }
    }

    public var isShell: Bool {
        if case .shell = program { return true }
        return false
    }

    /// The command as a person reads it: the argv's words (quoted where needed), or the shell line.
    public var display: String {
        switch program {
        case .argv(let argv): argv.map(Self.quoted).joined(separator: " ")
        case .shell(let line): line
        }
    }

    static func quoted(_ word: String) -> String {
        let plain =
            !word.isEmpty
            && word.unicodeScalars.allSatisfy {
                $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "-_./=:,@%+".unicodeScalars.contains($0))
            }
        return plain ? word : "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// Checks what people type: a non-empty argv (or shell line) with no NUL byte, within
    /// ``lengthLimit``, and a time limit within ``timeoutRule``. With `searchPath` (the PATH to
    /// look in, at schedule time), an argv's program must be found there and be executable.
    public func validated(searchPath: String? = nil) throws(ChimeError) -> ReminderCommand {
        let words = argv
        switch program {
        case .argv(let argv):
            guard let first = argv.first, !first.isEmpty else {
                throw ChimeError(
                    .usage,
                    "missing command after --exec: expected a program and its arguments, such as --exec rsync -a SRC DST"
                )
            }
        case .shell(let line):
            guard !line.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw ChimeError(.usage, "empty --exec-shell: expected a command line for /bin/sh, such as --exec-shell 'make -C ~/site'")
            }
        }
        if words.contains(where: { $0.utf8.contains(0) }) {
            throw ChimeError(.usage, "invalid command '\(display)': it holds a NUL byte")
        }
        if words.reduce(0, { $0 + $1.utf8.count + 1 }) > Self.lengthLimit {
            throw ChimeError(.usage, "command too long: at most \(Self.lengthLimit) bytes")
        }
        let seconds = timeout.components.seconds
        guard Self.timeoutRule.range.contains(seconds) else {
            throw ChimeError.invalid("--exec-timeout", "\(seconds)s", expected: "a duration from 1s to 1d")
        }
        if let searchPath, case .argv(let argv) = program, Self.resolve(argv[0], path: searchPath) == nil {
            throw ChimeError(
                .usage,
                "program not found: '\(argv[0])' is not an executable file\(argv[0].contains("/") ? "" : " in PATH"); give its full path, or --exec-shell for a shell command"
            )
        }
        return self
    }

    /// The executable `program` names: itself when it holds a '/', else the first executable
    /// regular file of that name in `path` (colon-separated); nil when there is none.
    public static func resolve(_ program: String, path: String) -> String? {
        func executable(_ file: String) -> Bool {
            var info = stat()
            return stat(file, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG && access(file, X_OK) == 0
        }
        if program.contains("/") { return executable(program) ? program : nil }
        for directory in path.split(separator: ":", omittingEmptySubsequences: false) {
            let file = (directory.isEmpty ? "." : String(directory)) + "/" + program
            if executable(file) { return file }
        }
        return nil
    }

    // MARK: Stored form

    /// The command as the stores keep it: JSON, `{"argv":[…],"timeout_s":600}` or
    /// `{"shell":"…","timeout_s":600}`.
    public var stored: String {
        var object: [String: Any] = ["timeout_s": timeout.components.seconds]
        switch program {
        case .argv(let argv): object["argv"] = argv
        case .shell(let line): object["shell"] = line
        }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// The command from its ``stored`` form; nil for text that is not one.
    public init?(stored text: String) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] else { return nil }
        let seconds = (object["timeout_s"] as? NSNumber)?.int64Value ?? Self.defaultTimeout.components.seconds
        if let argv = object["argv"] as? [String], !argv.isEmpty {
            self.init(.argv(argv), timeout: .seconds(seconds))
        } else if let line = object["shell"] as? String {
            self.init(.shell(line), timeout: .seconds(seconds))
        } else {
            return nil
        }
    }
}

/// One run of a reminder's command, as the ledger records it.
public struct CommandRun: Sendable, Hashable {
    public enum State: String, Sendable, Hashable, CaseIterable {
        /// Started and not yet finished.
        case running
        /// It ended by itself: ``CommandRun/exitStatus`` says how (128 + N when killed by signal N).
        case exited
        /// The time limit ended it.
        case timedOut = "timed_out"
        /// The runner stopped while it ran (killed, or stopped): not run again.
        case interrupted
        /// It could not start (``CommandRun/error`` says why).
        case failed
    }

    public var state: State
    public var startedAt: Date
    public var finishedAt: Date?
    public var pid: Int32?
    /// The exit status: its exit code, or 128 + N when signal N ended it.
    public var exitStatus: Int32?
    /// The first lines of its output (standard output and error together).
    public var output: String
    /// Why it failed to start, or what interrupted it.
    public var error: String?

    public init(
        state: State,
        startedAt: Date,
        finishedAt: Date? = nil,
        pid: Int32? = nil,
        exitStatus: Int32? = nil,
        output: String = "",
        error: String? = nil
    ) {
        self.state = state
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.pid = pid
        self.exitStatus = exitStatus
        self.output = output
        self.error = error
    }

    /// One line: "exit 0", "exit 3", "timed out", "interrupted (runner stopped while it ran)"…
    public var summary: String {
        switch state {
        case .running: "running (pid \(pid.map(String.init) ?? "?"))"
        case .exited: "exit \(exitStatus.map(String.init) ?? "?")"
        case .timedOut: "timed out"
        case .interrupted: "interrupted (\(error ?? CommandRun.interruptedReason))"
        case .failed: "failed to start: \(error ?? "unknown error")"
        }
    }

    /// What a run recorded as running, found at start-up, says: it is never run again.
    public static let interruptedReason = "runner stopped while it ran"
}

/// How a command's run ended, as a ``CommandLauncher`` tells it.
public struct CommandEnd: Sendable, Hashable {
    public enum How: Sendable, Hashable {
        /// Exit status (128 + N for signal N).
        case exited(Int32)
        case timedOut
        /// The runner is stopping: its group was sent SIGTERM.
        case interrupted
    }

    public var key: OccurrenceKey
    public var how: How
    /// The first lines of its output (``ReminderCommand/outputLines``, ``ReminderCommand/outputBytes``).
    public var output: String

    public init(key: OccurrenceKey, how: How, output: String) {
        self.key = key
        self.how = how
        self.output = output
    }
}

/// Starts reminders' commands for the ``Scheduler`` and tells when each ends, without blocking
/// the scheduler's thread. The runner's is in ChimeRunner (posix_spawn, a pidfd and the output
/// pipe in the runner's own wait); tests use a recording one.
public protocol CommandLauncher: Sendable {
    /// Starts `command` for occurrence `key` with `environment` added to the runner's own.
    /// Returns its process id; throws (with a line saying why) when it could not start.
    func launch(_ command: ReminderCommand, for key: OccurrenceKey, environment: [String: String]) throws -> Int32
    /// Each started command's end, once.
    var ends: AsyncStream<CommandEnd> { get }
    /// The runner is stopping: every command still running has its process group sent
    /// SIGTERM; returns their keys (they are recorded as interrupted).
    func stopAll() -> [OccurrenceKey]
}
