import ChimeCore
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Security, with the real `chime` executable and runner: the store, the runtime directory and
/// the socket are the user's alone; the runner refuses paths it does not own and deletes
/// nothing that is not its own; text from a reminder never becomes markup, a shell word or a
/// path; identifiers that could be paths are refused.
@Suite("Security: file modes, paths the runner does not own, hostile text", .serialized)
struct SecurityTests {
    @Test(
        "The store (and -wal, -shm), its directory, the runtime directory, the socket and the lock are the user's alone, even under umask 000",
        .timeLimit(.minutes(1))
    )
    func filesAreTheUsersAlone() async throws {
        let data = "data"
        let sandbox = try Sandbox(extra: ["CHIME_STORE": "", "XDG_DATA_HOME": ""])
        var environment = sandbox.environment
        environment["XDG_DATA_HOME"] = sandbox.directory.appendingPathComponent(data).path
        let storeDirectory = sandbox.directory.appendingPathComponent(data + "/chime").path
        let store = storeDirectory + "/chime.sqlite"
        // A runtime directory someone left open to others is narrowed, not used as it is
        let runtime = sandbox.runtime + "/chime"
        #expect(mkdir(runtime, 0o755) == 0 && chmod(runtime, 0o755) == 0)

        // Given chime and its runner started with a umask that takes nothing away
        let scheduled = try runProcess("/bin/sh", umask000(["in", "10m", "Private"]), environment: environment, timeout: 20)
        #expect(scheduled.status == 0, "\(scheduled.stderr)")
        let log = sandbox.directory.appendingPathComponent("runner.log").path
        let runner = try startUnderUmask000(["run", "--json"], environment: environment, log: log)
        defer { stop(runner) }
        #expect(try await waitForLog(log, containing: "Runner started", while: runner), "\(text(log))")
        let socket = try #require(socketPath(in: text(log)), "\(text(log))")
        let lock = store + ".lock"

        // Then each is this user's, and no one else may read or write it
        let expected: [(String, mode_t, mode_t)] = [
            (storeDirectory, S_IFDIR, 0o700), (store, S_IFREG, 0o600), (store + "-wal", S_IFREG, 0o600),
            (store + "-shm", S_IFREG, 0o600), (runtime, S_IFDIR, 0o700), (socket, S_IFSOCK, 0o600), (lock, S_IFREG, 0o600),
        ]
        for (path, type, mode) in expected {
            var info = stat()
            #expect(lstat(path, &info) == 0, "\(path) is missing")
            #expect(info.st_mode & S_IFMT == type, "\(path): type \(String(info.st_mode & S_IFMT, radix: 8))")
            #expect(info.st_mode & 0o777 == mode, "\(path): mode \(String(info.st_mode & 0o777, radix: 8))")
            #expect(info.st_uid == geteuid(), "\(path): owner \(info.st_uid)")
        }
        #expect(socket.hasPrefix(runtime + "/"))
    }

    @Test(
        "The runner refuses a runtime directory that belongs to another user, and leaves it as it was",
        .enabled(if: geteuid() == 0, "needs root to give a directory to another user"),
        .timeLimit(.minutes(1))
    )
    func runtimeDirectoryOfAnotherUser() throws {
        let sandbox = try Sandbox()
        let runtime = sandbox.runtime + "/chime"
        #expect(mkdir(runtime, 0o700) == 0)
        let theirs = runtime + "/theirs"
        #expect(FileManager.default.createFile(atPath: theirs, contents: Data("their file\n".utf8)))
        #expect(chown(theirs, 65534, 65534) == 0 && chown(runtime, 65534, 65534) == 0)

        let result = try runProcess(ChimeExecutable.url.path, ["run", "--json"], environment: sandbox.environment, timeout: 10)

        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(result.stderr.contains("'\(runtime)' belongs to another user"), "\(result.stderr)")
        var info = stat()
        #expect(lstat(runtime, &info) == 0 && info.st_uid == 65534 && info.st_mode & 0o777 == 0o700)
        #expect(try FileManager.default.contentsOfDirectory(atPath: runtime) == ["theirs"])
        #expect(FileManager.default.contents(atPath: theirs) == Data("their file\n".utf8))
    }

