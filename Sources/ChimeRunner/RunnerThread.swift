import CLinux
import ChimeCore
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A task executor that runs every job on one thread of Chime's own.
///
/// The runner runs under `withTaskExecutorPreference(RunnerThread.shared)`, so its tasks and
/// its default actors (the scheduler) never use Swift's global cooperative pool. That pool's
/// worker threads come from libdispatch's thread-pool emulation on Linux, which, from the
/// first worker on, ticks a monitor timer once a second for the rest of the process: an idle
/// runner would wake every second (measured with `chime-bench idle`). One thread is all the
/// runner needs: it fires alerts one at a time.
public final class RunnerThread: TaskExecutor {
    /// The process's runner thread, started on first use.
    public static let shared = RunnerThread()

    private let jobs = Mutex<[UnownedJob]>([])
    /// Counts enqueued jobs; the thread blocks on it while there is nothing to run.
    private let wakeFD: Int32
    /// Descriptors the thread waits on along with ``wakeFD`` while idle, and what it calls
    /// (on this thread) when one is readable: see ``watch(_:onReadable:)``.
    private let watched = Mutex<[Int32: @Sendable () -> Void]>([:])
    /// The thread's `pthread_self()`, once it runs: a job it enqueues for itself (an actor hop, a
    /// continuation a watcher resumes) needs no write to ``wakeFD`` (it looks before it blocks).
    private let threadID = Atomic<UInt>(0)

    private init() {
        wakeFD = eventfd(0, Int32(EFD_CLOEXEC))
        precondition(wakeFD >= 0, "eventfd failed: \(String(cString: strerror(errno)))")
        let thread = Thread { [self] in self.loop() }
        thread.name = "chime-runner"
        thread.start()
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(job) }
        if pthread_self() == threadID.load(ordering: .relaxed) { return }
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    /// While idle, this thread also waits on `fd` and calls `onReadable` on itself when it can be
    /// read (until ``unwatch(_:)``): the runner's timer wakes the thread that posts, rather than
    /// another thread that must then wake this one (a second wake-up on every deadline, from
    /// another CPU, between the instant and the notifier's call).
    public func watch(_ fd: Int32, onReadable: @escaping @Sendable () -> Void) {
        watched.withLock { $0[fd] = onReadable }
        kick()
    }

    /// Stops waiting on `fd`; after it returns, the thread no longer reads it.
    public func unwatch(_ fd: Int32) {
        watched.withLock { $0[fd] = nil }
        kick()
    }

    /// Wakes the thread, so that it waits again on what is watched now.
    private func kick() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    private func loop() {
        threadID.store(pthread_self(), ordering: .relaxed)
        var count: UInt64 = 0
        while true {
            // Blocks only with nothing to run: what this thread enqueued for itself wrote nothing.
            let watching = jobs.withLock { $0.isEmpty } ? watched.withLock { $0 } : nil
            if watching?.isEmpty ?? false {
                if read(wakeFD, &count, 8) < 0 && errno == EINTR { continue }
            } else if let watching {
                var fds = [pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
                fds += watching.keys.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
                if poll(&fds, nfds_t(fds.count), -1) < 0 { continue }
                for fd in fds.dropFirst() where fd.revents != 0 {
                    // Still watched (not removed since the poll): its owner reads it, here, and
                    // what it enqueues runs below, in this turn.
                    watched.withLock { $0[fd.fd] }?()
                }
                if fds[0].revents != 0 { _ = read(wakeFD, &count, 8) }
            }
            let batch = jobs.withLock { jobs -> [UnownedJob] in
                defer { jobs.removeAll(keepingCapacity: true) }
                return jobs
            }
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }
}
