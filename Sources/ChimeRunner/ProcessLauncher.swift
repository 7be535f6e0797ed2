import CLinux
import ChimeCore
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The runner's ``CommandLauncher``: starts a reminder's command with posix_spawn and follows
/// it in the runner thread's own wait, never blocking on it and never polling.
///
/// The child gets `/dev/null` as stdin, one pipe for stdout and stderr, no other descriptor,
/// every signal at its default and none blocked, and a process group of its own. The runner
/// thread waits (``RunnerThread/watch(_:onReadable:)``) on three descriptors per command: its
/// pidfd (`pidfd_open`, readable once it has ended), its output pipe (the first lines are kept),
/// and a monotonic timerfd for its time limit (SIGTERM to the group, then SIGKILL after
/// ``ReminderCommand/grace``).
public final class ProcessLauncher: CommandLauncher {
    private struct Child {
        var key: OccurrenceKey
        var pid: pid_t
        var pidFD: Int32
        var outputFD: Int32
        var timerFD: Int32
        var output: [UInt8] = []
        var lines = 0
        var timedOut = false
        var killed = false
    }

    private let thread: RunnerThread
    private let workingDirectory: String?
    private let children = Mutex<[pid_t: Child]>([:])
    private let stream: AsyncStream<CommandEnd>
    private let continuation: AsyncStream<CommandEnd>.Continuation

    /// - Parameters:
    ///   - thread: the thread whose wait follows the commands (the runner's).
    ///   - workingDirectory: where commands start (the person's home); the runner's own when nil
    ///     or when it does not exist.
    public init(thread: RunnerThread, workingDirectory: String?) {
        self.thread = thread
        self.workingDirectory = workingDirectory
        (stream, continuation) = AsyncStream.makeStream(of: CommandEnd.self)
    }

    public var ends: AsyncStream<CommandEnd> { stream }

    public func launch(_ command: ReminderCommand, for key: OccurrenceKey, environment: [String: String]) throws -> Int32 {
        let argv = command.argv
        var merged = ProcessInfo.processInfo.environment
        for (name, value) in environment { merged[name] = value }
        var fds: [Int32] = [-1, -1]
        guard chime_output_pipe(&fds) == 0 else { throw Self.error("pipe", errno) }
        let (readFD, writeFD) = (fds[0], fds[1])
        var isDirectory: ObjCBool = false
        let cwd = workingDirectory.flatMap {
            FileManager.default.fileExists(atPath: $0, isDirectory: &isDirectory) && isDirectory.boolValue ? $0 : nil
        }
        var spawned: pid_t = 0
        let code = Self.withCStrings(argv) { cArgv in
            Self.withCStrings(merged.map { "\($0.key)=\($0.value)" }) { cEnv in
                chime_spawn_command(argv[0], cArgv, cEnv, cwd, writeFD, &spawned)
            }
        }
        close(writeFD)
        guard code == 0 else {
            close(readFD)
            if code == ENOENT { throw ChimeError(.failure, "'\(argv[0])': no such program") }
            throw Self.error("'\(argv[0])'", code)
        }
        let pid = spawned
        let pidFD = chime_pidfd_open(pid)
        let timerFD = chime_tfd_monotonic()
        if timerFD >= 0 {
            var spec = itimerspec()
            spec.it_value = timespec(tv_sec: Int(command.timeout.components.seconds), tv_nsec: 0)
            _ = timerfd_settime(timerFD, 0, &spec, nil)
        }
        children.withLock { $0[pid] = Child(key: key, pid: pid, pidFD: pidFD, outputFD: readFD, timerFD: timerFD) }
        thread.watch(readFD) { [weak self] in self?.outputReadable(pid) }
        if pidFD >= 0 { thread.watch(pidFD) { [weak self] in self?.ended(pid) } }
        if timerFD >= 0 { thread.watch(timerFD) { [weak self] in self?.timeUp(pid) } }
        return pid
    }

