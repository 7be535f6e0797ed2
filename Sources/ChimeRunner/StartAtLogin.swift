import ChimeCore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Starting the runner at login, one of two ways: the systemd user unit `chime.service`
/// (`systemctl --user enable`) where systemd looks for user units, or an XDG autostart entry
/// `$XDG_CONFIG_HOME/autostart/chime-runner.desktop` for sessions without a systemd user
/// manager. The use cases of `chime service enable|status|disable`.
///
/// The autostart entry has the system one's name (`/etc/xdg/autostart/chime-runner.desktop`,
/// off by default), so by the XDG Autostart specification the person's file replaces it. The
/// file Chime writes carries ``marker``; a file of that name without it is the person's own:
/// never overwritten, never removed.
public struct StartAtLogin: Sendable {
    /// The two ways to start the runner at login.
    public enum Method: String, Sendable, CaseIterable, Codable {
        case systemd, autostart
    }

    /// The unit's name, where systemd looks for user units (`systemctl --user cat chime.service`).
    public static let unitName = "chime.service"
    /// The autostart entry's file name, the same as the system one's.
    public static let autostartName = "chime-runner.desktop"
    /// The key that marks an autostart entry as written by `chime service enable`.
    public static let marker = "X-Chime-Service"

    public let environment: [String: String]
    /// The chime the autostart entry starts (the running one's absolute path).
    public let executable: String

    public init(environment: [String: String] = ProcessInfo.processInfo.environment, executable: String = DataDirectories.executablePath) {
        self.environment = environment
        self.executable = executable
    }

    // MARK: - What is set up

    /// The systemd side: whether a user manager runs, and the unit's state.
    public struct Systemd: Sendable, Hashable {
        /// Whether `systemctl` is installed (on `PATH`).
        public var installed: Bool
        /// Whether a systemd user manager runs for this user now.
        public var managerRunning: Bool
        /// `systemctl --user is-enabled chime.service`: enabled, disabled, static, masked…; nil
        /// when no unit of that name is where systemd looks (or systemctl is not installed).
        public var unitState: String?
        /// `systemctl --user is-active chime.service` (active, inactive, failed…); nil without a user manager.
        public var active: String?

        /// Whether the unit is enabled, so it starts with the user's manager.
        public var enabled: Bool { unitState == "enabled" || unitState == "enabled-runtime" }
    }

    /// An autostart entry of Chime's name.
    public struct AutostartEntry: Sendable, Hashable {
        public var path: String
        /// Whether Chime wrote it (it carries ``StartAtLogin/marker``).
        public var chimes: Bool
        /// Whether a session starts it (not `Hidden=true`, not `X-GNOME-Autostart-enabled=false`).
        public var enabled: Bool
        /// Its `Exec=` line.
        public var exec: String?
    }

    /// What is set up now.
    public struct Status: Sendable, Hashable {
        public var systemd: Systemd
        /// The person's own entry, `$XDG_CONFIG_HOME/autostart/chime-runner.desktop`, if there is one.
        public var userEntry: AutostartEntry?
        /// The entry a session reads: the person's, else the first system one (`$XDG_CONFIG_DIRS`).
        public var effectiveEntry: AutostartEntry?

        /// The ways that start a runner at login now, systemd first.
        public var active: [Method] {
            var methods: [Method] = []
            if systemd.enabled { methods.append(.systemd) }
            if effectiveEntry?.enabled == true { methods.append(.autostart) }
            return methods
        }
    }

    /// `$XDG_CONFIG_HOME/autostart/chime-runner.desktop` (else `~/.config/autostart/…`).
    public var userEntryPath: String {
        let config =
            environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.config")
        return config + "/autostart/" + Self.autostartName
    }

