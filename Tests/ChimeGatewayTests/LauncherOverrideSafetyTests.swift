import ChimeCore
import ChimeGateway
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The launcher overrides never lose a person's file: commands run at once, entries linked from
/// elsewhere, data directories named more than one way. (Commands killed part-way: the CLI's
/// `GateCrashTests`, which kill a real `chime` at every step.)
@Suite struct LauncherOverrideSafetyTests {
    static let own = "[Desktop Entry]\nType=Application\nName=Mine\nExec=mine %U\n# mine\n"

    /// What the threads of one round share.
    final class Round: Sendable {
        let ready = DispatchGroup()
        let go = DispatchSemaphore(value: 0)
        let failures = Mutex<[String]>([])
    }

    @Test func concurrentDoctorRemoveAddAndOffNeverLoseThePersonsEntry() async throws {
        // Given the person's own entry, gated, its gate stale (the recorded chime moved, or the
        // override deleted), a hundred times
        let fixture = try XDGFixture()
        let ownPath = fixture.home + "/applications/mine.desktop"
        try fixture.write(Self.own, to: ownPath, mode: 0o640)
        let before = try fixture.tree()
        let overrides = try fixture.overrides
        let id = try DesktopFileID("mine")
        let moved = fixture.root + "/usr/bin/chime-moved"
        let chime = fixture.chime
        for round in 0..<100 {
            try fixture.write("#!/bin/sh\n", to: moved, mode: 0o755)
            try overrides.gate(id, chime: moved)
            try FileManager.default.removeItem(atPath: round % 2 == 0 ? moved : ownPath)

            // When doctor, remove, add and off run at once, each on a thread of its own
            let jobs: [@Sendable () throws -> Void] = [
                { _ = try overrides.repair(chime: chime) },
                { try overrides.remove(id) },
                { try overrides.gate(id, chime: chime) },
                { _ = try overrides.off() },
            ]
            let shared = Round()
            let done = DispatchGroup()
            for job in jobs {
                shared.ready.enter()
                done.enter()
                Thread {
                    // All at once: each waits until every thread is ready.
                    shared.ready.leave()
                    shared.go.wait()
                    do {
                        try job()
                    } catch let error as ChimeError where error.code == .notFound || error.message.contains("gated already") {
                        // Not gated (any more), or gated (again) by the add: each is an answer.
                    } catch {
                        shared.failures.withLock { $0.append("\(error)") }
                    }
                    done.leave()
                }.start()
            }
            // Waited for off Swift's few cooperative threads, which other suites' tests run on.
            await withCheckedContinuation { (resumed: CheckedContinuation<Void, Never>) in
                shared.ready.notify(queue: .global()) {
                    for _ in jobs { shared.go.signal() }
                    done.notify(queue: .global()) { resumed.resume() }
                }
            }

            // Then none failed, no file is taken for an edit, and off puts back every byte
            #expect(shared.failures.withLock { $0 } == [], "round \(round)")
            #expect(try overrides.list().allSatisfy { $0.status != .overrideEdited }, "round \(round)")
            #expect(try overrides.off().refused == [:], "round \(round)")
            if FileManager.default.fileExists(atPath: moved) { try FileManager.default.removeItem(atPath: moved) }
            let after = try fixture.tree()
            #expect(after == before, "round \(round)")
            if after != before { break }
        }
    }

    @Test func refusesThePersonsOwnEntryWhenItHasOtherHardLinks() throws {
        // Given the person's entry, hard-linked from a dotfiles repository
        let fixture = try XDGFixture()
        let target = fixture.root + "/dotfiles/mine.desktop"
        try fixture.write(Self.own, to: target)
        try FileManager.default.createDirectory(atPath: fixture.home + "/applications", withIntermediateDirectories: true)
        let ownPath = fixture.home + "/applications/mine.desktop"
        #expect(link(target, ownPath) == 0)
        let before = try fixture.tree()

        // When it is gated, then it is refused in one line naming the file, and nothing is touched
        let error = #expect(throws: ChimeError.self) { try fixture.overrides.gate(DesktopFileID("mine"), chime: fixture.chime) }
        #expect(error?.code == .conflict)
        #expect(error?.message.contains("'\(ownPath)' has 2 hard links") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("\n") == false)
        #expect(try fixture.tree() == before)
        var info = stat()
        #expect(lstat(ownPath, &info) == 0 && info.st_nlink == 2)
    }

    /// `$XDG_DATA_DIRS` naming the data home another way.
    static let spellings: [String] = ["//", "/./", "/../share/", "link"]

    @Test(arguments: spellings)
    func theDataHomeNamedAnotherWayInTheDataDirectoriesIsStillTheDataHome(_ spelling: String) throws {
        // Given a system entry, and XDG_DATA_DIRS naming the data home first, another way
        let fixture = try XDGFixture()
        try fixture.write("[Desktop Entry]\nType=Application\nName=App\nExec=app %f\n", to: fixture.system + "/applications/app.desktop")
        let alias: String
        switch spelling {
        case "link":
            // Outside the fixture's root, whose tree is compared.
            alias = FileManager.default.temporaryDirectory.path + "/chime-gate-link-" + UUID().uuidString
            try FileManager.default.createSymbolicLink(atPath: alias, withDestinationPath: fixture.home)
        case "/../share/":
            alias = fixture.home + "/../share/"
        default:
            alias = fixture.home.replacingOccurrences(of: "/.local/", with: "/.local" + spelling)
        }
        defer { if spelling == "link" { try? FileManager.default.removeItem(atPath: alias) } }
        let before = try fixture.tree()
        var environment = fixture.environment
        environment["XDG_DATA_DIRS"] = alias + ":" + (environment["XDG_DATA_DIRS"] ?? "")
        let overrides = try LauncherOverrides(environment: environment)
        let id = try DesktopFileID("app")

        // When it is gated, then list, doctor and remove see the system's entry as its original
        let gated = try overrides.gate(id, chime: fixture.chime)
        #expect(gated.originalPath == fixture.system + "/applications/app.desktop")
        #expect(try overrides.list().map(\.status) == [.ok])
        #expect(try overrides.repair(chime: fixture.chime).map(\.status) == [.ok])
        try overrides.remove(id)
        #expect(try fixture.tree() == before)
    }
}
