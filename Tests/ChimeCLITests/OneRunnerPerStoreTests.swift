import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// One runner per store, however the store is spelled and whatever the environment: the lock
/// lives beside the store file, not in a name made from a path in `$XDG_RUNTIME_DIR`.
@Suite("One runner per store, however it is named")
struct OneRunnerPerStoreTests {
    /// A spelling of the sandbox's store: the `--store` value, variables changed, the directory it is run from.
    struct Spelling: CustomTestStringConvertible {
        var label: String
        var store: String
        var environment: [String: String] = [:]
        var directory: String?
        var testDescription: String { label }
    }

    static func spellings(of sandbox: borrowing Sandbox) throws -> [Spelling] {
        let directory = sandbox.directory.path
        #expect(symlink(sandbox.store, directory + "/file-link.sqlite") == 0)
        #expect(symlink(directory, directory + "/directory-link") == 0)
        let otherRuntime = directory + "/other-run"
        #expect(mkdir(otherRuntime, 0o700) == 0)
        return [
            Spelling(label: "XDG_RUNTIME_DIR unset (su, cron, ssh)", store: sandbox.store, environment: ["XDG_RUNTIME_DIR": ""]),
            Spelling(label: "another runtime directory", store: sandbox.store, environment: ["XDG_RUNTIME_DIR": otherRuntime]),
            Spelling(label: "a link to the store file", store: directory + "/file-link.sqlite"),
            Spelling(label: "a link to its directory", store: directory + "/directory-link/chime.sqlite"),
            Spelling(label: "a relative path", store: "chime.sqlite", directory: directory),
            Spelling(
                label: "a relative link, no runtime directory",
                store: "file-link.sqlite",
                environment: ["XDG_RUNTIME_DIR": ""],
                directory: directory
            ),
            Spelling(label: "doubled slashes", store: directory.replacingOccurrences(of: "/", with: "//") + "//chime.sqlite"),
        ]
    }

    @Test(
        "A second runner is refused for every spelling (exit 6, naming the first's pid), and every spelling's CLI reaches the first",
        .timeLimit(.minutes(2))
    )
    func everySpellingMeetsTheSameRunner() async throws {
        let sandbox = try Sandbox()
        let spellings = try Self.spellings(of: sandbox)
        let runner = try sandbox.startRunner("--json")
        #expect(await runner.waitUntilStarted(), "\(runner.stderr)")
        let pid = runner.process.processIdentifier

        for (index, spelling) in spellings.enumerated() {
            var environment = sandbox.environment
            for (key, value) in spelling.environment { environment[key] = value.isEmpty ? nil : value }

            // A second runner on the same store, so spelled, is refused at once
            let second = try runProcess(
                ChimeExecutable.url.path,
                ["run", "--json", "--store", spelling.store],
                environment: environment,
                directory: spelling.directory,
                timeout: 10
            )
            #expect(second.status == 6, "\(spelling.label): exit \(second.status): \(second.stderr)")
            #expect(second.stderr.contains("(pid \(pid))"), "\(spelling.label): \(second.stderr)")

            // And the CLI, so spelled, finds the running runner and wakes it
            let scheduled = try runProcess(
                ChimeExecutable.url.path,
                ["in", "1s", "Spelling \(index)", "--store", spelling.store, "--json"],
                environment: environment,
                directory: spelling.directory,
                timeout: 10
            )
            #expect(scheduled.status == 0, "\(spelling.label): \(scheduled.stderr)")
            #expect(try jsonObject(scheduled.stdout)["runner"] as? Bool == true, "\(spelling.label): \(scheduled.stdout)")
            let doctor = try runProcess(
                ChimeExecutable.url.path,
                ["doctor", "--json", "--store", spelling.store],
                environment: environment,
                directory: spelling.directory,
                timeout: 10
            )
            let found = try jsonObject(doctor.stdout)["runner"] as? [String: Any]
            #expect(found?["pid"] as? Int == Int(pid), "\(spelling.label): \(doctor.stdout)")
        }

        // Every reminder fires once, from the one runner
        var titles: [String] = []
        let deadline = Date().addingTimeInterval(8)
        while titles.count < spellings.count, Date() < deadline, let line = await runner.nextLine(timeout: deadline.timeIntervalSinceNow) {
            if let title = try? jsonObject(line)["title"] as? String { titles.append(title) }
        }
        titles += await runner.lines(for: 1.5).compactMap { try? jsonObject($0)["title"] as? String }
        #expect(titles.sorted() == spellings.indices.map { "Spelling \($0)" }.sorted(), "\(titles)")
        #expect(await runner.terminate() == 0)
    }
}
