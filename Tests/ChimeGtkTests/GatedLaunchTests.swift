import ChimeGateway
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The whole gateway on a virtual display: a program gated with `chime gate add`, launched by
/// its desktop entry with `gio launch` (as a desktop's menu does), shows the real GTK window of
/// `chime gate open`; Proceed, clicked with xdotool once the countdown has run out, starts the
/// program with the arguments the launcher gave it; Exit leaves it unstarted. Every process
/// has the display's own home and XDG directories.
@Suite(.serialized) struct GatedLaunchTests {
    static let title = "Chime: a pause before Test Program"
    static let quote = (
        text: "We suffer more often in imagination than in reality.", author: "Seneca",
        source: "Letters to Lucilius, 13, tr. Richard M. Gummere, 1917"
    )

    static var chime: String {
        (GateWindowProcess.executable as NSString).deletingLastPathComponent + "/chime"
    }

    /// A display, a store, one quote for every interest, and a program that writes the
    /// arguments it was started with into `started.txt`, gated.
    final class Given {
        let display: VirtualDisplay
        let root: URL
        let environment: [String: String]
        var started: URL { root.appendingPathComponent("started.txt") }
        /// The started program's blocked and ignored signals (its /proc status lines).
        var signals: URL { root.appendingPathComponent("signals.txt") }
        var entry: String { environment["XDG_DATA_HOME"]! + "/applications/chime-test-program.desktop" }

        init() throws {
            display = try VirtualDisplay()
            root = display.directory.appendingPathComponent("world")
            let applications = root.appendingPathComponent("share/applications")
            try FileManager.default.createDirectory(at: applications, withIntermediateDirectories: true)
            var environment = display.environment
            environment["XDG_DATA_DIRS"] = root.appendingPathComponent("share").path + ":/usr/share"
            environment["CHIME_STORE"] = root.appendingPathComponent("chime.sqlite").path
            self.environment = environment
            let quotes = URL(fileURLWithPath: environment["XDG_DATA_HOME"]!).appendingPathComponent("chime/quotes")
            try FileManager.default.createDirectory(at: quotes, withIntermediateDirectories: true)
            for interest in Interest.allCases {
                try "\(quote.text)\t\(quote.author)\t\(quote.source)\n".write(
                    to: quotes.appendingPathComponent(QuoteLibrary.fileName(interest)),
                    atomically: true,
                    encoding: .utf8
                )
            }
            let program = root.appendingPathComponent("test-program")
            try """
            #!/bin/sh
            # (The shell's builtins alone: while it waits for a child, dash blocks every signal.)
            while read -r key value; do case "$key" in SigBlk:|SigIgn:) printf '%s\\t%s\\n' "$key" "$value" ;; esac; done < /proc/$$/status > '\(signals.path)'
            for argument in "$@"; do printf '%s\\n' "$argument"; done > '\(started.path)'
            """.write(to: program, atomically: true, encoding: .utf8)
            chmod(program.path, 0o755)
            try """
            [Desktop Entry]
            Type=Application
            Name=Test Program
            Exec=\(program.path) %U
            """.write(to: applications.appendingPathComponent("chime-test-program.desktop"), atomically: true, encoding: .utf8)
        }

        func chime(_ arguments: String...) throws -> (status: Int32, output: String) {
            try display.run(GatedLaunchTests.chime, arguments, environment: environment)
        }

        /// Where the errors of `gio launch` and of what it starts (`chime gate open`, the
        /// window) go: a failure's message shows them.
        var errors: String { root.appendingPathComponent("launched.err").path }

        /// `gio launch` of the gated entry with `arguments`, as a launcher does (it returns
        /// once the program, here `chime gate open`, is started).
        func launch(_ arguments: [String]) throws {
            let status = try display.run("/usr/bin/gio", ["launch", entry] + arguments, environment: environment, errors: errors).status
            #expect(status == 0)
        }

        /// The gate's window, once shown. A deadline, not a pause: a loaded machine may take
        /// long to start GTK, and a failure says what ran and what it wrote.
        func window(timeout: Double = 45) async throws -> String {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                if let window = try display.windows(named: GatedLaunchTests.title).first { return window }
                try await Task.sleep(for: .milliseconds(50))
            }
            let written = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
            throw SpawnError(
                message:
                    "no gate window within \(timeout) s; windows: \(display.windowNames()); errors of the launch: \(written.isEmpty ? "none" : written)"
            )
        }

