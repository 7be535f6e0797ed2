import Foundation
import Testing

/// The app with the keyboard alone: the pages' shortcuts (Alt+1 … Alt+5, GNOME's tabs'), the
/// buttons' mnemonics (Alt+P plants, Alt+G gives up, and the dialog's Alt+G confirms), sent as a
/// person types them (xdotool's `key` through XTEST, to the focused window), checked with AT-SPI
/// and `chime focus status --json`. Serialized: each test starts an X server, a bus and GTK.
@Suite(.serialized)
struct AppKeyboardTests {
    static var chime: String { AppWindowTests.chime }

    /// Types `keys` (xdotool key names: `alt+3`) into the Chime window, focused first.
    static func type(_ keys: String..., on display: VirtualDisplay) throws {
        let window = try #require(try display.windows(named: "Chime").first)
        _ = try display.run("/usr/bin/xdotool", ["windowactivate", "--sync", window])
        _ = try display.run("/usr/bin/xdotool", ["windowfocus", "--sync", window])
        for key in keys {
            _ = try display.run("/usr/bin/xdotool", ["key", "--clearmodifiers", key])
            usleep(150_000)
        }
    }

    /// The page tab AT-SPI says is selected (`selected-tab`).
    static func shownPage(_ display: VirtualDisplay, _ environment: [String: String], until wanted: String) async throws -> String {
        try await Accessibility.wait(["selected-tab"], on: display, environment: environment) { _, output in
            output.trimmingCharacters(in: .whitespacesAndNewlines) == wanted
        }.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The focus session's state, as `chime focus status --json` says it, once it is `wanted`
    /// (or what it was after 10 s).
    static func focusState(_ display: VirtualDisplay, _ environment: [String: String], until wanted: String) async throws -> String {
        var state = ""
        for _ in 0..<40 {
            let report = try display.run(chime, ["focus", "status", "--json"], environment: environment).output
            let json = try JSONSerialization.jsonObject(with: Data(report.utf8)) as? [String: Any]
            state = ((json?["session"] as? [String: Any])?["state"] as? String) ?? ""
            if state == wanted { break }
            try await Task.sleep(for: .milliseconds(250))
        }
        return state
    }

    @Test func thePagesShortcutsAndTheFocusButtonsMnemonicsPlantAndGiveUp() async throws {
        // Given the app at Today
        let display = try VirtualDisplay()
        defer { display.stop() }
        let bus = try SessionBus(on: display)
        defer { bus.stop(display: display) }
        let environment = AppWindowTests.environment(display, bus)
        let app = try GateWindowProcess(on: display, ["app", "today"], environment: environment)
        defer { app.stop() }
        #expect(await app.next("presented ") == "presented page=today", "\(app.lines) \(app.stderr)")
        #expect(try await Self.shownPage(display, environment, until: "Today") == "Today", "\(app.stderr)")

        // When the person presses Alt+3: the Focus page
        try Self.type("alt+3", on: display)
        #expect(try await Self.shownPage(display, environment, until: "Focus") == "Focus")

        // When they press Alt+P (Plant Tree's mnemonic): a session runs
        try Self.type("alt+p", on: display)
        #expect(try await Self.focusState(display, environment, until: "active") == "active")

        // When they press Alt+G (Give Up), then Alt+G in the dialog (its Give Up): given up
        try Self.type("alt+g", on: display)
        _ = try await Accessibility.wait(["has", "Give Up?", "dialog"], on: display, environment: environment) { status, _ in status == 0 }
        let dialog = try #require(try display.windows(named: "Give Up?").first ?? display.windows(named: "").last)
        _ = try display.run("/usr/bin/xdotool", ["windowfocus", "--sync", dialog])
        _ = try display.run("/usr/bin/xdotool", ["key", "--clearmodifiers", "alt+g"])
        #expect(try await Self.focusState(display, environment, until: "abandoned") == "abandoned")

        // When they press Alt+4: the Doses page
        try Self.type("alt+4", on: display)
        #expect(try await Self.shownPage(display, environment, until: "Doses") == "Doses")
        // When they press Alt+2, then Alt+N (New Reminder): the Reminders page's form opens
        try Self.type("alt+2", on: display)
        #expect(try await Self.shownPage(display, environment, until: "Reminders") == "Reminders")
        try Self.type("alt+n", on: display)
        let opened = try await Accessibility.wait(["has", "Reminder form"], on: display, environment: environment) { status, _ in
            status == 0
        }
        #expect(!opened.isEmpty, "Alt+N opened no form")
        // And Escape closes it
        try Self.type("Escape", on: display)
        let closed = try await Accessibility.wait(["has", "Reminder form"], on: display, environment: environment) { status, _ in
            status != 0
        }
        #expect(closed.isEmpty, "Escape left the form open: \(closed)")
        // And Alt+5, Alt+1: Gateway, Today
        for (key, page) in [("alt+5", "Gateway"), ("alt+1", "Today")] {
            try Self.type(key, on: display)
            #expect(try await Self.shownPage(display, environment, until: page) == page)
        }
    }
}
