import CLinux
import ChimeCore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A program the runner starts and leaves running on its own (the Chime app's window, opened
/// from the bus or an alert): started with posix_spawn as a reminder's command is (stdin from
/// /dev/null, no other descriptor of the runner, every signal at its default, a process group of
/// its own, so that a Ctrl-C to a runner in a terminal does not end the window), its output and
/// errors into the runner's standard error (its log), and reaped by a thread of its own that
/// waits for its end (no polling, no wake-up).
public enum DetachedProcess {
    /// Starts `argv` (its first element a path) with `environment`; its pid.
    public static func start(_ argv: [String], environment: [String: String]) throws(ChimeError) -> pid_t {
        let pointers = argv.map { strdup($0) } + [nil]
        let assignments = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in pointers + assignments { free(pointer) } }
        var pid: pid_t = 0
        let code = pointers.withUnsafeBufferPointer { cArgv in
            assignments.withUnsafeBufferPointer { cEnv in
                chime_spawn_command(argv[0], cArgv.baseAddress!, cEnv.baseAddress!, nil, 2, &pid)
            }
        }
        guard code == 0 else { throw ChimeError(.failure, "cannot start '\(argv[0])': \(String(cString: strerror(code)))") }
        let child = pid
        let reaper = Thread {
            var status: Int32 = 0
            while waitpid(child, &status, 0) < 0 && errno == EINTR {}
        }
        reaper.name = "chime-reap"
        reaper.start()
        return child
    }
}
