import CLinux
import ChimeCore

#if canImport(Glibc)
import Glibc
#endif

/// Starts a program as this process's child and waits for it, staying out of its way: the
/// child keeps the terminal, process group, descriptors and environment it would have had had
/// this process replaced itself with it (`exec`), with every signal unblocked and at its
/// default. Meanwhile SIGTERM, SIGHUP, SIGUSR1 and SIGUSR2 sent to this process go on to the
/// child, and SIGINT and SIGQUIT are ignored here (a terminal sends them to the whole process
/// group, the child included), as `system(3)` does. `chime gate open` measures a gated
/// program's running time this way (see `GateRun` in ChimeGateway).
public enum WatchingParent {
    /// How the child ended.
    public enum Ending: Sendable, Equatable {
        case exited(Int32)
        case signaled(Int32)
    }

    /// Installs the forwarding, then starts `argv` (found on PATH as `execvp` would) with this
    /// environment. Returns the child's pid.
    /// - Throws: `.notFound` naming the program when it cannot be started.
    public static func start(_ argv: [String]) throws(ChimeError) -> pid_t {
        chime_watch_prepare()
        var cArgv = argv.map { strdup($0) } + [nil]
        defer { for pointer in cArgv { free(pointer) } }
        var pid: pid_t = 0
        let error = chime_watch_spawn(argv[0], &cArgv, environ, &pid)
        guard error == 0 else {
            throw ChimeError(.notFound, "cannot start '\(argv[0])': \(String(cString: strerror(error))); check the launcher's command line")
        }
        return pid
    }

    /// Waits for child `pid` to end (signals are forwarded meanwhile).
    public static func wait(_ pid: pid_t) -> Ending {
        let status = chime_watch_wait(pid)
        if status >= 0, chime_wifsignaled(status) != 0 { return .signaled(chime_wtermsig(status)) }
        if status >= 0, chime_wifexited(status) != 0 { return .exited(Int32(chime_wexitstatus(status))) }
        return .exited(1)
    }

    /// Ends this process as the child ended: with its exit status, or killed by its signal (so
    /// whoever started this process sees what it would have seen of the program itself).
    public static func exit(as ending: Ending) -> Never {
        switch ending {
        case .exited(let code):
            Glibc.exit(code)
        case .signaled(let signal):
            Glibc.signal(signal, SIG_DFL)
            var set = sigset_t()
            sigemptyset(&set)
            sigaddset(&set, signal)
            pthread_sigmask(SIG_UNBLOCK, &set, nil)
            raise(signal)
            Glibc.exit(128 + signal)
        }
    }
}
