import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The app's shell (issue 36): how it opens (org.freedesktop.Application on the runner's name,
/// what a D-Bus activatable desktop entry's launcher calls) and how it stays live (the runner's
/// signals, no polling). A real `chime run` on the test's session bus, the real app under Xvfb,
/// driven through the CLI, `gdbus` and AT-SPI. Serialized: each test starts an X server, a bus,
/// a runner and GTK.
@Suite(.serialized)
struct AppShellTests {
    static let chime = AppWindowTests.chime

    /// Whether `names` lists a visible button named Pause (the Focus page's; the Gateway page's
    /// setup has a row of that name too).
    static func showsPause(_ names: String) -> Bool {
        names.split(separator: "\n").contains { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            return fields.count == 4 && fields[1] == "push button" && fields[2] == "Pause" && fields[3].contains("visible")
        }
    }

    /// A runner (`chime run`, console alerts) with `environment`, its output and log in the
    /// display's directory; returned once it owns io.github.chime.Chime on `bus`.
    final class Runner {
        let pid: pid_t
        let log: URL

        init(on display: VirtualDisplay, bus: SessionBus, environment: [String: String]) async throws {
            log = display.directory.appendingPathComponent("runner-\(UUID().uuidString).err")
            pid = try Spawn.start(
                AppShellTests.chime,
                ["run", "--notifier", "console"],
                environment: environment,
                output: display.directory.appendingPathComponent("runner.out").path,
                errors: log.path
            )
            for _ in 0..<200 {
                if bus.owner(of: "io.github.chime.Chime", display: display) == pid { return }
                if Spawn.exited(pid) != nil { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            Spawn.stop(pid)
            throw SpawnError(message: "the runner did not own io.github.chime.Chime: \(text)")
        }

        var text: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

        /// Waits up to `timeout` seconds for the log to contain `fragment`.
        func wait(for fragment: String, timeout: Double = 20) async -> Bool {
            let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
            while ContinuousClock.now < deadline {
                if text.contains(fragment) { return true }
                try? await Task.sleep(for: .milliseconds(50))
            }
            return text.contains(fragment)
        }

        func stop() { Spawn.stop(pid) }
    }

    /// `gdbus call` of org.freedesktop.Application's `method` on the runner: status, output, errors.
    static func callApplication(
        _ method: String,
        _ arguments: [String],
        on display: VirtualDisplay,
        environment: [String: String]
    ) throws -> (status: Int32, output: String, errors: String) {
        let errors = display.directory.appendingPathComponent("gdbus-\(UUID().uuidString).err")
        let (status, output) = try display.run(
            "/usr/bin/gdbus",
            [
                "call", "--session", "--dest", "io.github.chime.Chime", "--object-path", "/io/github/chime/Chime", "--method",
                "org.freedesktop.Application.\(method)",
            ] + arguments,
            environment: environment,
            errors: errors.path
        )
        return (status, output, (try? String(contentsOf: errors, encoding: .utf8)) ?? "")
    }

    /// Stops the app a runner started (not this test's child): by the pid owning its name.
    static func stopApp(on display: VirtualDisplay, bus: SessionBus) {
        guard let pid = bus.owner(of: "io.github.chime.Chime.App", display: display), pid > 1 else { return }
        kill(pid, SIGTERM)
        for _ in 0..<100 where kill(pid, 0) == 0 { usleep(20_000) }
        if kill(pid, 0) == 0 { kill(pid, SIGKILL) }
    }

    @Test func theFocusPageShowsASessionStartedFromTheCommandLineWithoutPolling() async throws {
        // Given a runner on the session bus and the app open on Focus, no session running
        let display = try VirtualDisplay()
        defer { display.stop() }
        let bus = try SessionBus(on: display)
        defer { bus.stop(display: display) }
        let environment = AppWindowTests.environment(display, bus)
        let runner = try await Runner(on: display, bus: bus, environment: environment)
        defer { runner.stop() }
        let app = try GateWindowProcess(on: display, ["app", "focus"], environment: environment)
        defer { app.stop() }
        #expect(await app.next("presented ") == "presented page=focus", "\(app.lines) \(app.stderr)")
        let ready = try await Accessibility.wait(["has", "Plant Tree"], on: display, environment: environment) { status, _ in status == 0 }
        #expect(!ready.isEmpty, "no Plant Tree: \(app.stderr)")
        #expect(!Self.showsPause(try Accessibility.run(["names"], on: display, environment: environment).output))

        // When a session starts from the command line (another process: the runner is poked,
        // and signals Changed and the Focus property)
        let (started, output) = try display.run(Self.chime, ["focus", "start"], environment: environment)
        #expect(started == 0, "\(output)")

        // Then the page shows it, the app having been told: Pause, and the countdown running
        let pause = try await Accessibility.wait(["names"], on: display, environment: environment) { _, names in Self.showsPause(names) }
        #expect(Self.showsPause(pause), "the Focus page did not show the session: \(runner.text)")
        // (25:00 is also the idle page's: the countdown has ticked once the page has the session.)
        let countdown = try await Accessibility.wait(["text", "Time left"], on: display, environment: environment) { _, output in
            output.hasPrefix("24:")
        }
        #expect(countdown.hasPrefix("24:"), "\(countdown)")

        // When it is given up from the command line, the page offers to plant again
        #expect(try display.run(Self.chime, ["focus", "give-up", "--yes"], environment: environment).status == 0)
        let pauseLeft = try await Accessibility.wait(["names"], on: display, environment: environment) { _, names in !Self.showsPause(names)
        }
        #expect(!Self.showsPause(pauseLeft), "the Focus page did not show the session given up")
        #expect(try Accessibility.run(["has", "Plant Tree"], on: display, environment: environment).status == 0)
    }

    @Test func activateActionOpenOnTheRunnerRaisesTheOpenAppAtThatPage() async throws {
        let display = try VirtualDisplay()
        defer { display.stop() }
        let bus = try SessionBus(on: display)
        defer { bus.stop(display: display) }
        let environment = AppWindowTests.environment(display, bus)
        let runner = try await Runner(on: display, bus: bus, environment: environment)
        defer { runner.stop() }
        let app = try GateWindowProcess(on: display, ["app"], environment: environment)
        defer { app.stop() }
        #expect(await app.next("presented ") == "presented page=today", "\(app.lines) \(app.stderr)")

        // What a launcher calls for the desktop entry's action, on the runner's name
        let call = try Self.callApplication("ActivateAction", ["open", "[<'doses'>]", "{}"], on: display, environment: environment)
        #expect(call.status == 0, "\(call.errors)")
        #expect(await app.next("presented ") == "presented page=doses", "\(app.lines) \(runner.text)")
        // A page's name is an action too (the desktop entry's Actions), and Activate raises it as it is
        #expect(try Self.callApplication("ActivateAction", ["focus", "[]", "{}"], on: display, environment: environment).status == 0)
        #expect(await app.next("presented ") == "presented page=focus")
        #expect(try Self.callApplication("Activate", ["{}"], on: display, environment: environment).status == 0)
        #expect(await app.next("presented ") == "presented page=focus")
        #expect(try display.windows(named: "Chime").count >= 1)

        // Bad calls are errors naming what is accepted; Open is not supported
        let badPage = try Self.callApplication("ActivateAction", ["open", "[<'settings'>]", "{}"], on: display, environment: environment)
        #expect(badPage.status != 0)
        #expect(
            badPage.errors.contains("io.github.chime.Chime.Error.Invalid") && badPage.errors.contains("'settings'"),
            "\(badPage.errors)"
        )
        let badAction = try Self.callApplication("ActivateAction", ["quit", "[]", "{}"], on: display, environment: environment)
        #expect(badAction.errors.contains("invalid action 'quit'"), "\(badAction.errors)")
        let open = try Self.callApplication("Open", ["['file:///tmp/x']", "{}"], on: display, environment: environment)
        #expect(open.status != 0 && open.errors.contains("org.freedesktop.DBus.Error.NotSupported"), "\(open.errors)")
        #expect(Spawn.exited(runner.pid) == nil)
    }

