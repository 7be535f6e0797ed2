import CX11
import ChimeCore
import ChimeGateway
import ChimeGtk
import Foundation
import Testing

/// The gate's GTK window, shown by `chime-gate-window` on an Xvfb of each test's own, found and
/// driven with xdotool as a person would: by its title, clicks on its buttons, its keys, and a
/// window manager's close request. Serialized: each test starts an X server and a GTK process,
/// and the figures test measures CPU.
@Suite(.serialized)
struct GateWindowTests {
    static let title = "Chime: a pause before Firefox"

    @Test func withoutADisplayOpenFailsWithItsReasonAndNeverTouchesGTK() {
        do {
            _ = try GtkGateWindow.open(program: "Firefox", environment: ["DISPLAY": "", "PATH": "/usr/bin"])
            Issue.record("open() succeeded without a display")
        } catch {
            #expect(error.code == .noDisplay)
            #expect(error.message.contains("DISPLAY"))
            #expect(error.chimeError.code == .failure)
        }
    }

    @Test func aDisplayNoServerAnswersFailsAsGtkInitFailed() async throws {
        let display = try VirtualDisplay()
        defer { display.stop() }
        // A display number with no server: none listens on its socket.
        let unused = (900..<1000).first { !FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\($0)") } ?? 999
        let gate = try GateWindowProcess(on: display, ["--seconds", "1"], environment: ["DISPLAY": ":\(unused)"])
        defer { gate.stop() }

        #expect(await gate.exitStatus() == 3)
        #expect(gate.lines.first?.hasPrefix("unavailable gtk_init_failed") == true, "\(gate.lines) \(gate.stderr)")
    }

    @Test func theWindowShowsTheGateAndAnswersItsButtonsAndEscape() async throws {
        // Given a gate counting down 3 s, launched with an activation token
        let display = try VirtualDisplay()
        defer { display.stop() }
        let token = "chime-test-\(UUID().uuidString)_TIME0"
        let gate = try GateWindowProcess(
            on: display,
            [
                "--seconds", "3", "--breathing", "Breathe in for four… and out for six.",
                "--focus", "18 min of your focus session left",
            ],
            environment: ["DESKTOP_STARTUP_ID": token]
        )
        defer { gate.stop() }
        let buttons = await gate.buttons()
        try #require(buttons.count == 3, "\(gate.lines) \(gate.stderr)")

        // Then xdotool finds one window by its title, of the window's size, on the screen
        let windows = try display.windows(named: Self.title)
        #expect(windows.count == 1)
        let window = try #require(windows.first)
        let geometry = try display.geometry(of: window)
        #expect(geometry["WIDTH"] == 720)
        #expect(geometry["HEIGHT"] == 540)
        let (x, y) = (try #require(geometry["X"]), try #require(geometry["Y"]))
        #expect(x >= 0 && y >= 0 && x + 720 <= display.width && y + 540 <= display.height)
        // and the window carries the launcher's token (the desktop reads it as _NET_STARTUP_ID)
        #expect(try display.run("/usr/bin/xprop", ["-id", window, "_NET_STARTUP_ID"]).output.contains("\"\(token)\""))
        // and a screenshot shows it drawn with the gate's calm background
        let screenshot = FileManager.default.temporaryDirectory.appendingPathComponent("chime-gate-window.png").path
        #expect(try display.screenshot(to: screenshot) == 0)
        print("Gate window screenshot: \(screenshot)")
        let pixel = try display.run("/usr/bin/convert", [screenshot, "-format", "%[hex:p{\(x + 20),\(y + 20)}]", "info:"]).output
        #expect(pixel == "F4F1EA")

        func click(_ choice: GateChoice) throws {
            let frame = try #require(buttons[choice])
            try display.click(window, x: frame.x + frame.width / 2, y: frame.y + frame.height / 2)
        }

        func key(_ name: String) throws {
            try display.run("/usr/bin/xdotool", ["key", "--window", window, name])
        }

        // When Proceed is clicked, or `p` pressed, during the countdown, nothing is chosen; and
        // Enter or space, pressed as the gate appears, press no button the person did not focus
        try click(.proceed)
        for name in ["p", "Return", "space", "KP_Enter"] { try key(name) }
        try await Task.sleep(for: .milliseconds(500))
        #expect(gate.choices.isEmpty, "\(gate.lines)")

        // When the countdown has run out, Proceed answers, and so does `p`
        #expect(await gate.next("proceed-enabled") != nil)
        try click(.proceed)
        #expect(await gate.next("choice ") == "choice proceed")
        try key("p")
        #expect(await gate.next("choice ") == "choice proceed")

        // Deepen answers and starts the countdown again: Proceed is disabled again, `p` too
        try click(.deepen)
        #expect(await gate.next("choice ") == "choice deepen")
        try click(.proceed)
        try key("p")
        try await Task.sleep(for: .milliseconds(500))
        #expect(gate.choices == [.proceed, .proceed, .deepen])

        // Exit answers
        try click(.exit)
        #expect(await gate.next("choice ") == "choice exit")

        // A first Tab shows the focus without moving it; Tab then moves it to Deepen, and Enter
        // presses the button the person focused
        try key("Tab")
        try key("Tab")
        try key("Return")
        #expect(await gate.next("choice ") == "choice deepen")
        #expect(gate.choices == [.proceed, .proceed, .deepen, .exit, .deepen], "\(gate.lines)")

        // Escape is Exit to Focus, and the window goes: the stream ends, the window is gone
        try key("Escape")
        #expect(await gate.next("choice ") == "choice exit")
        #expect(await gate.next("closed") == "closed")
        #expect(await gate.exitStatus() == 0)
        #expect(try display.windows(named: Self.title).isEmpty)
        // And GTK had nothing to say: no accessibility bus here, and no warning about it
        #expect(!gate.stderr.contains("accessibility bus"), "\(gate.stderr)")
    }

    @Test func aWindowManagersCloseRequestYieldsClosed() async throws {
        let display = try VirtualDisplay()
        defer { display.stop() }
        let gate = try GateWindowProcess(on: display, ["--seconds", "30"])
        defer { gate.stop() }
        try #require(await gate.buttons().count == 3, "\(gate.lines) \(gate.stderr)")
        let window = try #require(try display.windows(named: Self.title).first)

        // WM_DELETE_WINDOW, as a window manager's close button sends it
        #expect(chime_x11_request_close(display.name, try #require(UInt(window))) == 0)

        #expect(await gate.next("choice ") == "choice closed")
        #expect(await gate.exitStatus() == 0)
        #expect(gate.choices == [.closed])
    }

    @Test func aWindowClosedByCloseEndsItsChoicesAndTheNextOpensOnTheSameGtkThread() async throws {
        let display = try VirtualDisplay()
        defer { display.stop() }
        let gate = try GateWindowProcess(on: display, ["--open-twice", "--seconds", "30"])
        defer { gate.stop() }

        #expect(await gate.next("first-window closed") == "first-window closed choices=0", "\(gate.lines) \(gate.stderr)")
        try #require(await gate.buttons().count == 3, "\(gate.lines) \(gate.stderr)")
        #expect(try display.windows(named: Self.title).count == 1)
        try display.run("/usr/bin/xdotool", ["key", "--window", try #require(try display.windows(named: Self.title).first), "Escape"])
        #expect(await gate.next("choice ") == "choice exit")
        #expect(await gate.exitStatus() == 0)
    }

    /// Prints the window's figures: launch to first frame, and its CPU while counting down.
    @Test func figures() async throws {
        let display = try VirtualDisplay()
        defer { display.stop() }
        var sinceOpen: [Double] = []
        var sinceStart: [Double] = []
        for _ in 0..<5 {
            let gate = try GateWindowProcess(on: display, ["--exit-after-first-frame"])
            defer { gate.stop() }
            let line = try #require(await gate.next("first-frame "), "\(gate.lines) \(gate.stderr)")
            sinceOpen.append(try #require(Self.value("since-open-ms", in: line)))
            sinceStart.append(try #require(Self.value("since-process-start-ms", in: line)))
            let status = await gate.exitStatus()
            let shown = status.map(String.init) ?? "none (still running after 10 s)"
            #expect(status == 0, "exit status \(shown): \(gate.lines) \(gate.stderr)")
        }
        var cpu: [Double] = []
        var percent: [Double] = []
        for _ in 0..<3 {
            let gate = try GateWindowProcess(on: display, ["--seconds", "30", "--measure-cpu", "5"])
            defer { gate.stop() }
            let line = try #require(await gate.next("cpu ", timeout: 30), "\(gate.lines) \(gate.stderr)")
            cpu.append(try #require(Self.value("cpu-ms", in: line)))
            percent.append(try #require(Self.value("percent", in: line)))
            #expect(try #require(Self.value("draws", in: line)) >= 40)
            let cpuStatus = await gate.exitStatus()
            #expect(
                cpuStatus == 0,
                "exit status \(cpuStatus.map(String.init) ?? "none (still running after 10 s)"): \(gate.lines) \(gate.stderr)"
            )
        }
        print(
            """
            Gate window figures (debug build, Xvfb; cairo renderer and GDK GL off, the defaults):
              open() → first frame drawn: median \(Self.median(sinceOpen)) ms of \(sinceOpen)
              process start → first frame drawn: median \(Self.median(sinceStart)) ms of \(sinceStart)
              CPU over 5 s of countdown at 10 draws/s: median \(Self.median(cpu)) ms = \(Self.median(percent)) % of one core, of \(cpu)
            """
        )
        #expect(Self.median(sinceOpen) < 2000)
        #expect(Self.median(percent) < 50)
    }

    static func value(_ key: String, in line: String) -> Double? {
        line.split(separator: " ").first { $0.hasPrefix(key + "=") }.flatMap { Double($0.dropFirst(key.count + 1)) }
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }
}
