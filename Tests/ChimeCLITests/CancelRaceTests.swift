import ChimeStore
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `chime cancel` around the instant its alert is due, against the real runner: what the command
/// says, what the runner showed and what the ledger records agree, every time.
@Suite("Cancel at the instant: the answer, the screen and the ledger agree")
struct CancelRaceTests {
    @Test(
        "Cancels that commit within milliseconds of the instant: exit 0 and never shown, or exit 8/3 and shown once",
        .timeLimit(.minutes(2))
    )
    func cancelsAroundTheInstant() async throws {
        let sandbox = try Sandbox()
        let runner = try sandbox.startRunner("--json")
        #expect(await runner.waitUntilStarted(), "\(runner.stderr)")

        // Given 40 one-shots due 150 ms apart, from 2 s on
        let count = 40
        let first = Date().addingTimeInterval(2)
        let dues = (0..<count).map { first.addingTimeInterval(0.15 * Double($0)) }
        let reminders = dues.enumerated().map { index, due in
            ["title": "Race \(index)", "id": "race\(index)", "at": Self.iso(due)]
        }
        let file = sandbox.directory.appendingPathComponent("race.json")
        try JSONSerialization.data(withJSONObject: reminders).write(to: file)
        let imported = try sandbox.chime("import", file.path)
        #expect(imported.status == 0, "\(imported.stderr)")

        // When each is cancelled by a process started around its instant (starting takes a few
        // milliseconds, so the commits spread across the instant)
        let environment = sandbox.environment
        let directory = sandbox.directory.path
        // (On a thread of its own: sleeping and waiting for processes on Swift's small cooperative
        // pool would starve the other tests running beside this one.)
        let statuses = await withCheckedContinuation { (continuation: CheckedContinuation<[(status: Int32, stderr: String)], Never>) in
            let thread = Thread {
                var statuses: [(status: Int32, stderr: String)] = []
                for (index, due) in dues.enumerated() {
                    let start = due.addingTimeInterval(-0.080 + 0.002 * Double(index % 40))
                    let wait = start.timeIntervalSinceNow
                    if wait > 0 { usleep(useconds_t(wait * 1_000_000)) }
                    statuses.append(Self.cancel("race\(index)", environment: environment, directory: directory))
                }
                continuation.resume(returning: statuses)
            }
            thread.start()
        }
        let lines = await runner.lines(for: 1.5)
        #expect(await runner.terminate() == 0)

        // Then each cancel and what the runner showed agree, and so does the ledger
        let shownIDs = lines.compactMap { try? jsonObject($0) }.flatMap { event -> [String] in
            if let ids = event["ids"] as? [String] { return ids }
            return (event["id"] as? String).map { [$0] } ?? []
        }
        let store = try ReminderStore(path: sandbox.store, schemas: chimeSchemas)
        var tally: [Int32: Int] = [:]
        for (index, (status, stderr)) in statuses.enumerated() {
            let id = "race\(index)"
            tally[status, default: 0] += 1
            let shown = shownIDs.filter { $0 == id }.count
            let ledger = try store.ledger(id: id)
            switch status {
            case 0:
                // "Cancelled": never shown, and the ledger says so
                #expect(shown == 0, "\(id): cancel said cancelled, and it was shown")
                #expect(ledger.allSatisfy { $0.state == "cancelled" && $0.postedAt == nil }, "\(id): \(ledger)")
            case 8, 3:
                // "Too late" (shown as the cancel came, or before and still showing: closed), or already
                // fired: shown once, recorded as posted
                let said =
                    status == 8
                    ? "chime: too late: '\(id)' was shown at " : "chime: no pending reminder has the id '\(id)': it has already fired"
                #expect(stderr.hasPrefix(said), "\(id): \(stderr)")
                #expect(shown == 1, "\(id): exit \(status), shown \(shown) times")
                #expect(ledger.map(\.state) == ["posted"], "\(id): \(ledger)")
            default:
                Issue.record("\(id): cancel exited \(status)")
            }
        }
        print(
            "cancel at the instant, \(count) tries: exit 0 (cancelled, not shown) \(tally[0] ?? 0), exit 8 (too late, shown) \(tally[8] ?? 0), exit 3 (already fired) \(tally[3] ?? 0)"
        )
        #expect(Set(tally.keys).isSubset(of: [0, 3, 8]))
    }

    /// ISO 8601 in UTC with milliseconds.
    static func iso(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }

    /// Runs `chime cancel ID` (see ``Spawn``) and returns its exit status and standard error.
    static func cancel(_ id: String, environment: [String: String], directory: String) -> (status: Int32, stderr: String) {
        let output = directory + "/cancel-\(id).out"
        let errors = directory + "/cancel-\(id).err"
        defer {
            unlink(output)
            unlink(errors)
        }
        guard
            case .success(let pid) = Spawn.start(
                ChimeExecutable.url.path,
                ["cancel", id],
                environment: environment,
                output: output,
                errors: errors
            )
        else { return (-1, "") }
        let status = Spawn.wait(pid)
        return (status, (try? String(contentsOfFile: errors, encoding: .utf8)) ?? "")
    }
}
