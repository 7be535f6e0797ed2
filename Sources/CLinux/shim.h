// Linux calls that Swift's Glibc module does not import: timerfd and eventfd.
#ifndef CHIME_CLINUX_SHIM_H
#define CHIME_CLINUX_SHIM_H

#include <sys/timerfd.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <errno.h>
#include <signal.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <spawn.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

// The flags are macros or enum members depending on the libc headers: give them one type.
static inline int chime_tfd_flags(void) { return TFD_CLOEXEC | TFD_NONBLOCK; }
static inline int chime_tfd_abstime_cancel_on_set(void) { return TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET; }
static inline int chime_efd_flags(void) { return EFD_CLOEXEC | EFD_NONBLOCK; }
static inline int chime_inotify_init(void) { return inotify_init1(IN_NONBLOCK | IN_CLOEXEC); }
// What replacing /etc/localtime or /etc/timezone looks like (timedatectl set-timezone, a package upgrade).
static inline uint32_t chime_inotify_zone_mask(void) { return IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE; }
// Timer slack: let the kernel fire our deadlines within 1 µs rather than the default 50 µs.
static inline int chime_set_timer_slack_ns(unsigned long ns) { return prctl(PR_SET_TIMERSLACK, ns, 0, 0, 0); }

// Signal relay: a handler that writes to an eventfd the runner's poll thread watches. A
// second SIGINT gets the default action (a second Ctrl-C stops at once); a second SIGTERM is
// relayed again, as the first: `timeout` sends one to its child and another to the child's
// process group, and the runner then stops cleanly (exit 0), not by the second (exit 143).
static int chime_signal_relay_fd = -1;
static void chime_signal_relay_handler(int sig) {
    int saved = errno;
    uint64_t one = 1;
    ssize_t written = write(chime_signal_relay_fd, &one, sizeof one);
    (void)written;
    if (sig == SIGINT) signal(sig, SIG_DFL);
    errno = saved;
}
// Until the relay is installed (while a runner starts: its store opened or made, its lock
// taken), a signal is only remembered, so that a stop asked for then (systemctl stop, Ctrl-C)
// ends the runner cleanly once it has started, not half-way with the signal's default action.
static volatile sig_atomic_t chime_signal_early = 0;
static void chime_signal_early_handler(int sig) {
    (void)sig;
    chime_signal_early = 1;
}
static inline int chime_remember_signal(int sig) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = chime_signal_early_handler;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    return sigaction(sig, &action, NULL);
}
static inline int chime_signal_remembered(void) { return chime_signal_early; }
static inline int chime_relay_signal(int sig, int fd) {
    chime_signal_relay_fd = fd;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = chime_signal_relay_handler;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    int result = sigaction(sig, &action, NULL);
    if (result == 0 && chime_signal_early) {
        // A signal came before the relay: hand it on now.
        uint64_t one = 1;
        ssize_t written = write(fd, &one, sizeof one);
        (void)written;
        chime_signal_early = 0;
    }
    return result;
}

// struct ucred and SCM_CREDENTIALS (socket(7)) without _GNU_SOURCE, which would change how this
// module declares libc's types (fd_set) from how the other C modules do.
struct chime_ucred {
    pid_t pid;
    uid_t uid;
    gid_t gid;
};
#define CHIME_SCM_CREDENTIALS 0x02
// The wake-up socket is told each datagram's sender (SO_PASSCRED), so that the runner tells its
// own datagrams (its D-Bus service's) from another process's changes. CMSG_* are macros.
static inline int chime_pass_credentials(int fd) {
    int on = 1;
    return setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof on);
}
// recvfrom(2) that also gives the sender's pid (0 when the datagram carried none).
static inline ssize_t chime_recv_with_pid(int fd, void *buffer, size_t length, struct sockaddr_storage *from, socklen_t *fromLength, pid_t *pid) {
    struct iovec part = { buffer, length };
    union { struct cmsghdr header; char space[CMSG_SPACE(sizeof(struct chime_ucred))]; } control;
    struct msghdr message;
    memset(&message, 0, sizeof message);
    message.msg_name = from;
    message.msg_namelen = *fromLength;
    message.msg_iov = &part;
    message.msg_iovlen = 1;
    message.msg_control = &control;
    message.msg_controllen = sizeof control;
    ssize_t received = recvmsg(fd, &message, 0);
    *pid = 0;
    if (received < 0) return received;
    *fromLength = message.msg_namelen;
    for (struct cmsghdr *header = CMSG_FIRSTHDR(&message); header != NULL; header = CMSG_NXTHDR(&message, header)) {
        if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == CHIME_SCM_CREDENTIALS) {
            struct chime_ucred credentials;
            memcpy(&credentials, CMSG_DATA(header), sizeof credentials);
            *pid = credentials.pid;
        }
    }
    return received;
}

