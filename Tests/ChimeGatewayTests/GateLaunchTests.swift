import ChimeCore
import ChimeGateway
import ChimeStore
import ChimeTesting
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A gated launch from the grace check to the decision, on a real store, a manual clock and a
/// recording surface: what starts the program, what does not, and what is recorded.
@Suite(.serialized) struct GateLaunchTests {
    static let quote = Quote(text: "Well begun is half done.", author: "Aristotle", source: "Politics", interest: .productivity)

    final class Given: Sendable {
        let directory: URL
        let clock = ManualWallClock(now: Date(timeIntervalSince1970: 1_800_000_000))
        let book: GateBook
        let ticker = ManualTicker()

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("chime-launch-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            book = GateBook(
                store: try ReminderStore(path: directory.appendingPathComponent("chime.sqlite").path, schemas: [.gateway]),
                clock: clock
            )
        }

        deinit { try? FileManager.default.removeItem(at: directory) }

        func launch() -> GateLaunch {
            GateLaunch(
                programID: "firefox.desktop",
                name: "Firefox",
                book: book,
                quotes: QuoteLibrary(quotes: [.productivity: [GateLaunchTests.quote]]),
                clock: clock,
                ticker: ticker,
                lockDirectory: directory.appendingPathComponent("run").path
            )
        }
    }

    struct Unavailable: Error {}

    @Test func noSurfaceStartsTheProgramAndRecordsWhy() async throws {
        let given = try Given()
        let decision = try await given.launch().run(surfaces: [
            { _ in throw ChimeError(.failure, "no display") }, { _ in throw ChimeError(.failure, "no terminal") },
        ])
        #expect(decision == .start(notGated: "no display; no terminal"))
        #expect(try given.book.events().map(\.outcome) == [.notGated(reason: "no display; no terminal")])
    }

    @Test func exitStartsNothingAndRecordsTheExitWithItsQuote() async throws {
        let given = try Given()
        let surface = RecordingSurface()
        let running = Task { try await given.launch().run(surfaces: [{ _ in surface }]) }
        let first = await surface.drawn(1)
        #expect(first.program == "Firefox")
        #expect(first.quote == Self.quote)
        #expect(!first.proceedEnabled)
        given.clock.advance(by: 12)
        surface.send(.exit)
        #expect(try await running.value == .stay(.exit))
        let events = try given.book.events()
        #expect(events.map(\.outcome) == [.exit])
        #expect(events.first?.pauseSeconds == 12)
        #expect(events.first?.quote == Self.quote)
    }

    @Test func proceedAfterTheCountdownStartsTheProgramThenTheGraceSkipsTheGate() async throws {
        let given = try Given()
        let surface = RecordingSurface()
        let running = Task { try await given.launch().run(surfaces: [{ _ in surface }]) }
        _ = await surface.drawn(1)
        given.clock.advance(by: 30)
        surface.send(.proceed)
        #expect(try await running.value == .start(notGated: nil))

        // Within the grace (10 min by default): no gate, and the event says why
        given.clock.advance(by: 599)
        let again = try await given.launch().run(surfaces: [
            { _ in
                Issue.record("no gate in the grace")
                return RecordingSurface()
            }
        ])
        #expect(again == .start(notGated: "grace after Proceed (1s left)"))
        // At its end: the gate again
        given.clock.advance(by: 1)
        let third = try await given.launch().run(surfaces: [{ _ in throw ChimeError(.failure, "gate shown") }])
        #expect(third == .start(notGated: "gate shown"))
    }

    @Test func aGateThatBreaksStartsTheProgramAndSaysWhy() async throws {
        let given = try Given()
        let surface = RecordingSurface()
        let running = Task { try await given.launch().run(surfaces: [{ _ in surface }]) }
        _ = await surface.drawn(1)
        given.clock.advance(by: 3)
        surface.failing.withLock { $0 = "the gate window ended unexpectedly" }
        surface.finish()
        #expect(try await running.value == .start(notGated: "the gate window ended unexpectedly"))
        #expect(try given.book.events().map(\.outcome) == [.notGated(reason: "the gate window ended unexpectedly")])
    }

    @Test func aGateClosedByThePersonStartsNothing() async throws {
        let given = try Given()
        let surface = RecordingSurface()
        let running = Task { try await given.launch().run(surfaces: [{ _ in surface }]) }
        _ = await surface.drawn(1)
        surface.finish()
        #expect(try await running.value == .stay(.closed))
        #expect(try given.book.events().map(\.outcome) == [.closed])
    }

    @Test func aSecondLaunchRaisesTheOpenGateAndStartsNothing() async throws {
        let given = try Given()
        let surface = RecordingSurface()
        let first = Task { try await given.launch().run(surfaces: [{ _ in surface }]) }
        _ = await surface.drawn(1)

        let second = try await given.launch().run(surfaces: [
            { _ in
                Issue.record("a second gate")
                return RecordingSurface()
            }
        ])
        #expect(second == .alreadyOpen(pid: getpid()))
        // The open gate was asked to come to the front (SIGUSR1 to its process: this one)
        let deadline = Date().addingTimeInterval(15)
        while surface.raised == 0, Date() < deadline { await Task.yield() }
        #expect(surface.raised == 1)

        surface.send(.closed)
        #expect(try await first.value == .stay(.closed))
        // The lock went with the gate: the next launch shows one
        let third = try await given.launch().run(surfaces: [{ _ in throw ChimeError(.failure, "shown") }])
        #expect(third == .start(notGated: "shown"))
    }
}