    @Test("The runner refuses a runtime directory that is a symbolic link, and follows it nowhere", .timeLimit(.minutes(1)))
    func runtimeDirectoryThatIsALink() throws {
        let sandbox = try Sandbox()
        let elsewhere = sandbox.directory.appendingPathComponent("elsewhere").path
        #expect(mkdir(elsewhere, 0o700) == 0)
        let runtime = sandbox.runtime + "/chime"
        #expect(symlink(elsewhere, runtime) == 0)

        let result = try runProcess(ChimeExecutable.url.path, ["run", "--json"], environment: sandbox.environment, timeout: 10)

        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(result.stderr.contains("'\(runtime)' is not a directory"), "\(result.stderr)")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: runtime)) == elsewhere)
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere).isEmpty)
    }

    /// What is found where the runner's socket or lock goes.
    enum Planted: String, CaseIterable, CustomTestStringConvertible {
        case socketIsALink, socketIsAFile, socketOfAnotherUser, lockIsALink

        var testDescription: String { rawValue }

        static var testable: [Planted] { geteuid() == 0 ? allCases : allCases.filter { $0 != .socketOfAnotherUser } }
    }

    @Test(
        "The runner refuses a socket or lock path it does not own (a link, a file, another user's socket), and deletes none of it",
        .timeLimit(.minutes(1)),
        arguments: Planted.testable
    )
    func socketPathItDoesNotOwn(planted: Planted) async throws {
        let sandbox = try Sandbox()
        // Where this store's runner puts its socket and lock, as a first runner says
        let first = try sandbox.startRunner("--json")
        #expect(await first.waitUntilStarted(), "\(first.stderr)")
        let socket = try #require(socketPath(in: first.stderr), "\(first.stderr)")
        #expect(await first.terminate() == 0)
        let lock = sandbox.store + ".lock"
        let victim = sandbox.directory.appendingPathComponent("victim").path
        let precious = Data("precious, not the runner's\n".utf8)
        #expect(FileManager.default.createFile(atPath: victim, contents: precious))

        // Given something that is not this runner's where its socket or lock goes
        let named: String
        switch planted {
        case .socketIsALink:
            named = socket
            #expect(symlink(victim, socket) == 0)
        case .socketIsAFile:
            named = socket
            #expect(FileManager.default.createFile(atPath: socket, contents: precious))
        case .socketOfAnotherUser:
            named = socket
            try bindSocket(at: socket)
            #expect(chown(socket, 65534, 65534) == 0)
        case .lockIsALink:
            named = lock
            #expect(unlink(lock) == 0 && symlink(victim, lock) == 0)
        }
        var before = stat()
        #expect(lstat(named, &before) == 0)

        // When a runner starts
        let result = try runProcess(ChimeExecutable.url.path, ["run", "--json"], environment: sandbox.environment, timeout: 10)

        // Then it refuses, in one line naming the path, with a non-zero status
        #expect(result.status == 1, "\(planted): \(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(result.stderr.contains("'\(named)'") && result.stderr.contains("refusing"), "\(result.stderr)")
        // And what it found is still there, unchanged, and so is what a link points at
        var after = stat()
        #expect(lstat(named, &after) == 0, "\(named) was removed")
        #expect(after.st_ino == before.st_ino && after.st_mode == before.st_mode && after.st_uid == before.st_uid)
        #expect(FileManager.default.contents(atPath: victim) == precious)
        if planted == .socketIsAFile { #expect(FileManager.default.contents(atPath: socket) == precious) }
    }

    @Test(
        "Text from a reminder arrives verbatim on the JSON stream and in list --json; nothing runs, no file is made from it",
        .timeLimit(.minutes(1))
    )
    func hostileTextIsOnlyText() async throws {
        let sandbox = try Sandbox()
        let marker = "/tmp/chime-pwned-\(UUID().uuidString)"
        let texts: [(title: String, body: String)] = [
            (#"<b>bold</b> &amp; <a href="x">link</a>"#, "<i>it</i> <script>alert(1)</script> &lt;"),
            ("$(touch \(marker))", "`touch \(marker)` ${IFS}$(id)"),
            ("x; rm -rf ./* ; touch \(marker) #", "a && touch \(marker) || true | cat > \(marker)"),
            ("../../etc/passwd", "/etc/shadow ~/.ssh/id_rsa ../.."),
            ("Line one\nLine two", "tab\there\r\nCRLF\n"),
            (
                "Bell\u{07} escape \u{1B}[31mred\u{1B}[0m del\u{7F}",
                "\u{01}\u{1F} \u{2028}sep\u{2029} \u{85}NEL \u{9B}31mCSI 😀 👩\u{200D}💻 %s %n {{x}} \\(x)"
            ),
        ]
        let cwd = sandbox.directory.appendingPathComponent("cwd").path
        #expect(mkdir(cwd, 0o700) == 0)
        let runner = try sandbox.startRunner("--json")
        #expect(await runner.waitUntilStarted(), "\(runner.stderr)")

        // Given reminders with these titles and bodies, scheduled from an empty directory
        for (index, text) in texts.enumerated() {
            let result = try runProcess(
                ChimeExecutable.url.path,
                ["in", "3s", text.title, text.body, "--id", "text\(index)", "--json"],
                environment: sandbox.environment,
                directory: cwd,
                timeout: 20
            )
            #expect(result.status == 0, "\(result.stderr)")
            let reminder = try #require(try jsonObject(result.stdout)["reminder"] as? [String: Any])
            #expect(reminder["title"] as? String == text.title && reminder["body"] as? String == text.body)
        }

        // Then list --json has them verbatim
        let listed = try runProcess(
            ChimeExecutable.url.path,
            ["list", "--json"],
            environment: sandbox.environment,
            directory: cwd,
            timeout: 20
        )
        let reminders = try #require(try jsonObject(listed.stdout)["reminders"] as? [[String: Any]])
        for (index, text) in texts.enumerated() {
            let reminder = reminders.first { $0["id"] as? String == "text\(index)" }
            #expect(reminder?["title"] as? String == text.title, "text\(index)")
            #expect(reminder?["body"] as? String == text.body, "text\(index)")
        }

        // And the runner's JSON stream carries each once, verbatim, one line each
        var alerts: [[String: Any]] = []
        let deadline = Date().addingTimeInterval(10)
        while alerts.count < texts.count, let line = await runner.nextLine(timeout: deadline.timeIntervalSinceNow) {
            alerts.append(try jsonObject(line))
        }
        #expect(await runner.nextLine(timeout: 1) == nil)
        #expect(await runner.terminate() == 0)
        #expect(alerts.count == texts.count, "\(alerts)")
        for (index, text) in texts.enumerated() {
            let shown = alerts.filter { $0["id"] as? String == "text\(index)" }
            #expect(shown.count == 1, "text\(index): \(shown)")
            #expect(shown.first?["title"] as? String == text.title, "text\(index)")
            #expect(shown.first?["body"] as? String == text.body, "text\(index)")
        }

        // And nothing ran, and no file was made from a title or body
        #expect(!FileManager.default.fileExists(atPath: marker), "a title ran as a shell command")
        #expect(try FileManager.default.contentsOfDirectory(atPath: cwd).isEmpty)
        let made = Set(try FileManager.default.contentsOfDirectory(atPath: sandbox.directory.path))
        #expect(
            made.isSubset(of: ["chime.sqlite", "chime.sqlite-wal", "chime.sqlite-shm", "chime.sqlite.lock", "run", "home", "cwd"]),
            "\(made)"
        )
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.runtime) == ["chime"])
    }

    @Test(
        "In a human line, a title's control characters neither break the line nor reach the terminal",
        .timeLimit(.minutes(1)),
        arguments: [["in", "10m"], ["notify", "--notifier", "console"]]
    )
    func controlCharactersInAHumanLine(command: [String]) throws {
        let sandbox = try Sandbox()
        let title = "Tea\u{1B}[2J\u{1B}]0;owned\u{07} is\nready\r<b>now</b>"

        let result = try sandbox.chime(command + [title])

        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.split(separator: "\n", omittingEmptySubsequences: false).count == 2, "\(result.stdout)")
        #expect(
            !result.stdout.unicodeScalars.contains { $0.properties.generalCategory == .control && $0 != "\n" },
            "\(result.stdout.debugDescription)"
        )
        #expect(result.stdout.contains("<b>now</b>"), "markup is shown as it was typed: \(result.stdout)")
    }

    @Test(
        "Identifiers that could be paths or shell words are refused (exit 64) in one line, and nothing is written",
        .timeLimit(.minutes(1)),
        arguments: ["a/b", "..", "../../etc/passwd", "/etc/passwd", "x y", ".hidden", "a\nb", "$(id)"],
        [
            ["in", "5m", "Title", "--id"], ["at", "23:59", "Title", "--id"], ["every", "day", "08:00", "Title", "--id"], ["cancel"],
            ["next"],
        ]
    )
    func identifiersThatCouldBePaths(id: String, command: [String]) throws {
        let sandbox = try Sandbox()
        #expect(try sandbox.chime("in", "10m", "Kept", "--id", "kept").status == 0)
        let before = try sandbox.chime("list", "--json").stdout
        let cwd = sandbox.directory.appendingPathComponent("cwd").path
        #expect(mkdir(cwd, 0o700) == 0)

        let result = try runProcess(ChimeExecutable.url.path, command + [id], environment: sandbox.environment, directory: cwd, timeout: 20)

        #expect(result.status == 64, "\(command) \(id): \(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(result.stderr.contains("invalid id '\(ChimeError.escapingControlCharacters(id))'"), "\(result.stderr)")
        #expect(try sandbox.chime("list", "--json").stdout == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: cwd).isEmpty)
    }

    /// What is put where the store goes.
    enum NotAFile: String, CaseIterable, CustomTestStringConvertible {
        case fifo, linkToFIFO, devNull, directory
        var testDescription: String { rawValue }
    }

    @Test(
        "A FIFO, a link to one, /dev/null or a directory as the store: refused at once (exit 5) naming what it is; nothing made beside it",
        .timeLimit(.minutes(1)),
        arguments: NotAFile.allCases
    )
    func storeThatIsNotAFile(planted: NotAFile) throws {
        let sandbox = try Sandbox()
        let store: String
        let what: String
        switch planted {
        case .fifo:
            store = sandbox.directory.appendingPathComponent("fifo").path
            #expect(mkfifo(store, 0o600) == 0)
            what = "is a FIFO (named pipe)"
        case .linkToFIFO:
            let fifo = sandbox.directory.appendingPathComponent("fifo").path
            #expect(mkfifo(fifo, 0o600) == 0)
            store = sandbox.directory.appendingPathComponent("link").path
            #expect(symlink(fifo, store) == 0)
            what = "is a symbolic link to a FIFO (named pipe)"
        case .devNull:
            store = "/dev/null"
            what = "is a character device"
        case .directory:
            store = sandbox.directory.appendingPathComponent("folder").path
            #expect(mkdir(store, 0o700) == 0)
            what = "is a directory"
        }
        // (Checked only: /dev/null-journal is not this test's, unless this test made it.)
        let journalBefore = access("/dev/null-journal", F_OK) == 0
        let listing = try FileManager.default.contentsOfDirectory(atPath: sandbox.directory.path).sorted()
        defer {
            if planted == .devNull && !journalBefore && access("/dev/null-journal", F_OK) == 0 { unlink("/dev/null-journal") }
        }

        for command in [["list"], ["in", "5m", "Tea"], ["run", "--json"]] {
            // A bounded wait: a chime blocked opening the FIFO is killed, and the test fails.
            let start = Date()
            let result = try runProcess(
                ChimeExecutable.url.path,
                command + ["--store", store],
                environment: sandbox.environment,
                timeout: 10
            )
            #expect(Date().timeIntervalSince(start) < 9, "\(command) hung on \(store)")
            #expect(result.status == 5, "\(command): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
            #expect(result.stderr.contains("store '\(store)' \(what), not a regular file"), "\(result.stderr)")
        }
        if planted == .devNull { #expect(journalBefore || access("/dev/null-journal", F_OK) != 0, "chime made /dev/null-journal") }
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.directory.path).sorted() == listing)
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.runtime).isEmpty)
    }
}

