import ChimeCore
import Foundation
import Testing

@testable import ChimeRunner

#if canImport(Glibc)
import Glibc
#endif

/// The runner's pieces on the real OS: its lock, where it puts its socket, and the wake-up socket.
struct RunnerPiecesTests {
    @Test func secondLockOnTheSameStoreFailsNamingTheFirstPid() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let lockPath = directory.file("chime.sqlite.lock")
        let storePath = directory.file("chime.sqlite")

        // Given a runner holding the lock
        var first: RunnerLock? = try RunnerLock(path: lockPath, storePath: storePath)
        #expect(RunnerLock.isHeld(at: lockPath))
        #expect(FileManager.default.contents(atPath: lockPath) == Data("\(getpid())\n".utf8))
        #expect(permissions(of: lockPath) == 0o600)

        // When a second one tries
        let error = #expect(throws: ChimeError.self) { try RunnerLock(path: lockPath, storePath: storePath) }

        // Then it is refused, naming the store and the pid of the first
        #expect(error?.code == .runnerRunning)
        #expect(error?.message.contains("(pid \(getpid()))") == true)
        #expect(error?.message.contains("'\(storePath)'") == true)
        #expect(RunnerLock.isHeld(at: lockPath))

        // When the first is released, the lock can be taken again
        withExtendedLifetime(first) {}
        first = nil
        #expect(!RunnerLock.isHeld(at: lockPath))
        let again = try RunnerLock(path: lockPath, storePath: storePath)
        #expect(again.path == lockPath)
        #expect(RunnerLock.isHeld(at: lockPath))
    }

    @Test func lockThatWasNeverTakenIsNotHeld() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        #expect(!RunnerLock.isHeld(at: directory.file("missing.lock")))
    }

    @Test func pathsUseTheRuntimeDirectoryWhenSet() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.file("chime.sqlite")
        let environment = ["XDG_RUNTIME_DIR": "/run/user/4242"]

        let paths = RunnerPaths(storePath: store, environment: environment)

        #expect(paths.usesRuntimeDirectory)
        #expect(paths.directory == "/run/user/4242/chime")
        let name = try #require(paths.socket.wholeMatch(of: /\/run\/user\/4242\/chime\/store-([0-9a-f]{1,16})\.sock/)?.1)
        #expect(!name.isEmpty)
        // The lock is beside the store, not in the runtime directory
        let resolved = try #require(realpath(directory.path, nil))
        defer { free(resolved) }
        #expect(paths.lock == String(cString: resolved) + "/chime.sqlite.lock")
        // Two spellings of one store share a runner; another store has its own
        let respelled = RunnerPaths(storePath: directory.path + "/./chime.sqlite", environment: environment)
        #expect(respelled == paths)
        let other = RunnerPaths(storePath: directory.file("other.sqlite"), environment: environment)
        #expect(other.socket != paths.socket)
        #expect(other.lock != paths.lock)
    }

    @Test("One lock file for every spelling of a store, whatever the environment")
    func oneLockForEverySpelling() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let real = directory.file("real")
        #expect(mkdir(real, 0o700) == 0)
        let store = real + "/chime.sqlite"
        #expect(FileManager.default.createFile(atPath: store, contents: nil))
        #expect(symlink(store, directory.file("file-link.sqlite")) == 0)
        #expect(symlink(real, directory.file("directory-link")) == 0)
        let resolved = try #require(realpath(store, nil))
        defer { free(resolved) }
        let expected = String(cString: resolved) + ".lock"

        let spellings = [
            store, directory.file("file-link.sqlite"), directory.file("directory-link") + "/chime.sqlite",
            directory.path + "//real//chime.sqlite", directory.path + "/real/./chime.sqlite",
            directory.path + "/real/../real/chime.sqlite",
        ]
        let environments: [[String: String]] = [
            [:], ["XDG_RUNTIME_DIR": "/run/user/1000"], ["XDG_RUNTIME_DIR": "/run/user/1001"], ["XDG_RUNTIME_DIR": ""],
        ]
        for spelling in spellings {
            for environment in environments {
                #expect(RunnerPaths(storePath: spelling, environment: environment).lock == expected, "\(spelling) \(environment)")
            }
        }
        // A relative spelling, from the store's directory
        let cwd = FileManager.default.currentDirectoryPath
        #expect(FileManager.default.changeCurrentDirectoryPath(directory.path))
        defer { _ = FileManager.default.changeCurrentDirectoryPath(cwd) }
        #expect(RunnerPaths(storePath: "directory-link/chime.sqlite", environment: [:]).lock == expected)
        #expect(RunnerPaths(storePath: "file-link.sqlite", environment: ["XDG_RUNTIME_DIR": "/run/user/1000"]).lock == expected)
    }

    @Test("The lock tells the CLI the runner's pid and socket, and only while it is held")
    func lockPublishesTheSocket() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let lockPath = directory.file("chime.sqlite.lock")
        var lock: RunnerLock? = try RunnerLock(path: lockPath, storePath: directory.file("chime.sqlite"))
        #expect(RunnerLock.holder(at: lockPath)?.pid == getpid())
        #expect(RunnerLock.holder(at: lockPath)?.socket == nil)
        lock?.publish(socket: "/run/user/1000/chime/store-1.sock")
        #expect(RunnerLock.holder(at: lockPath)?.socket == "/run/user/1000/chime/store-1.sock")
        withExtendedLifetime(lock) {}
        lock = nil
        #expect(RunnerLock.holder(at: lockPath) == nil)
        #expect(FileManager.default.fileExists(atPath: lockPath))
    }

    @Test("The lock tells doctor where the runner's alerts go now, each change in place, and only while it is held")
    func lockPublishesTheDestination() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let lockPath = directory.file("chime.sqlite.lock")
        var lock: RunnerLock? = try RunnerLock(path: lockPath, storePath: directory.file("chime.sqlite"))
        #expect(RunnerLock.destination(at: lockPath) == nil)
        lock?.publish(socket: "/run/user/1000/chime/store-1.sock")
        lock?.publish(destination: "console (no notification server: the desktop once one starts)")
        #expect(RunnerLock.destination(at: lockPath) == "console (no notification server: the desktop once one starts)")
        // A shorter one replaces it whole; the pid and socket stay
        lock?.publish(destination: "desktop (dunst\n1.9)")
        #expect(RunnerLock.destination(at: lockPath) == "desktop (dunst 1.9)")
        #expect(RunnerLock.holder(at: lockPath)?.pid == getpid())
        #expect(RunnerLock.holder(at: lockPath)?.socket == "/run/user/1000/chime/store-1.sock")
        let text = String(decoding: FileManager.default.contents(atPath: lockPath) ?? Data(), as: UTF8.self)
        #expect(text == "\(getpid())\n/run/user/1000/chime/store-1.sock\ndesktop (dunst 1.9)\n")
        withExtendedLifetime(lock) {}
        lock = nil
        #expect(RunnerLock.destination(at: lockPath) == nil)
    }

    @Test(arguments: [[:], ["XDG_RUNTIME_DIR": ""], ["XDG_RUNTIME_DIR": "relative/run"]])
    func pathsSitBesideTheStoreWithoutAnAbsoluteRuntimeDirectory(environment: [String: String]) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.file("chime.sqlite")
        let resolved = try #require(realpath(directory.path, nil))
        defer { free(resolved) }
        let canonicalDirectory = String(cString: resolved)

        let paths = RunnerPaths(storePath: store, environment: environment)

        #expect(!paths.usesRuntimeDirectory)
        #expect(paths.directory == canonicalDirectory)
        #expect(paths.socket == canonicalDirectory + "/chime.sqlite.sock")
        #expect(paths.lock == canonicalDirectory + "/chime.sqlite.lock")
    }

    @Test func pokeReturnsFalseWhenNothingListens() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }

        // No socket file at all
        #expect(!WakeSocket.poke(path: directory.file("none.sock")))
        // A socket file left behind by a runner that is gone
        let stale = directory.file("stale.sock")
        let fd = try WakeSocket.bind(path: stale)
        close(fd)
        #expect(FileManager.default.fileExists(atPath: stale))
        #expect(!WakeSocket.poke(path: stale))
        // A path too long for a Unix socket
        #expect(!WakeSocket.poke(path: directory.path + "/" + String(repeating: "x", count: 200)))
        // RunnerControl finds no runner for a store that has none
        #expect(!RunnerControl.poke(storePath: directory.file("chime.sqlite"), environment: [:]))
        #expect(!RunnerControl.isRunning(storePath: directory.file("chime.sqlite"), environment: [:]))
    }

    @Test func pokeReachesABoundSocketAndIsDrained() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("runner.sock")
        let fd = try WakeSocket.bind(path: path)
        defer { close(fd) }
        #expect(permissions(of: path) == 0o600)

        #expect(WakeSocket.poke(path: path))
        #expect(WakeSocket.poke(path: path))
        #expect(WakeSocket.poke(path: path))

        #expect(WakeSocket.drain(fd) == 3)
        #expect(WakeSocket.drain(fd) == 0)
    }

    @Test func eachDatagramSaysWhichProcessSentIt() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("runner.sock")
        let fd = try WakeSocket.bind(path: path)
        defer { close(fd) }

        // This process (as the runner's own D-Bus service pokes it), then another (as the CLI does).
        #expect(WakeSocket.poke(path: path))
        let other = Process()
        other.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        other.arguments = [
            "-c", "import socket,sys; s=socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.sendto(b'p', sys.argv[1])", path,
        ]
        try other.run()
        other.waitUntilExit()
        #expect(other.terminationStatus == 0)

        var senders: [pid_t] = []
        #expect(WakeSocket.drain(fd, queries: { _ in }, withdrawals: { _ in }, sender: { senders.append($0) }) == 2)
        #expect(senders == [getpid(), other.processIdentifier])
    }

    @Test("A command's withdrawals and confirmations reach the runner over its socket as sent; a bad id is dropped")
    func withdrawalsAndConfirmationsCrossTheSocket() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("w.sock")
        let fd = try WakeSocket.bind(path: path)
        defer { close(fd) }

        // A cancel's plain withdrawal, and an answer's confirmation whose texts hold a tab and a line break
        #expect(WakeSocket.withdraw(path: path, ids: ["tea"]))
        let confirmation = Withdrawal.Confirmation(title: "✓ Zinc 25 mg\ttaken at 16:19", body: "Refill soon:\n3 left")
        #expect(
            WakeSocket.withdraw(path: path, [Withdrawal(id: "med-3-20261122-0800", confirmation: confirmation), Withdrawal(id: "bad id")])
        )
        var received: [Withdrawal] = []
        #expect(WakeSocket.drain(fd, queries: { _ in }, withdrawals: { received += $0 }) == 2)
        #expect(
            received == [
                Withdrawal(id: "tea"),
                Withdrawal(
                    id: "med-3-20261122-0800",
                    confirmation: Withdrawal.Confirmation(title: "✓ Zinc 25 mg taken at 16:19", body: "Refill soon: 3 left")
                ),
            ]
        )
    }

    @Test func bindRefusesToReplaceAFileThatIsNotASocket() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("runner.sock")
        #expect(FileManager.default.createFile(atPath: path, contents: Data("keep".utf8)))

        let error = #expect(throws: ChimeError.self) { try WakeSocket.bind(path: path) }

        #expect(error?.code == .failure)
        #expect(FileManager.default.contents(atPath: path) == Data("keep".utf8))
    }
}

