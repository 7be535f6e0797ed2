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
    /// Counts enqueued jobs; the thread blocks reading it while there is nothing to run.
    private let wakeFD: Int32

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
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    private func loop() {
        var count: UInt64 = 0
        while true {
            if read(wakeFD, &count, 8) < 0 && errno == EINTR { continue }
            let batch = jobs.withLock { jobs -> [UnownedJob] in
                defer { jobs.removeAll(keepingCapacity: true) }
                return jobs
            }
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }
}