        /// The buttons of a gate window showing this quote, from `chime-gate-window` itself.
        func buttons() async throws -> [GateChoice: (x: Int, y: Int, width: Int, height: Int)] {
            let probe = try GateWindowProcess(
                on: display,
                [
                    "--program", "Test Program", "--quote", GatedLaunchTests.quote.text, "--author", GatedLaunchTests.quote.author,
                    "--source", GatedLaunchTests.quote.source, "--exit-after-first-frame",
                ],
                environment: environment
            )
            defer { probe.stop() }
            let buttons = await probe.buttons()
            #expect(await probe.exitStatus() == 0)
            return buttons
        }

        func stats() throws -> [String: Any] {
            let output = try chime("gate", "stats", "--json").output
            return try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any] ?? [:]
        }
    }

    @Test func proceedStartsTheProgramWithItsArgumentsOnlyOnceTheCountdownHasRunOut() async throws {
        let given = try Given()
        defer { given.display.stop() }
        #expect(try given.chime("gate", "setup", "--pause", "4s", "--grace", "0s").status == 0)
        let added = try given.chime("gate", "add", "chime-test-program")
        #expect(added.status == 0, "\(added.output)")
        let buttons = try await given.buttons()
        let proceed = try #require(buttons[.proceed])

        // When the launcher starts it with a file and a URL
        let file = given.root.appendingPathComponent("notes with space.txt").path
        let launched = Date()
        try given.launch([file, "https://example.org/?q=a"])
        let window = try await given.window()
        let shownAfter = Date().timeIntervalSince(launched)

        // Then the gate shows: a screenshot to look at
        let screenshot = FileManager.default.temporaryDirectory.appendingPathComponent("chime-gated-launch.png").path
        #expect(try given.display.screenshot(to: screenshot) == 0)
        print("Gated launch screenshot: \(screenshot)")

        // and Proceed during the countdown starts nothing (checked when the window came well
        // within the 4 s pause: a loaded machine may show it late)
        if shownAfter < 2.5 {
            try given.display.click(window, x: proceed.x + proceed.width / 2, y: proceed.y + proceed.height / 2)
            try await Task.sleep(for: .milliseconds(300))
            #expect(!FileManager.default.fileExists(atPath: given.started.path))
        }

        // When the countdown has run out, Proceed starts the program with the launcher's arguments
        let deadline = Date().addingTimeInterval(15)
        while !FileManager.default.fileExists(atPath: given.started.path), Date() < deadline {
            try given.display.click(window, x: proceed.x + proceed.width / 2, y: proceed.y + proceed.height / 2)
            try await Task.sleep(for: .milliseconds(250))
        }
        try await Task.sleep(for: .milliseconds(200))
        let arguments = try String(contentsOf: given.started, encoding: .utf8).split(separator: "\n").map(String.init)
        // (GLib gives a local file as its path for %U, as it does without a gate: it passes
        // through chime untouched, space and all)
        #expect(arguments == [file, "https://example.org/?q=a"])
        // with the signals a launcher gives: SIGTERM not blocked, SIGINT not ignored (chime's
        // own would otherwise stay so across its exec)
        let masks = try String(contentsOf: given.signals, encoding: .utf8).split(separator: "\n").reduce(into: [String: UInt64]()) {
            let fields = $1.split(separator: "\t")
            if fields.count == 2 { $0[String(fields[0])] = UInt64(fields[1], radix: 16) }
        }
        #expect(masks["SigBlk:"].map { $0 & (1 << (UInt64(SIGTERM) - 1)) == 0 } == true, "\(masks)")
        #expect(masks["SigIgn:"].map { $0 & (1 << (UInt64(SIGINT) - 1)) == 0 } == true, "\(masks)")
        #expect(try given.display.windows(named: Self.title).isEmpty)
        // and the gate recorded a Proceed after the whole pause, never before it
        let stats = try given.stats()
        #expect(stats["proceeds"] as? Int == 1)
        #expect((stats["average_pause_s"] as? Double ?? 0) >= 4)
    }

    @Test func exitLeavesTheProgramUnstartedAndCountsAConsciousExit() async throws {
        let given = try Given()
        defer { given.display.stop() }
        #expect(try given.chime("gate", "setup", "--pause", "30s").status == 0)
        #expect(try given.chime("gate", "add", "chime-test-program").status == 0)
        let buttons = try await given.buttons()
        let exit = try #require(buttons[.exit])

        try given.launch([])
        let window = try await given.window()
        try given.display.click(window, x: exit.x + exit.width / 2, y: exit.y + exit.height / 2)

        let deadline = Date().addingTimeInterval(10)
        while try given.stats()["conscious_exits"] as? Int != 1, Date() < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(try given.stats()["conscious_exits"] as? Int == 1)
        #expect(try given.display.windows(named: Self.title).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: given.started.path))

        // And un-gating puts the launcher back as it was
        #expect(try given.chime("gate", "remove", "chime-test-program").status == 0)
        #expect(!FileManager.default.fileExists(atPath: given.entry))
    }
}
