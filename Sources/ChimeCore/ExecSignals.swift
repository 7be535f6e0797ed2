#if canImport(Glibc)
import Glibc
#endif

/// The signal state a program should start with when chime replaces itself with it (`exec`):
/// what a launcher gives (every signal unblocked, INT, QUIT, TERM, HUP and PIPE at their
/// defaults). exec keeps the signal mask and ignored signals, and chime blocks SIGTERM and the
/// like for its own handling and ignores some: a program exec'd without this ignores `kill PID`
/// and Ctrl+C. (Spawned children get the same through posix_spawn's attributes: CLinux's
/// `chime_spawn`.)
public enum ExecSignals {
    public static func reset() {
        for signal in [SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGPIPE] { _ = Glibc.signal(signal, SIG_DFL) }
        var none = sigset_t()
        sigemptyset(&none)
        sigprocmask(SIG_SETMASK, &none, nil)
    }
}