    public func stopAll() -> [OccurrenceKey] {
        let all = children.withLock { children in
            defer { children = [:] }
            return Array(children.values)
        }
        for child in all {
            kill(-child.pid, SIGTERM)
            release(child)
        }
        return all.map(\.key)
    }

    /// Reads what the command wrote (keeping its first lines); at the end of its output without
    /// a pidfd (a kernel before 5.3), waits for it: it has closed its output, so it is ending.
    private func outputReadable(_ pid: pid_t) {
        let open = children.withLock { children -> Bool? in
            guard var child = children[pid] else { return nil }
            defer { children[pid] = child }
            return Self.drain(&child)
        }
        guard open == false else { return }
        let noPidFD = children.withLock { children -> Bool in
            guard var child = children[pid] else { return false }
            thread.unwatch(child.outputFD)
            close(child.outputFD)
            child.outputFD = -1
            children[pid] = child
            return child.pidFD < 0
        }
        if noPidFD { ended(pid) }
    }

    /// The command has ended: reaps it, keeps what is left of its output, and tells its end.
    private func ended(_ pid: pid_t) {
        var status: Int32 = 0
        let blocking = children.withLock { $0[pid]?.pidFD ?? 0 } < 0
        let reaped = waitpid(pid, &status, blocking ? 0 : WNOHANG)
        guard reaped == pid else { return }
        guard var child = children.withLock({ $0.removeValue(forKey: pid) }) else { return }
        if child.outputFD >= 0 { _ = Self.drain(&child) }
        release(child)
        let how: CommandEnd.How
        if child.timedOut {
            how = .timedOut
        } else if chime_wifexited(status) != 0 {
            how = .exited(chime_wexitstatus(status))
        } else {
            how = .exited(128 + chime_wtermsig(status))
        }
        let text = String(decoding: child.output, as: UTF8.self)
        let output = text.hasSuffix("\n") ? String(text.dropLast()) : text
        continuation.yield(CommandEnd(key: child.key, how: how, output: output))
    }

    /// The time limit passed: SIGTERM to the command's group, then SIGKILL after the grace.
    private func timeUp(_ pid: pid_t) {
        children.withLock { children in
            guard var child = children[pid] else { return }
            var expirations: UInt64 = 0
            guard read(child.timerFD, &expirations, 8) == 8 else { return }
            if !child.timedOut {
                child.timedOut = true
                kill(-pid, SIGTERM)
                var spec = itimerspec()
                spec.it_value = timespec(tv_sec: Int(ReminderCommand.grace.components.seconds), tv_nsec: 0)
                _ = timerfd_settime(child.timerFD, 0, &spec, nil)
            } else if !child.killed {
                child.killed = true
                kill(-pid, SIGKILL)
            }
            children[pid] = child
        }
    }

    /// Stops watching the child's descriptors and closes them.
    private func release(_ child: Child) {
        for fd in [child.outputFD, child.pidFD, child.timerFD] where fd >= 0 {
            thread.unwatch(fd)
            close(fd)
        }
    }

    /// Reads all that can be read now; keeps the first ``ReminderCommand/outputLines`` lines,
    /// at most ``ReminderCommand/outputBytes`` bytes. Returns false at the end of the output.
    private static func drain(_ child: inout Child) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(child.outputFD, &buffer, buffer.count)
            if count == 0 { return false }
            if count < 0 { return errno == EAGAIN || errno == EINTR }
            for byte in buffer[0..<count] {
                guard child.lines < ReminderCommand.outputLines, child.output.count < ReminderCommand.outputBytes else { break }
                child.output.append(byte)
                if byte == UInt8(ascii: "\n") { child.lines += 1 }
            }
        }
    }

    private static func error(_ what: String, _ code: Int32) -> ChimeError {
        ChimeError(.failure, "\(what): \(String(cString: strerror(code)))")
    }

    private static func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
        let pointers = strings.map { strdup($0) } + [nil]
        defer { for pointer in pointers { free(pointer) } }
        return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
    }

    deinit { continuation.finish() }
}
