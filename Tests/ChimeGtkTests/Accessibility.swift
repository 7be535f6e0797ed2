import ChimeTesting
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A session bus of a test's own (dbus-daemon, on `run/bus` under the display's directory), where
/// the accessibility bus (at-spi2-core's org.a11y.Bus, activatable from /usr/share) starts on
/// demand: what GTK's accessibility bridge and AT-SPI clients need. Stopped by pid: the bus
/// launcher's (found on the bus), then the daemon's.
final class SessionBus {
    let pid: pid_t
    let address: String
    private let environment: [String: String]

    init(on display: VirtualDisplay) throws {
        var environment = display.environment
        let socket = URL(fileURLWithPath: environment["XDG_RUNTIME_DIR"]!).appendingPathComponent("bus").path
        address = "unix:path=\(socket)"
        // Activatable services (org.a11y.Bus) from the system's data directory.
        environment["XDG_DATA_DIRS"] = "/usr/share"
        let printed = display.directory.appendingPathComponent("bus-address")
        pid = try Spawn.start(
            "/usr/bin/dbus-daemon",
            ["--session", "--nofork", "--nopidfile", "--address=\(address)", "--print-address=1"],
            environment: environment,
            output: printed.path,
            errors: display.directory.appendingPathComponent("dbus.log").path
        )
        environment["DBUS_SESSION_BUS_ADDRESS"] = address
        self.environment = environment
        for _ in 0..<250 {
            if ((try? String(contentsOf: printed, encoding: .utf8)) ?? "").hasSuffix("\n") { return }
            if Spawn.exited(pid) != nil { break }
            usleep(20_000)
        }
        Spawn.stop(pid)
        throw SpawnError(message: "dbus-daemon printed no address")
    }

    deinit { Spawn.stop(pid) }

    /// The pid of the connection owning `name` on this bus, if any.
    func owner(of name: String, display: VirtualDisplay) -> pid_t? {
        let answer = try? display.run(
            "/usr/bin/gdbus",
            [
                "call", "--session", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus", "--method",
                "org.freedesktop.DBus.GetConnectionUnixProcessID", name,
            ],
            environment: environment
        )
        guard let answer, answer.status == 0 else { return nil }
        // "(uint32 1234,)"
        guard let range = answer.output.range(of: "uint32 ") else { return nil }
        return pid_t(answer.output[range.upperBound...].prefix(while: \.isNumber))
    }

    /// Stops the accessibility bus's launcher (which ends the bus it started), then the daemon.
    func stop(display: VirtualDisplay) {
        if let launcher = owner(of: "org.a11y.Bus", display: display), launcher > 1 { kill(launcher, SIGTERM) }
        Spawn.stop(pid)
    }
}

/// AT-SPI, as a person's assistive technology drives the app: a Python script on Debian's
/// python3-pyatspi, run once per step, finding what it acts on by accessible name.
enum Accessibility {
    /// `names`: every accessible of the windows named `Chime` and their dialogs, one
    /// `window<TAB>role<TAB>name<TAB>states` line each. `windows TITLE`: how many frames of all
    /// applications are named TITLE. `click NAME [dialog]`: presses the visible, enabled accessible
    /// named NAME (a button, page tab, check box, switch, list or menu item; in a window not named
    /// Chime with `dialog`). `set NAME TEXT [dialog]`: replaces an editable accessible's text. `has
    /// NAME [dialog] [button]`: exits 0, printing role and states, when a visible accessible (with
    /// `button`, a button) is so named. `text
    /// DESCRIPTION`: the name of the accessible so described (GTK 4.8 names a label by its text,
    /// and its AT-SPI Text interface answers nothing). `description NAME [dialog]`: its
    /// description. `selected-tab`: the page tab selected. `entry-set NAME TEXT [dialog]`, `entry-activate NAME [dialog]` (a click, Enter) and
    /// `entry-description NAME [dialog]`: a field's entry, by name among editable accessibles.
    static let script = #"""
        import sys, time
        import pyatspi

        def windows():
            desktop = pyatspi.Registry.getDesktop(0)
            for app in desktop:
                if app is None:
                    continue
                for window in app:
                    if window is not None:
                        yield app, window

        def walk(node, depth=0):
            yield node
            if depth > 60:
                return
            for index in range(node.childCount):
                child = node.getChildAtIndex(index)
                if child is not None:
                    yield from walk(child, depth + 1)

        def chime_windows():
            found = [w for app, w in windows() if w.name == "Chime"]
            others = [w for app, w in windows() if w.name != "Chime" and any(x.name == "Chime" for x in app)]
            return found, others

        def states(node):
            state = node.getState()
            return ",".join(name for name, value in [("visible", pyatspi.STATE_VISIBLE), ("sensitive", pyatspi.STATE_SENSITIVE),
                                                       ("checked", pyatspi.STATE_CHECKED)] if state.contains(value))