// A reminder's command: started with posix_spawn (no fork of the runner's memory), stdin from
// /dev/null, stdout and stderr into `out_fd`, every other descriptor closed, every signal at its
// default and none blocked, in a process group of its own (the time limit ends the group), in
// `cwd` when it exists. Returns 0 and sets *pid, or an errno (ENOENT: no such program).
static inline int chime_spawn_command(const char *program, char *const argv[], char *const envp[], const char *cwd, int out_fd,
                                      pid_t *pid) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    int error = posix_spawn_file_actions_init(&actions);
    if (error) return error;
    error = posix_spawnattr_init(&attr);
    if (error) {
        posix_spawn_file_actions_destroy(&actions);
        return error;
    }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
    posix_spawn_file_actions_adddup2(&actions, out_fd, 2);
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    if (cwd) posix_spawn_file_actions_addchdir_np(&actions, cwd);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
    error = posix_spawnp(pid, program, &actions, &attr, argv, envp);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    return error;
}

// pidfd_open(2) (Linux 5.3): a descriptor that is readable once the process has ended; -1 with errno.
static inline int chime_pidfd_open(pid_t pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

// A pipe whose ends are closed on exec; the read end non-blocking.
static inline int chime_output_pipe(int fds[2]) {
    if (pipe2(fds, O_CLOEXEC) != 0) return -1;
    return fcntl(fds[0], F_SETFL, O_NONBLOCK);
}

static inline int chime_tfd_monotonic(void) { return timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK); }
static inline int chime_wifexited(int status) { return WIFEXITED(status); }
static inline int chime_wexitstatus(int status) { return WEXITSTATUS(status); }
static inline int chime_wifsignaled(int status) { return WIFSIGNALED(status); }
static inline int chime_wtermsig(int status) { return WTERMSIG(status); }

// The watching parent of a gated program (`chime gate open`): the program starts as a child that
// keeps this process's terminal, process group, descriptors and environment, with every signal
// unblocked and at its default, as exec would have given it; this process forwards SIGTERM,
// SIGHUP, SIGUSR1 and SIGUSR2 to it and ignores SIGINT and SIGQUIT (a terminal sends those to
// the whole process group: the program gets them itself), as system(3) does.
static volatile pid_t chime_watched_child = 0;
static volatile sig_atomic_t chime_watch_pending = 0;
static void chime_watch_forward(int signal_number) {
    pid_t child = chime_watched_child;
    if (child > 0) kill(child, signal_number);
    else chime_watch_pending = signal_number;
}

// Before the child starts: the handlers (a signal that comes before the child exists is kept
// and forwarded once it does).
static inline void chime_watch_prepare(void) {
    struct sigaction forward;
    memset(&forward, 0, sizeof forward);
    forward.sa_handler = chime_watch_forward;
    sigemptyset(&forward.sa_mask);
    forward.sa_flags = SA_RESTART;
    int forwarded[] = {SIGTERM, SIGHUP, SIGUSR1, SIGUSR2};
    for (unsigned i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++) sigaction(forwarded[i], &forward, NULL);
    struct sigaction ignore;
    memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGINT, &ignore, NULL);
    sigaction(SIGQUIT, &ignore, NULL);
    sigset_t set;
    sigemptyset(&set);
    for (unsigned i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++) sigaddset(&set, forwarded[i]);
    sigaddset(&set, SIGCHLD);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

// Starts the child (as above); 0 or an errno.
static inline int chime_watch_spawn(const char *program, char *const argv[], char *const envp[], pid_t *pid) {
    posix_spawnattr_t attr;
    int error = posix_spawnattr_init(&attr);
    if (error) return error;
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    error = posix_spawnp(pid, program, NULL, &attr, argv, envp);
    posix_spawnattr_destroy(&attr);
    if (error == 0) {
        chime_watched_child = *pid;
        sig_atomic_t pending = chime_watch_pending;
        if (pending) kill(*pid, pending);
    }
    return error;
}

// Waits for the child to end (through signals forwarded meanwhile); its wait status, or -1.
static inline int chime_watch_wait(pid_t pid) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return -1;
    }
    return status;
}

#endif