// MARK: - Helpers

/// `/bin/sh` arguments that run `chime ARGUMENTS` with umask 000.
private func umask000(_ arguments: [String]) -> [String] {
    ["-c", #"umask 000 && exec "$0" "$@""#, ChimeExecutable.url.path] + arguments
}

/// Starts `chime ARGUMENTS` with umask 000, its standard output and error to `log`.
private func startUnderUmask000(_ arguments: [String], environment: [String: String], log: String) throws -> Process {
    guard FileManager.default.createFile(atPath: log, contents: nil) else { throw CocoaError(.fileWriteUnknown) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = umask000(arguments)
    process.environment = environment
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
    process.standardOutput = handle
    process.standardError = handle
    try process.run()
    try handle.close()
    return process
}

/// Stops a process started here by its pid: SIGTERM, then SIGKILL after 10 s.
private func stop(_ process: Process) {
    guard process.isRunning else { return }
    kill(process.processIdentifier, SIGTERM)
    let deadline = Date().addingTimeInterval(10)
    while process.isRunning && Date() < deadline { usleep(20_000) }
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
}

private func text(_ path: String) -> String {
    (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
}

/// Waits (up to 10 s) until `log` contains `needle`, or `process` has exited.
private func waitForLog(_ log: String, containing needle: String, while process: Process) async throws -> Bool {
    let deadline = Date().addingTimeInterval(10)
    while Date() < deadline {
        if text(log).contains(needle) { return true }
        if !process.isRunning { return false }
        try await Task.sleep(for: .milliseconds(20))
    }
    return false
}

/// The socket path the runner logged when it started (`socket.path=…`).
private func socketPath(in log: String) -> String? {
    guard let start = log.range(of: "socket.path=")?.upperBound else { return nil }
    let path = log[start...].prefix { $0 != " " && $0 != "\n" }
    return path.hasSuffix(".sock") ? String(path) : nil
}

/// Leaves a Unix socket file at `path` (bound, then closed), as another program would.
private func bindSocket(at path: String) throws {
    let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
    guard fd >= 0 else { throw POSIXError(.EIO) }
    defer { close(fd) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw POSIXError(.ENAMETOOLONG) }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        raw.copyBytes(from: bytes)
        raw[bytes.count] = 0
    }
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard bound == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
}
