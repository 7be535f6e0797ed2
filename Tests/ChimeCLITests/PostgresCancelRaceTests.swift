import ChimeCore
import ChimePostgres
import Foundation
import Testing

extension PostgresFleetTests {
    /// The issue's cancel race: 1,000 reminders, each cancelled from another host (this process)
    /// within ±50 ms of its due time, while two runners fire them. Nothing may be shown after its
    /// cancel committed, unless a runner was already posting it then (the cancel says so: it was
    /// claimed, in flight); those are counted, with the ones the runner's last check stopped.
    enum Outcome: Sendable { case cancelled, inFlight, alreadyShown }

    @Test("Cancel race: 1,000 cancels within ±50 ms of the due time; nothing shown after its cancel unless already in flight")
    func cancelRace() async throws {
        let count = 1_000
        let spacing = 0.02
        try await withFreshCLIDatabase { url in
            let sandbox = try Sandbox(extra: ["CHIME_STORE": url.description])
            try await PostgresStore.withStore(url) { store in
                let runners = [try sandbox.startRunner("--notifier", "json"), try sandbox.startRunner("--notifier", "json")]
                for runner in runners { #expect(await runner.waitUntilStarted(), "\(runner.stderr)") }
                let start = try store.databaseNow().addingTimeInterval(3)
                try await Self.seedOneShots(store, prefix: "race", count: count, from: start, every: spacing)

                // Each cancel at its due time ±50 ms (a seeded generator: the run can be repeated),
                // each in a task of its own, so that a cancel slow on a loaded machine does not
                // delay the ones after it.
                var random = SeededGenerator(seed: 20_261_124)
                let offsets = (0..<count).map { _ in Double.random(in: -0.05...0.05, using: &random) }
                let began = ContinuousClock.now + .seconds(start.timeIntervalSince(try store.databaseNow()))
                let outcomes = try await withThrowingTaskGroup(of: (Int, Outcome).self) { group in
                    for index in 0..<count {
                        group.addTask {
                            try await Task.sleep(until: began + .seconds(spacing * Double(index) + offsets[index]), clock: .continuous)
                            do {
                                let result = try store.cancelReporting(ids: ["race-\(index)"])
                                // Shown already and still showing: the cancel came too late (exit 8).
                                guard result.closed.isEmpty else { return (index, .alreadyShown) }
                                return (index, result.inFlight.isEmpty ? .cancelled : .inFlight)
                            } catch let error as ChimeError where error.code == .notFound {
                                return (index, .alreadyShown)
                            }
                        }
                    }
                    var outcomes = [Outcome](repeating: .alreadyShown, count: count)
                    for try await (index, outcome) in group { outcomes[index] = outcome }
                    return outcomes
                }
                let deadline = ContinuousClock.now + .seconds(20)
                while ContinuousClock.now < deadline {
                    if try Self.run(store, "SELECT 1 FROM occurrence WHERE state IN ('pending', 'posting')") == 0 { break }
                    try await Task.sleep(for: .milliseconds(100))
                }
                for runner in runners { #expect(await runner.terminate() == 0) }
                var printed: [String: Int] = [:]
                for runner in runners {
                    for key in Self.delivered(runner.drain()) { printed[String(key.split(separator: "@")[0]), default: 0] += 1 }
                }
                var shownAfterCancel: [String] = []
                var inFlightShown = 0
                var inFlightStopped = 0
                var alreadyShownMissing: [String] = []
                for (index, outcome) in outcomes.enumerated() {
                    let id = "race-\(index)"
                    let times = printed[id] ?? 0
                    switch outcome {
                    case .cancelled: if times > 0 { shownAfterCancel.append(id) }
                    case .inFlight: if times > 0 { inFlightShown += 1 } else { inFlightStopped += 1 }
                    case .alreadyShown: if times != 1 { alreadyShownMissing.append(id) }
                    }
                }
                let table = [
                    "| cancel race (\(count) reminders, \(Int(spacing * 1000)) ms apart, cancels at due ±50 ms) | count |", "|---|---|",
                    "| cancelled before any runner claimed it | \(outcomes.filter { $0 == .cancelled }.count) |",
                    "| … shown anyway | \(shownAfterCancel.count) |",
                    "| being posted as the cancel committed | \(outcomes.filter { $0 == .inFlight }.count) |",
                    "| … shown (already on its way) | \(inFlightShown) |",
                    "| … stopped by the runner's last check | \(inFlightStopped) |",
                    "| shown before the cancel came | \(outcomes.filter { $0 == .alreadyShown }.count) |",
                    "| … not shown exactly once | \(alreadyShownMissing.count) |",
                ]
                print(table.joined(separator: "\n"))
                #expect(outcomes.count == count)
                #expect(shownAfterCancel.isEmpty, "shown after their cancel committed: \(shownAfterCancel.prefix(5))")
                #expect(alreadyShownMissing.isEmpty, "\(alreadyShownMissing.prefix(5))")
                #expect(printed.values.allSatisfy { $0 == 1 }, "shown twice: \(printed.filter { $0.value > 1 }.keys.sorted().prefix(5))")
                // The race was run: some cancels came before and some after the post.
                #expect(outcomes.contains(.cancelled) && outcomes.contains(.alreadyShown))
            }
        }
    }
}
