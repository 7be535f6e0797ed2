import ChimeCore
import ChimeStore
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The exactly-once promise under crashes: the real runner is killed with SIGKILL at random
/// moments while reminders fall due, and restarted. Waits a few real seconds.
/// The suites that kill the runner again and again while reminders fall due: run one after the
/// other, not beside each other, so that neither starves the other's runner of CPU around the
/// instants it measures.
@Suite(.serialized) enum KillTests {}

extension KillTests {
    @Suite("Crash safety: kill -9 while reminders fall due", .serialized)
    struct CrashTests {
        @Test("Every occurrence is posted exactly once in the ledger; at most one repeat per crash on the stream")
        func killedRunnerLosesNothingAndRepeatsAtMostTheOneInFlight() async throws {
            let sandbox = try Sandbox()
            // Given 300 one-shots due over 3 s, starting 1 s from now
            let store = try ReminderStore(path: sandbox.store, schemas: chimeSchemas)
            let start = Date().addingTimeInterval(1)
            let batch = (0..<300).map { index in
                NewReminder(id: "k\(index)", title: "Crash \(index)", trigger: .once(start.addingTimeInterval(Double(index) * 0.01)))
            }
            _ = try store.scheduleBatch(batch, now: Date(), systemZone: .current)

            // When the runner is killed five times at random moments and restarted after a pause
            var outputs: [String] = []
            var crashes = 0
            var generator = SystemRandomNumberGenerator()
            while crashes < 5 {
                let runner = try sandbox.startRunner("--json")
                if crashes == 0 {
                    // The first crash at a set wall-clock point of the due span, by a thread of its
                    // own started right away (however late this task runs again on a loaded
                    // machine), so the 2 s down that follows covers due instants.
                    let pid = runner.process.processIdentifier
                    let (seconds, fraction) = modf(
                        start.addingTimeInterval(Double.random(in: 0.2...0.6, using: &generator)).timeIntervalSince1970
                    )
                    Thread {
                        var deadline = timespec(tv_sec: Int(seconds), tv_nsec: Int(fraction * 1e9))
                        while clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &deadline, nil) == EINTR {}
                        Glibc.kill(pid, SIGKILL)
                    }.start()
                    #expect(await runner.waitUntilStarted(), "runner did not start: \(runner.stderr)")
                    runner.process.waitUntilExit()
                } else {
                    #expect(await runner.waitUntilStarted(), "runner did not start: \(runner.stderr)")
                    outputs += await runner.lines(for: Double.random(in: 0.2...0.6, using: &generator))
                    runner.crash()
                }
                // What it wrote before it died is still in the pipe: read it to the end (its end
                // comes at once; the bound is for a loaded machine).
                outputs += await runner.lines(for: 10)
                crashes += 1
                // Down for a moment; the first time for 2 s, across the first due times, so that
                // what fell due meanwhile is over a second late.
                let pause = crashes == 1 ? 2_000 : Int.random(in: 50...300, using: &generator)
                try await Task.sleep(for: .milliseconds(pause))
            }
            // And a last runner lives until everything is due and out
            let last = try sandbox.startRunner("--json")
            #expect(await last.waitUntilStarted())
            let deadline = start.addingTimeInterval(3.5)
            outputs += await last.lines(for: max(1.5, deadline.timeIntervalSinceNow + 1))
            #expect(await last.terminate() == 0)

            // Then the ledger holds each occurrence once, posted
            let ledger = try store.ledger()
            #expect(ledger.count == 300)
            #expect(Set(ledger.map(\.reminderID)).count == 300)
            #expect(ledger.allSatisfy { $0.state == "posted" }, "\(ledger.filter { $0.state != "posted" })")

            // And the stream shows every id, repeating at most the one alert in flight per crash
            var shown: [String: Int] = [:]
            for line in outputs {
                let object = try jsonObject(line)
                let ids = (object["ids"] as? [String]) ?? [(object["id"] as? String) ?? ""]
                for id in ids { shown[id, default: 0] += 1 }
            }
            #expect(Set(shown.keys) == Set(batch.map(\.id!)), "missing: \(Set(batch.map(\.id!)).subtracting(shown.keys).sorted())")
            let repeats = shown.values.reduce(0) { $0 + ($1 - 1) }
            #expect(repeats <= crashes, "\(repeats) repeats for \(crashes) crashes")
            // And what fell due while it was down for 2 s came late, as a summary
            #expect(outputs.contains { $0.contains(#""event":"summary""#) })
            print("crash test: \(outputs.count) alerts for 300 occurrences, \(repeats) repeated, \(crashes) crashes")
        }
    }
}