        # Roles besides buttons that `click` presses.
        PRESSABLE = ("page tab", "check box", "switch", "radio button", "menu item", "list item", "toggle button", "link")

        def find(name, in_dialog, pressable=False):
            """The first visible accessible named `name` (in a Chime window, or with `in_dialog` in
            another window of the app: a dialog); with `pressable`, a button of some kind."""
            found, others = chime_windows()
            for window in (others if in_dialog else found):
                for node in walk(window):
                    if node.name.replace("_", "") == name and node.getState().contains(pyatspi.STATE_VISIBLE):
                        role = node.getRoleName()
                        if not pressable or "button" in role:
                            return node
            return None

        command = sys.argv[1]
        if command == "windows":
            print(sum(1 for app, w in windows() if w.name == sys.argv[2]))
        elif command == "names":
            found, others = chime_windows()
            for window in found + others:
                for node in walk(window):
                    print("%s\t%s\t%s\t%s" % (window.name, node.getRoleName(), node.name, states(node)))
        elif command == "click":
            name = sys.argv[2]
            in_dialog = len(sys.argv) > 3 and sys.argv[3] == "dialog"
            found, others = chime_windows()
            for window in (others if in_dialog else found):
                for node in walk(window):
                    state = node.getState()
                    # A button's name, or (where the toolkit gives it none) its label's. GTK 4.8
                    # names a button by its label property (mnemonic underscore included) and then
                    # its content: "_Give Up Give Up".
                    spoken = node.name.replace("_", "")
                    named = spoken in (name, name + " " + name) or (not node.name and any(
                        node.getChildAtIndex(i) is not None and node.getChildAtIndex(i).name == name for i in range(node.childCount)))
                    pressable = "button" in node.getRoleName() or node.getRoleName() in PRESSABLE
                    if named and pressable and state.contains(pyatspi.STATE_VISIBLE) and state.contains(pyatspi.STATE_SENSITIVE):
                        try:
                            action = node.queryAction()
                        except NotImplementedError:
                            continue
                        if action.nActions > 0:
                            action.doAction(0)
                            print("clicked %s" % node.getRoleName())
                            sys.exit(0)
            print("no visible, enabled accessible named %r" % name)
            sys.exit(1)
        elif command == "set":
            # `set NAME TEXT [dialog]`: replaces the text of the editable accessible named NAME
            # (an entry, given its name by an accessible label or its row's title).
            node = find(sys.argv[2], len(sys.argv) > 4 and sys.argv[4] == "dialog")
            if node is None:
                print("no visible accessible named %r" % sys.argv[2])
                sys.exit(1)
            try:
                editable = node.queryEditableText()
            except NotImplementedError:
                print("%r (%s) is not editable" % (sys.argv[2], node.getRoleName()))
                sys.exit(1)
            editable.setTextContents(sys.argv[3])
            print("set %s" % node.getRoleName())
        elif command == "has":
            # `has NAME [dialog] [button]`: exit 0 and the role and states when a visible
            # accessible is named NAME (with `button`: a button of some kind).
            node = find(sys.argv[2], "dialog" in sys.argv[3:], "button" in sys.argv[3:])
            if node is None:
                sys.exit(1)
            print("%s\t%s" % (node.getRoleName(), states(node)))
        elif command == "text":
            found, others = chime_windows()
            for window in found:
                for node in walk(window):
                    if node.description == sys.argv[2]:
                        print(node.name)
                        sys.exit(0)
            sys.exit(1)
        elif command == "description":
            # `description NAME [dialog]`: the description of the visible accessible named NAME
            # (an entry's help or error, a chart's figures).
            node = find(sys.argv[2], len(sys.argv) > 3 and sys.argv[3] == "dialog")
            if node is None:
                print("no visible accessible named %r" % sys.argv[2])
                sys.exit(1)
            print(node.description)
        elif command in ("entry-set", "entry-activate", "entry-description"):
            # A field's entry, found by name among editable accessibles only (its row has the
            # same name): `entry-set NAME TEXT [dialog]` replaces its text; `entry-activate NAME
            # [dialog]` clicks in it and presses Enter (xdotool), as a person applies a field;
            # `entry-description NAME [dialog]` prints its description (its help, or its error).
            name = sys.argv[2]
            in_dialog = sys.argv[-1] == "dialog" and len(sys.argv) > (4 if command == "entry-set" else 3)
            found, others = chime_windows()
            node = None
            # The first visible one (a form's entry, past the visible label of the same words).
            for window in (others if in_dialog else found):
                for candidate in walk(window):
                    if candidate.name.replace("_", "") == name and candidate.getRoleName() in ("text", "entry", "password text", "spin button") \
                            and candidate.getState().contains(pyatspi.STATE_VISIBLE):
                        node = candidate
                        break
                if node is not None:
                    break
            if node is None:
                print("no entry named %r" % name)
                sys.exit(1)
            if command == "entry-set":
                node.queryEditableText().setTextContents(sys.argv[3])
                print("set %s" % node.getRoleName())
            elif command == "entry-description":
                print(node.description)
            else:
                # AT-SPI cannot focus it (GTK 4.8), nor does its "activate" action emit the
                # entry's: a click in it, then Enter, on the X window of that title.
                import subprocess
                title = window.name
                extents = node.queryComponent().getExtents(pyatspi.WINDOW_COORDS)
                ids = subprocess.run(["/usr/bin/xdotool", "search", "--onlyvisible", "--name", "^%s$" % title],
                                     capture_output=True, text=True).stdout.split()
                if not ids:
                    print("no X window named %r" % title)
                    sys.exit(1)
                x, y = extents.x + extents.width // 2, extents.y + extents.height // 2
                subprocess.run(["/usr/bin/xdotool", "mousemove", "--window", ids[-1], str(x), str(y), "click", "1"], check=True)
                time.sleep(0.3)
                subprocess.run(["/usr/bin/xdotool", "key", "Return"], check=True)
                print("activated %s" % node.getRoleName())
        elif command == "selected-tab":
            # `selected-tab`: the name of the Chime window's page tab that is selected (the page
            # shown); exit 1 when none is.
            found, others = chime_windows()
            for window in found:
                for node in walk(window):
                    state = node.getState()
                    if node.getRoleName() == "page tab" and (state.contains(pyatspi.STATE_SELECTED) or state.contains(pyatspi.STATE_CHECKED)
                                                             or state.contains(pyatspi.STATE_PRESSED)):
                        print(node.name)
                        sys.exit(0)
            sys.exit(1)
        elif command == "entry-text":
            # `entry-text NAME [dialog]`: the text in the visible entry named NAME.
            node = find(sys.argv[2], len(sys.argv) > 3 and sys.argv[3] == "dialog")
            if node is None:
                print("no visible accessible named %r" % sys.argv[2])
                sys.exit(1)
            text = node.queryText()
            print(text.getText(0, text.characterCount))
        elif command == "click-starting":
            # `click-starting NAME`: clicks the first visible, enabled button whose name starts
            # with NAME (GTK 4.8 adds a button's content to its accessible label).
            found, others = chime_windows()
            for window in found:
                for node in walk(window):
                    state = node.getState()
                    if node.name.startswith(sys.argv[2]) and "button" in node.getRoleName() \
                            and state.contains(pyatspi.STATE_VISIBLE) and state.contains(pyatspi.STATE_SENSITIVE):
                        node.queryAction().doAction(0)
                        print("clicked %s" % node.getRoleName())
                        sys.exit(0)
            print("no visible, enabled button named %r…" % sys.argv[2])
            sys.exit(1)
        elif command == "entry-value":
            # `entry-value NAME [dialog]`: the text of the visible entry named NAME, past a
            # visible label of the same words (a form's heading).
            found, others = chime_windows()
            in_dialog = len(sys.argv) > 3 and sys.argv[3] == "dialog"
            for window in (others if in_dialog else found):
                for node in walk(window):
                    if node.name.replace("_", "") == sys.argv[2] and node.getRoleName() in ("text", "entry") \
                            and node.getState().contains(pyatspi.STATE_VISIBLE):
                        text = node.queryText()
                        print(text.getText(0, text.characterCount))
                        sys.exit(0)
            print("no visible entry named %r" % sys.argv[2])
            sys.exit(1)
        """#

    /// Runs the script with `arguments` on `display`, with the bus's environment.
    static func run(
        _ arguments: [String],
        on display: VirtualDisplay,
        environment: [String: String]
    ) throws -> (
        status: Int32, output: String
    ) {
        let path = display.directory.appendingPathComponent("atspi.py")
        if !FileManager.default.fileExists(atPath: path.path) { try script.write(to: path, atomically: true, encoding: .utf8) }
        return try display.run(
            "/usr/bin/python3",
            [path.path] + arguments,
            environment: environment,
            errors: display.directory.appendingPathComponent("atspi.err").path
        )
    }

    /// Runs the script until `accept` takes its output (up to `timeout` seconds); the last output.
    static func wait(
        _ arguments: [String],
        on display: VirtualDisplay,
        environment: [String: String],
        timeout: Double = 20,
        until accept: (Int32, String) -> Bool
    ) async throws -> String {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        while true {
            let (status, output) = try run(arguments, on: display, environment: environment)
            if accept(status, output) || ContinuousClock.now >= deadline { return output }
            try await Task.sleep(for: .milliseconds(250))
        }
    }
}