/// The timerfd waker, on the real clock. Serialized: a waker closes its descriptors when it shuts
/// down, and these tests must not race each other's timerfds.
@Suite(.serialized)
struct TimerWakerTests {
    @Test(.timeLimit(.minutes(1)))
    func timerWakerReturnsDeadlineWhenItsTimePasses() async throws {
        let waker = try TimerWaker(socketFD: nil)
        defer { waker.shutdown() }

        // The real-clock backend: this waits about 50 ms of real time.
        let start = Date()
        let reason = await waker.wait(until: start.addingTimeInterval(0.05))

        #expect(reason == .deadline)
        #expect(Date().timeIntervalSince(start) >= 0.045)
        // A deadline already past returns at once
        #expect(await waker.wait(until: Date(timeIntervalSinceNow: -10)) == .deadline)
    }

    @Test(.timeLimit(.minutes(1)))
    func timerWakerReturnsPokedWhenTheSocketIsPokedAndSaysItIsPendingUntilThen() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("runner.sock")
        let fd = try WakeSocket.bind(path: path)
        defer { close(fd) }
        let waker = try TimerWaker(socketFD: fd)
        defer { waker.shutdown() }
        #expect(!waker.hasPendingWake())

        // A poke is pending from the moment it is sent (unread on the socket, or read by the
        // poll thread and held for the next wait) until a wait returns it
        #expect(WakeSocket.poke(path: path))
        #expect(waker.hasPendingWake())