    /// The system entries, in `$XDG_CONFIG_DIRS` order (default `/etc/xdg`).
    var systemEntryPaths: [String] {
        let directories = environment["XDG_CONFIG_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/etc/xdg"
        return directories.split(separator: ":").filter { $0.hasPrefix("/") }.map { $0 + "/autostart/" + Self.autostartName }
    }

    public func status() -> Status {
        let user = Self.readEntry(at: userEntryPath)
        let effective = user ?? systemEntryPaths.lazy.compactMap(Self.readEntry(at:)).first
        return Status(systemd: systemd(), userEntry: user, effectiveEntry: effective)
    }

    /// The systemd side, asked of `systemctl --user` (no manager needed for the unit's state).
    public func systemd() -> Systemd {
        guard let systemctl = systemctlPath else { return Systemd(installed: false, managerRunning: false) }
        let running = Self.managerRunning(isSystemRunning: run(systemctl, ["is-system-running"]).stdout)
        let enabled = run(systemctl, ["is-enabled", Self.unitName])
        // A unit systemd cannot find prints nothing on standard output (systemd 252: "Failed to
        // get unit file state … No such file or directory"); newer ones print "not-found".
        let state = Self.firstLine(enabled.stdout).flatMap { $0 == "not-found" ? nil : $0 }
        let active = running ? Self.firstLine(run(systemctl, ["is-active", Self.unitName]).stdout) : nil
        return Systemd(installed: true, managerRunning: running, unitState: state, active: active)
    }

    /// Whether a user manager answered, from what `systemctl --user is-system-running` printed:
    /// any state (running, degraded, starting…) but "offline" (no manager to ask) or nothing.
    public static func managerRunning(isSystemRunning output: String) -> Bool {
        guard let state = firstLine(output) else { return false }
        return state != "offline" && state != "unknown"
    }

    // MARK: - Enable and disable

    /// What `enable` or `disable` did, one line a step.
    public struct Outcome: Sendable, Hashable {
        public var method: Method?
        /// Whether a runner was started or stopped now (systemd with a user manager), not at next login.
        public var now: Bool
        public var steps: [String]
    }

    /// Sets the runner to start at login, through `method`, or through systemd when a user
    /// manager runs and the autostart entry otherwise. Enabling one way undoes Chime's other
    /// one (a second runner at login would only be refused).
    ///
    /// - Throws: `.notFound` when systemd is asked for and no `chime.service` is where it
    ///   looks (or systemctl is not installed); `.conflict` when the autostart entry's file is
    ///   the person's own; `.failure` when systemctl or the file system fails.
    public func enable(via method: Method? = nil) throws(ChimeError) -> Outcome {
        let systemd = systemd()
        let chosen = method ?? (systemd.managerRunning ? .systemd : .autostart)
        switch chosen {
        case .systemd:
            guard let systemctl = systemctlPath else {
                throw ChimeError(.notFound, "systemctl is not installed: use 'chime service enable --via autostart'")
            }
            guard systemd.unitState != nil else { throw Self.noUnit }
            let arguments = systemd.managerRunning ? ["enable", "--now", Self.unitName] : ["enable", Self.unitName]
            try check(run(systemctl, arguments), systemctl: arguments)
            var steps = [
                systemd.managerRunning
                    ? "Enabled and started \(Self.unitName) (systemctl --user enable --now \(Self.unitName))."
                    : "Enabled \(Self.unitName): it starts at your next login (no systemd user manager runs now)."
            ]
            // One way at a time: a second runner at login would only be refused.
            if let entry = Self.readEntry(at: userEntryPath), entry.chimes {
                try removeEntry(entry)
                steps.append("Removed the autostart entry Chime wrote before (\(entry.path)).")
            }
            return Outcome(method: .systemd, now: systemd.managerRunning, steps: steps)
        case .autostart:
            let path = userEntryPath
            if let entry = Self.readEntry(at: path), !entry.chimes { throw Self.notChimes(path) }
            try write(Self.entryText(executable: executable), to: path)
            var steps = ["Wrote \(path): your desktop session starts the runner at your next login."]
            if systemd.enabled, let systemctl = systemctlPath {
                try check(run(systemctl, ["disable", Self.unitName]), systemctl: ["disable", Self.unitName])
                steps.append("Disabled \(Self.unitName) (systemctl --user disable \(Self.unitName)): one runner at login, not two.")
            }
            return Outcome(method: .autostart, now: false, steps: steps)
        }
    }

    /// Undoes what ``enable(via:)`` did: disables the unit (and stops it, with a user manager)
    /// and removes the autostart entry if Chime wrote it.
    ///
    /// - Throws: `.conflict` when the only thing to undo is an autostart entry that is the
    ///   person's own (left as it is); `.failure` when systemctl or the file system fails.
    public func disable() throws(ChimeError) -> Outcome {
        let systemd = systemd()
        var steps: [String] = []
        var method: Method?
        if systemd.enabled, let systemctl = systemctlPath {
            let arguments = systemd.managerRunning ? ["disable", "--now", Self.unitName] : ["disable", Self.unitName]
            try check(run(systemctl, arguments), systemctl: arguments)
            steps.append(
                systemd.managerRunning
                    ? "Disabled and stopped \(Self.unitName) (systemctl --user disable --now \(Self.unitName))."
                    : "Disabled \(Self.unitName): it no longer starts at login."
            )
            method = .systemd
        }
        if let entry = Self.readEntry(at: userEntryPath) {
            if entry.chimes {
                try removeEntry(entry)
                steps.append("Removed \(entry.path): the session no longer starts the runner.")
                method = method ?? .autostart
            } else if steps.isEmpty {
                throw Self.notChimes(entry.path)
            } else {
                steps.append("Left \(entry.path) as it is: it is not Chime's.")
            }
        }
        if steps.isEmpty { steps.append("Nothing to undo: neither the systemd unit nor Chime's autostart entry is set up.") }
        return Outcome(method: method, now: systemd.managerRunning && method == .systemd, steps: steps)
    }

    // MARK: - The autostart entry

    /// The entry Chime writes: the system one's keys, on, starting `executable`, with ``marker``.
    public static func entryText(executable: String) -> String {
        """
        [Desktop Entry]
        Type=Application
        Name=Chime reminder runner
        Comment=Fires Chime's reminders at their time
        Exec=\(execArgument(executable)) run
        Icon=\(ApplicationID.current)
        Terminal=false
        NoDisplay=true
        X-GNOME-Autostart-enabled=true
        \(marker)=true

        """
    }

    /// `path` as one argument of an `Exec=` key (Desktop Entry Specification, "The Exec key"):
    /// as it is when it has only safe characters, else in double quotes with `"`, `` ` ``, `$`
    /// and `\` escaped; then `%` doubled and each `\` written `\\` (the key's value is a string).
    static func execArgument(_ path: String) -> String {
        let safe = path.unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) || "/._+-,:@%".unicodeScalars.contains($0) }
        var argument = path
        if !safe {
            var quoted = "\""
            for character in path {
                if "\"`$\\".contains(character) { quoted.append("\\") }
                quoted.append(character)
            }
            argument = quoted + "\""
        }
        return argument.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "%%")
    }

    /// The entry at `path`, or nil when there is no file there.
    static func readEntry(at path: String) -> AutostartEntry? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        var keys: [String: String] = [:]
        var inMain = false
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.hasPrefix("[") {
                inMain = text == "[Desktop Entry]"
                continue
            }
            guard inMain, !text.hasPrefix("#"), let equals = text.firstIndex(of: "=") else { continue }
            let key = text[..<equals].trimmingCharacters(in: .whitespaces)
            if keys[key] == nil { keys[key] = text[text.index(after: equals)...].trimmingCharacters(in: .whitespaces) }
        }
        let enabled = keys["Hidden"] != "true" && keys["X-GNOME-Autostart-enabled"] != "false"
        return AutostartEntry(path: path, chimes: keys[marker] == "true", enabled: enabled, exec: keys["Exec"])
    }

    private func write(_ text: String, to path: String) throws(ChimeError) {
        let directory = (path as NSString).deletingLastPathComponent
        let temporary = directory + "/.\(Self.autostartName).\(getpid()).tmp"
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            // Whole or not at all: written beside it, then renamed over it.
            guard FileManager.default.createFile(atPath: temporary, contents: Data(text.utf8), attributes: [.posixPermissions: 0o644])
            else { throw ChimeError(.failure, "cannot write '\(temporary)': \(String(cString: strerror(errno)))") }
            guard rename(temporary, path) == 0 else {
                let reason = String(cString: strerror(errno))
                unlink(temporary)
                throw ChimeError(.failure, "cannot write '\(path)': \(reason)")
            }
        } catch let error as ChimeError {
            throw error
        } catch {
            throw ChimeError(.failure, "cannot make '\(directory)': \(error.localizedDescription)")
        }
    }

    private func removeEntry(_ entry: AutostartEntry) throws(ChimeError) {
        guard unlink(entry.path) == 0 || errno == ENOENT else {
            throw ChimeError(.failure, "cannot remove '\(entry.path)': \(String(cString: strerror(errno)))")
        }
    }

    static func notChimes(_ path: String) -> ChimeError {
        ChimeError(
            .conflict,
            "'\(path)' is not Chime's (it has no \(marker)=true): leaving it as it is; remove or rename it yourself to let Chime manage the autostart entry"
        )
    }

    static let noUnit = ChimeError(
        .notFound,
        "no \(unitName) where systemd looks for user units: install the Debian package (sudo apt install ./dist/chime_*.deb) or run scripts/quickstart (it installs ~/.local/share/systemd/user/\(unitName)); or use --via autostart"
    )

    // MARK: - systemctl

    /// `systemctl` on the environment's `PATH`.
    var systemctlPath: String? {
        let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").map { $0 + "/systemctl" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    struct Ran {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs `systemctl --user --no-pager ARGUMENTS` in this environment, to its end.
    private func run(_ systemctl: String, _ arguments: [String]) -> Ran {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: systemctl)
        process.arguments = ["--user", "--no-pager"] + arguments
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        do {
            try process.run()
        } catch {
            return Ran(status: 127, stdout: "", stderr: "cannot start \(systemctl): \(error.localizedDescription)")
        }
        // systemctl says a line or two on each: neither pipe fills while the other is read.
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Ran(
            status: process.terminationStatus,
            stdout: String(decoding: stdout, as: UTF8.self),
            stderr: String(decoding: stderr, as: UTF8.self)
        )
    }

    private func check(_ ran: Ran, systemctl arguments: [String]) throws(ChimeError) {
        guard ran.status != 0 else { return }
        let reason = Self.firstLine(ran.stderr) ?? "exit status \(ran.status)"
        throw ChimeError(.failure, "systemctl --user \(arguments.joined(separator: " ")) failed: \(reason)")
    }

    static func firstLine(_ text: String) -> String? {
        text.split(separator: "\n").first.map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 }
    }
}