    @Test func activateOnTheRunnerStartsTheAppWhenNoneIsOpen() async throws {
        let display = try VirtualDisplay()
        defer { display.stop() }
        let bus = try SessionBus(on: display)
        defer { bus.stop(display: display) }
        let environment = AppWindowTests.environment(display, bus)
        let runner = try await Runner(on: display, bus: bus, environment: environment)
        defer { runner.stop() }
        defer { Self.stopApp(on: display, bus: bus) }

        let call = try Self.callApplication("ActivateAction", ["open", "[<'doses'>]", "{}"], on: display, environment: environment)
        #expect(call.status == 0, "\(call.errors)")
        // The app the runner started writes into the runner's log
        #expect(await runner.wait(for: "presented page=doses"), "\(runner.text)")
        #expect(runner.text.contains("App started at doses"), "\(runner.text)")
        #expect(bus.owner(of: "io.github.chime.Chime.App", display: display) != nil)
        let windows = try await Accessibility.wait(["windows", "Chime"], on: display, environment: environment) { _, output in
            output.trimmingCharacters(in: .whitespacesAndNewlines) == "1"
        }
        #expect(windows.trimmingCharacters(in: .whitespacesAndNewlines) == "1")

        // A second Activate raises that window rather than starting another
        #expect(try Self.callApplication("Activate", ["{}"], on: display, environment: environment).status == 0)
        #expect(await runner.wait(for: "App presented"), "\(runner.text)")
        #expect(runner.text.components(separatedBy: "App started").count == 2, "\(runner.text)")
    }

    @Test func withoutADisplayActivateAnswersAnErrorSayingSoAndTheRunnerGoesOn() async throws {
        let display = try VirtualDisplay()
        defer { display.stop() }
        let bus = try SessionBus(on: display)
        defer { bus.stop(display: display) }
        var environment = AppWindowTests.environment(display, bus)
        environment["DISPLAY"] = nil
        environment["WAYLAND_DISPLAY"] = nil
        let runner = try await Runner(on: display, bus: bus, environment: environment)
        defer { runner.stop() }

        let call = try Self.callApplication("Activate", ["{}"], on: display, environment: environment)
        #expect(call.status != 0)
        #expect(call.errors.contains("io.github.chime.Chime.Error.Failed") && call.errors.contains("no display"), "\(call.errors)")
        #expect(await runner.wait(for: "App not opened: no display"), "\(runner.text)")
        // Still serving
        let list = try display.run(
            "/usr/bin/gdbus",
            [
                "call", "--session", "--dest", "io.github.chime.Chime", "--object-path", "/io/github/chime/Chime", "--method",
                "io.github.chime.Chime.Reminders1.List",
            ],
            environment: environment
        )
        #expect(list.status == 0 && list.output.contains("@aa{sv} []"), "\(list.output)")
        #expect(Spawn.exited(runner.pid) == nil)
    }
}