        // No deadline: only the poke can wake it
        #expect(await waker.wait(until: nil) == .poked)
        #expect(!waker.hasPendingWake())
    }

    @Test(.timeLimit(.minutes(1)))
    func timerWakerWhoseTimerTheRunnerThreadWaitsOnReturnsDeadlineWhenItsTimePasses() async throws {
        let waker = try TimerWaker(socketFD: nil, timerThread: .shared)
        defer { waker.shutdown() }

        // The real-clock backend: this waits about 50 ms of real time.
        let start = Date()
        let reason = await waker.wait(until: start.addingTimeInterval(0.05))

        #expect(reason == .deadline)
        #expect(Date().timeIntervalSince(start) >= 0.045)
        #expect(await waker.wait(until: Date(timeIntervalSinceNow: -10)) == .deadline)
        // No deadline: nothing wakes it but a poke
        let parked = Task { await waker.wait(until: nil) }
        waker.poke()
        #expect(await parked.value == .poked)
    }

    @Test(.timeLimit(.minutes(1)))
    func aPokeStaysPendingWhenTheRunnerThreadTellsTheDeadlineFirst() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("runner.sock")
        let fd = try WakeSocket.bind(path: path)
        defer { close(fd) }
        let waker = try TimerWaker(socketFD: fd, timerThread: .shared)
        defer { waker.shutdown() }

        // A poke and a deadline already past, told by two threads in either order
        #expect(WakeSocket.poke(path: path))
        let first = await waker.wait(until: Date(timeIntervalSinceNow: -1))

        // The deadline first: the poke is still pending (staged occurrences are not posted), and
        // the next wait tells it
        if first == .deadline {
            #expect(waker.hasPendingWake())
            #expect(await waker.wait(until: nil) == .poked)
        } else {
            #expect(first == .poked)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func theRunnerThreadCallsAWatcherWhenItsDescriptorIsReadableUntilUnwatched() async throws {
        var ends: [Int32] = [-1, -1]
        try #require(pipe(&ends) == 0)
        defer { for end in ends { close(end) } }
        let (readEnd, writeEnd) = (ends[0], ends[1])
        let (calls, called) = AsyncStream.makeStream(of: pthread_t.self)
        RunnerThread.shared.watch(readEnd) {
            var byte: UInt8 = 0
            _ = read(readEnd, &byte, 1)
            called.yield(pthread_self())
        }
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
        var iterator = calls.makeAsyncIterator()
        // Called on the runner's own thread
        let runner = await Task(executorPreference: RunnerThread.shared) { pthread_self() }.value
        #expect(await iterator.next() == runner)

        RunnerThread.shared.unwatch(readEnd)
        _ = write(writeEnd, &byte, 1)
        try await Task.sleep(for: .milliseconds(100))
        called.finish()
        #expect(await iterator.next() == nil)
    }

    /// A signal that comes while a runner starts (before its relay is installed) does not end
    /// the process: it is remembered, and the relay hands it to its handler once installed; a
    /// second one is relayed too.
    /// (SIGUSR2 stands in for SIGTERM, which would end the test process were it not caught.)
    @Test(.timeLimit(.minutes(1)))
    func aSignalBeforeTheRelayIsHandedOnOnceItIsInstalled() async throws {
        TimerWaker.rememberSignals([SIGUSR2])
        defer { signal(SIGUSR2, SIG_IGN) }
        // To the process, as `kill` sends it (raise() would signal this thread, one of Swift's
        // pool, which blocks signals): a thread that does not block it runs the handler.
        #expect(kill(getpid(), SIGUSR2) == 0)
        while !TimerWaker.hasRememberedSignal { await Task.yield() }  // the process goes on: remembered
        let waker = try TimerWaker(socketFD: nil)
        defer { waker.shutdown() }
        let handled = AsyncStream<Void>.makeStream()
        waker.relaySignals([SIGUSR2]) { handled.continuation.yield() }
        var iterator = handled.stream.makeAsyncIterator()
        await iterator.next()  // handed on without a second signal
        // A second one (as `timeout` sends, to the child and then its process group) is relayed
        // again, not given the default action, which would end this process.
        #expect(kill(getpid(), SIGUSR2) == 0)
        await iterator.next()
    }

    @Test(.timeLimit(.minutes(1)))
    func timerWakerReturnsShutdownAndKeepsReturningIt() async throws {
        let waker = try TimerWaker(socketFD: nil)

        waker.shutdown()

        #expect(await waker.wait(until: nil) == .shutdown)
        #expect(await waker.wait(until: Date(timeIntervalSinceNow: 3_600)) == .shutdown)
    }
}

/// The mode bits (permissions) of the file at `path`, or nil when it does not exist.
private func permissions(of path: String) -> mode_t? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    return info.st_mode & 0o777
}

/// The question a cancel asks the runner, over the real socket and the real waker.
struct DeliveryQuestionTests {
    @Test("A question reaches the waker as a poke, and its answer comes back to the asking socket", .timeLimit(.minutes(1)))
    func questionAndAnswerOverTheSocket() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("runner.sock")
        let fd = try WakeSocket.bind(path: path)
        defer { close(fd) }
        let waker = try TimerWaker(socketFD: fd)
        defer { waker.shutdown() }
        let shown = OccurrenceKey(reminderKey: 7, dueMicros: 1_767_603_660_000_000)
        let notShown = OccurrenceKey(reminderKey: 8, dueMicros: 1_767_603_660_000_000)

        // The cancel asks from another thread, and waits for the answer
        let asked = Task.detached { WakeSocket.ask(path: path, keys: [shown, notShown], timeout: 10) }
        #expect(await waker.wait(until: nil) == .poked)
        let queries = waker.takeQueries()
        #expect(queries.count == 1)
        #expect(queries.first?.keys == [shown, notShown])
        #expect(waker.takeQueries().isEmpty)
        let posted = Date(timeIntervalSince1970: 1_767_603_660.000_3)
        queries.first?.answer([shown: posted])

        #expect(await asked.value == .answered([shown: Date(micros: posted.micros)]))
    }

    @Test("No runner: the question says so at once; a runner that does not answer: it says that after the timeout")
    func noRunnerAndNoAnswer() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let key = OccurrenceKey(reminderKey: 1, dueMicros: 1)
        #expect(WakeSocket.ask(path: directory.file("none.sock"), keys: [key], timeout: 5) == .noRunner)
        let path = directory.file("silent.sock")
        let fd = try WakeSocket.bind(path: path)
        defer { close(fd) }
        let started = Date()
        #expect(WakeSocket.ask(path: path, keys: [key], timeout: 0.2) == .noAnswer)
        #expect(Date().timeIntervalSince(started) < 5)
    }
}
