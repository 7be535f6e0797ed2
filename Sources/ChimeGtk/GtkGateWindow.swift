import CGtk
import ChimeGateway
import Foundation
import Synchronization

/// The gate as a GTK 4 window: the program's name, the quote and its author, the countdown
/// (a progress bar and the time left), the breathing and focus lines, and three buttons,
/// "Exit to Focus", "Deepen the Pause" and "Proceed" (insensitive until
/// ``GateScreen/proceedEnabled``). The window manager's close button and `xdotool
/// windowclose` close it: ``choices`` then yields ``GateChoice/closed`` and finishes.
///
/// Keys: Escape is Exit to Focus (``GateChoice/exit``, then the window closes); `p` presses
/// Proceed once it is enabled (before, nothing); Enter and space press only a button the person
/// moved the focus to (the first Tab or arrow shows the focus, on Exit, without moving it), so a
/// key pressed as the gate appears never answers it.
///
/// Every GTK call runs on the one thread that owns GTK (see `GtkThread`); ``draw(_:)`` and
/// ``close()`` may be called from any thread, Swift concurrency's included, and never block.
///
/// `@unchecked Sendable`: the widget pointers are only dereferenced on the GTK thread; the
/// latest screen waiting to be drawn is behind a `Mutex`; the stream's continuation is Sendable.
public final class GtkGateWindow: GateSurface, @unchecked Sendable {
    public let choices: AsyncStream<GateChoice>
    /// Where each button is drawn, in the window's coordinates.
    public struct Frame: Sendable, Equatable, Hashable, CustomStringConvertible {
        public var x, y, width, height: Double
        public var description: String { "\(Int(x)),\(Int(y)),\(Int(width)),\(Int(height))" }
    }

    /// The window's title, by which the desktop and `xdotool search --name` find it.
    public let title: String

    private let continuation: AsyncStream<GateChoice>.Continuation
    private let widgets: GtkOnly<Widgets?>
    /// Whether the person has moved the keyboard focus (GTK thread): until then Enter and space
    /// press nothing.
    private let personFocused = GtkOnly(false)
    /// The screen to draw next, when a draw is already queued on the GTK thread (draws at 10/s
    /// are coalesced: a busy GTK thread draws only the latest).
    private let pending = Mutex<(screen: GateScreen?, queued: Bool)>((nil, false))

    private struct Widgets {
        let window: UnsafeMutablePointer<GtkWidget>
        let program: UnsafeMutablePointer<GtkWidget>
        let quote: UnsafeMutablePointer<GtkWidget>
        let attribution: UnsafeMutablePointer<GtkWidget>
        let progress: UnsafeMutablePointer<GtkWidget>
        let remaining: UnsafeMutablePointer<GtkWidget>
        let breathing: UnsafeMutablePointer<GtkWidget>
        let focus: UnsafeMutablePointer<GtkWidget>
        let budget: UnsafeMutablePointer<GtkWidget>
        let exit: UnsafeMutablePointer<GtkWidget>
        let deepen: UnsafeMutablePointer<GtkWidget>
        let proceed: UnsafeMutablePointer<GtkWidget>
    }

    private init(title: String) {
        self.title = title
        (choices, continuation) = AsyncStream.makeStream(of: GateChoice.self)
        widgets = GtkOnly(nil)
    }

    /// Opens the gate's window for `program` and presents it, using the launcher's activation
    /// token so the desktop lets it take the focus.
    ///
    /// Blocks the calling thread until the window is built (GTK's first initialization included:
    /// tens of milliseconds).
    ///
    /// - GTK reads its display from the process environment; `environment` is checked first so
    ///   that a missing display fails at once with a reason, and is where the activation token
    ///   (`XDG_ACTIVATION_TOKEN`, else `DESKTOP_STARTUP_ID`) is read. GTK unsets both variables
    ///   from the process environment when its library is loaded (before `main`), so the default,
    ///   ``launchEnvironment()``, reads the environment the process was started with.
    /// - Renderer: unless `GSK_RENDERER` is set, the window draws with GSK's cairo renderer. A gate
    ///   is text and a progress bar; cairo draws it without starting a GL driver, and where GL is
    ///   software only (Xvfb, virtual machines, remote X) it costs far less CPU per frame
    ///   (measured under Xvfb with llvmpipe: first frame 125 ms against 300 ms, 1 % of a core
    ///   against 5 % while counting down). GDK's own GL is then turned off too (`GDK_DEBUG=gl-disable`
    ///   on GTK 4.8, `GDK_DISABLE=gl` from 4.16): it would load a GL driver for nothing, about 45 ms.
    ///   GTK reads these only from the process environment, so they are set there, never
    ///   overriding a value the person chose, once, just before `gtk_init_check`, on GTK's thread
    ///   (the one write this library makes to the environment; `setenv` races only with a
    ///   concurrent `getenv`, and this runs before GTK, the only reader of these names, starts).
    ///
    /// - Parameters:
    ///   - program: the gated program's name, as its desktop entry names it.
    ///   - screen: what the first frame shows (the countdown's start), so it is drawn complete.
    ///   - environment: the environment the gate was launched with.
    ///   - onFirstFrame: called once, on GTK's thread, when the first frame has been drawn, with
    ///     the time since this call began.
    /// - Throws: ``GtkGateError`` when there is no display or GTK cannot open it.
    public static func open(
        program: String,
        showing screen: GateScreen? = nil,
        environment: [String: String] = launchEnvironment(),
        onFirstFrame: (@Sendable (Duration) -> Void)? = nil
    ) throws(GtkGateError) -> GtkGateWindow {
        let (gate, build) = try prepare(program: program, screen: screen, environment: environment, onFirstFrame: onFirstFrame)
        try GtkThread.shared.sync(build).get()
        return gate
    }

    /// Opens the gate's window as ``open(program:showing:environment:onFirstFrame:)`` does,
    /// suspending rather than blocking while GTK builds it.
    public static func open(
        program: String,
        showing screen: GateScreen? = nil,
        environment: [String: String] = launchEnvironment(),
        onFirstFrame: (@Sendable (Duration) -> Void)? = nil
    ) async throws(GtkGateError) -> GtkGateWindow {
        let (gate, build) = try prepare(program: program, screen: screen, environment: environment, onFirstFrame: onFirstFrame)
        try await GtkThread.shared.run(build).get()
        return gate
    }

    /// Checks `environment` for a display, and returns the gate with the work that builds its
    /// window on the GTK thread (initializing GTK the first time).
    private static func prepare(
        program: String,
        screen: GateScreen?,
        environment: [String: String],
        onFirstFrame: (@Sendable (Duration) -> Void)?
    ) throws(GtkGateError) -> (GtkGateWindow, @Sendable () -> Result<Void, GtkGateError>) {
        let started = ContinuousClock.now
        let display = environment["DISPLAY"].flatMap { $0.isEmpty ? nil : $0 }
        let wayland = environment["WAYLAND_DISPLAY"].flatMap { $0.isEmpty ? nil : $0 }
        guard display != nil || wayland != nil else {
            throw GtkGateError(.noDisplay, "No display to show the gate on: neither DISPLAY nor WAYLAND_DISPLAY is set.")
        }
        let token = activationToken(in: environment)
        let gate = GtkGateWindow(title: "Chime: a pause before \(program)")
        let thread = GtkThread.shared
        return (
            gate,
            {
                switch thread.initializeOnce() {
                case .failure(let error):
                    return .failure(error)
                case .success:
                    gate.build(program: program, screen: screen, token: token, started: started, onFirstFrame: onFirstFrame)
                    return .success(())
                }
            }
        )
    }

    /// The launcher's activation token in `environment`: `XDG_ACTIVATION_TOKEN` (Wayland's
    /// xdg-activation), else `DESKTOP_STARTUP_ID` (X11 startup notification).
    public static func activationToken(in environment: [String: String]) -> String? {
        [environment["XDG_ACTIVATION_TOKEN"], environment["DESKTOP_STARTUP_ID"]].compactMap { $0 }.first { !$0.isEmpty }
    }

    /// The environment this process was started with, as `/proc/self/environ` still holds it:
    /// GTK removes `DESKTOP_STARTUP_ID` and `XDG_ACTIVATION_TOKEN` from the live environment when
    /// its library loads, so `ProcessInfo` no longer sees them. Falls back to `ProcessInfo`.
    public static func launchEnvironment() -> [String: String] {
        guard let data = FileManager.default.contents(atPath: "/proc/self/environ") else {
            return ProcessInfo.processInfo.environment
        }
        var environment = ProcessInfo.processInfo.environment
        for entry in data.split(separator: 0) {
            let text = String(decoding: entry, as: UTF8.self)
            guard let equals = text.firstIndex(of: "="), text.startIndex != equals else { continue }
            let key = String(text[..<equals])
            if key == "DESKTOP_STARTUP_ID" || key == "XDG_ACTIVATION_TOKEN" {
                environment[key] = String(text[text.index(after: equals)...])
            }
        }
        return environment
    }

    public func draw(_ screen: GateScreen) {
        let enqueue: Bool = pending.withLock { pending in
            pending.screen = screen
            if pending.queued { return false }
            pending.queued = true
            return true
        }
        guard enqueue else { return }
        GtkThread.shared.enqueue { [self] in
            let screen = pending.withLock { pending in
                pending.queued = false
                return pending.screen
            }
            if let screen { show(screen) }
        }
    }

    /// Brings the window to the front again, as when the gated program is launched a second time
    /// while its gate is open: with that launch's activation token, the desktop lets it take the
    /// focus.
    public func raise(activationToken token: String? = nil) {
        GtkThread.shared.enqueue { [self] in
            guard let window = widgets.value?.window else { return }
            if let token { gtk_window_set_startup_id(chime_gtk_window(window), token) }
            gtk_window_present(chime_gtk_window(window))
        }
    }

    /// Destroys the window and finishes ``choices`` (without a choice); when no other gate is
    /// open, GTK's loop stops.
    public func close() {
        GtkThread.shared.enqueue { [self] in destroy() }
    }

    /// Destroys the window as ``close()`` does, and returns once GTK's thread has done it (and
    /// stopped its loop, when no other gate is open). A process that returned from its main
    /// right after a fire-and-forget close() exited while GTK's thread was still destroying the
    /// window, and died of SIGSEGV after its last line (exit status 139, about one exit in 20 in
    /// GateWindowTests' figures, 2026-11-23): call this before a process ends.
    public func closeAndWait() async {
        await GtkThread.shared.run { [self] in destroy() }
    }

    /// Where the three buttons are drawn, in the window's coordinates (its X surface, which
    /// includes the shadow of client-side decorations): what a test clicks.
    public func buttonFrames() async -> [GateChoice: Frame] {
        await GtkThread.shared.run { [self] in
            guard let widgets = widgets.value else { return [:] }
            var frames: [GateChoice: Frame] = [:]
            for (choice, button) in [(GateChoice.exit, widgets.exit), (.deepen, widgets.deepen), (.proceed, widgets.proceed)] {
                var (x, y, width, height) = (0.0, 0.0, 0.0, 0.0)
                if chime_gtk_widget_bounds_in_window(button, &x, &y, &width, &height) != 0 {
                    frames[choice] = Frame(x: x, y: y, width: width, height: height)
                }
            }
            return frames
        }
    }

    // MARK: On the GTK thread

    private func build(
        program: String,
        screen: GateScreen?,
        token: String?,
        started: ContinuousClock.Instant,
        onFirstFrame: (@Sendable (Duration) -> Void)?
    ) {
        let window = gtk_window_new()!
        gtk_window_set_title(chime_gtk_window(window), title)
        gtk_window_set_default_size(chime_gtk_window(window), 720, 540)
        gtk_widget_add_css_class(window, "chime-gate")

        let column = gtk_box_new(GTK_ORIENTATION_VERTICAL, 18)!
        gtk_widget_set_halign(column, GTK_ALIGN_CENTER)
        gtk_widget_set_valign(column, GTK_ALIGN_CENTER)
        gtk_widget_set_size_request(column, 520, -1)
        gtk_widget_add_css_class(column, "content")

        func label(_ text: String, _ cssClass: String, wrap: Bool = false) -> UnsafeMutablePointer<GtkWidget> {
            let label = gtk_label_new(text)!
            gtk_widget_add_css_class(label, cssClass)
            gtk_label_set_justify(chime_gtk_label(label), GTK_JUSTIFY_CENTER)
            if wrap {
                gtk_label_set_wrap(chime_gtk_label(label), 1)
                gtk_label_set_max_width_chars(chime_gtk_label(label), 48)
            }
            gtk_box_append(chime_gtk_box(column), label)
            return label
        }
        _ = label("A PAUSE BEFORE", "heading")
        let programLabel = label(program, "program", wrap: true)
        let quote = label("", "quote", wrap: true)
        let attribution = label("", "attribution", wrap: true)
        let progress = gtk_progress_bar_new()!
        gtk_progress_bar_set_fraction(chime_gtk_progress_bar(progress), 1)
        gtk_widget_add_css_class(progress, "countdown")
        gtk_box_append(chime_gtk_box(column), progress)
        let remaining = label("", "remaining")
        let breathing = label("", "breathing", wrap: true)
        let focus = label("", "focus", wrap: true)
        let budget = label("", "budget", wrap: true)

        let buttons = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 12)!
        gtk_widget_set_halign(buttons, GTK_ALIGN_CENTER)
        gtk_widget_set_margin_top(buttons, 12)
        gtk_box_append(chime_gtk_box(column), buttons)
        func button(_ text: String, _ choice: GateChoice, _ cssClass: String) -> UnsafeMutablePointer<GtkWidget> {
            let button = gtk_button_new_with_label(text)!
            gtk_widget_add_css_class(button, cssClass)
            gtk_box_append(chime_gtk_box(buttons), button)
            let target = Unmanaged.passRetained(ButtonTarget(gate: self, choice: choice)).toOpaque()
            chime_gtk_connect_clicked(
                button,
                { _, data in Unmanaged<ButtonTarget>.fromOpaque(data!).takeUnretainedValue().fire() },
                target,
                releaseHandlerData
            )
            return button
        }
        let exit = button("Exit to Focus", .exit, "suggested-action")
        let deepen = button("Deepen the Pause", .deepen, "deepen")
        let proceed = button("Proceed", .proceed, "proceed")
        gtk_widget_set_sensitive(proceed, 0)

        gtk_window_set_child(chime_gtk_window(window), column)
        // The window's handlers hold the gate: it lives until its window is destroyed, even when
        // the caller lets go of it first.
        chime_gtk_connect_close_request(
            window,
            { _, data in
                Unmanaged<GtkGateWindow>.fromOpaque(data!).takeUnretainedValue().closeRequested()
                return 1  // TRUE: destroy() destroys it
            },
            Unmanaged.passRetained(self).toOpaque(),
            releaseHandlerData
        )
        chime_gtk_add_key_pressed(
            window,
            { _, keyval, _, state, data in
                Unmanaged<GtkGateWindow>.fromOpaque(data!).takeUnretainedValue().keyPressed(keyval, state)
            },
            Unmanaged.passRetained(self).toOpaque(),
            releaseHandlerData
        )

        widgets.value = Widgets(
            window: window,
            program: programLabel,
            quote: quote,
            attribution: attribution,
            progress: progress,
            remaining: remaining,
            breathing: breathing,
            focus: focus,
            budget: budget,
            exit: exit,
            deepen: deepen,
            proceed: proceed
        )
        for hidden in [quote, attribution, breathing, focus, budget] { gtk_widget_set_visible(hidden, 0) }
        if let screen { show(screen) }
        if let token { gtk_window_set_startup_id(chime_gtk_window(window), token) }
        GtkThread.shared.windowOpened()
        gtk_window_present(chime_gtk_window(window))
        gtk_widget_grab_focus(exit)

        if let clock = gtk_widget_get_frame_clock(window) {
            let first = FirstFrame(started: started, report: onFirstFrame)
            first.handler = chime_gtk_connect_after_paint(
                clock,
                { clock, data in Unmanaged<FirstFrame>.fromOpaque(data!).takeUnretainedValue().fire(clock: clock) },
                Unmanaged.passRetained(first).toOpaque(),
                releaseHandlerData
            )
        }
    }

    /// A key pressed in the window (GTK thread, before the focused button sees it): TRUE for
    /// one the gate handled (see the type's notes), FALSE to let GTK handle it.
    private func keyPressed(_ keyval: guint, _ state: GdkModifierType) -> gboolean {
        guard let widgets = widgets.value else { return 0 }
        switch chime_gtk_gate_key(keyval, state) {
        case 1:
            // Escape: Exit to Focus, as the button would, and the window goes.
            continuation.yield(.exit)
            destroy()
            return 1
        case 2:
            return personFocused.value ? 0 : 1
        case 3:
            guard !personFocused.value else { return 0 }
            personFocused.value = true
            gtk_window_set_focus_visible(chime_gtk_window(widgets.window), 1)
            return 1
        case 4:
            if gtk_widget_get_sensitive(widgets.proceed) != 0 { choose(.proceed) }
            return 1
        default:
            return 0
        }
    }

    /// The window manager's close or `xdotool windowclose`.
    private func closeRequested() {
        continuation.yield(.closed)
        destroy()
    }

    private func destroy() {
        // The stream ends once the window is gone, not before: whoever waits for its end may
        // go on to exit the process.
        defer { continuation.finish() }
        guard let widgets = widgets.value else { return }
        self.widgets.value = nil
        gtk_window_destroy(chime_gtk_window(widgets.window))
        GtkThread.shared.windowClosed()
    }

    fileprivate func choose(_ choice: GateChoice) {
        guard widgets.value != nil else { return }
        continuation.yield(choice)
    }

    private func show(_ screen: GateScreen) {
        guard let widgets = widgets.value else { return }
        gtk_label_set_text(chime_gtk_label(widgets.program), screen.program)
        if let quote = screen.quote {
            gtk_label_set_text(chime_gtk_label(widgets.quote), "“\(quote.text)”")
            gtk_label_set_text(chime_gtk_label(widgets.attribution), "— \(quote.author), \(quote.source)")
        }
        gtk_widget_set_visible(widgets.quote, screen.quote == nil ? 0 : 1)
        gtk_widget_set_visible(widgets.attribution, screen.quote == nil ? 0 : 1)
        gtk_progress_bar_set_fraction(chime_gtk_progress_bar(widgets.progress), min(1, max(0, screen.progress)))
        gtk_label_set_text(chime_gtk_label(widgets.remaining), Self.remainingText(screen))
        set(widgets.breathing, screen.breathing)
        set(widgets.focus, screen.focus)
        set(widgets.budget, screen.budget)
        let enabled: gboolean = screen.proceedEnabled ? 1 : 0
        if gtk_widget_get_sensitive(widgets.proceed) != enabled { gtk_widget_set_sensitive(widgets.proceed, enabled) }
    }

    private func set(_ label: UnsafeMutablePointer<GtkWidget>, _ text: String?) {
        if let text { gtk_label_set_text(chime_gtk_label(label), text) }
        gtk_widget_set_visible(label, text == nil ? 0 : 1)
    }

    /// "27 seconds left", "1 second left", or, once the countdown has run out, what may be done.
    static func remainingText(_ screen: GateScreen) -> String {
        let seconds = Int(screen.remaining.rounded(.up))
        if seconds <= 0 { return "The pause is complete. Proceed if you still want to." }
        return seconds == 1 ? "1 second left" : "\(seconds) seconds left"
    }

    /// Calm colours, large type, centered: readable at 1280×800 from a step back.
    static let css = """
        window.chime-gate { background-color: #f4f1ea; color: #2f3a36; }
        window.chime-gate .content { margin: 36px; }
        window.chime-gate .heading { font-size: 15px; letter-spacing: 2px; color: #6b7670; }
        window.chime-gate .program { font-size: 28px; font-weight: 600; }
        window.chime-gate .quote { font-size: 20px; font-style: italic; margin-top: 12px; }
        window.chime-gate .attribution { font-size: 14px; color: #5d6862; }
        window.chime-gate progressbar.countdown trough { min-height: 10px; border-radius: 5px; background-color: #dcd7cb; }
        window.chime-gate progressbar.countdown progress {
            min-height: 10px; margin: 0; border-radius: 5px; border: none; background-color: #5e8c7a;
            background-image: none;
        }
        window.chime-gate .remaining { font-size: 16px; font-feature-settings: "tnum"; }
        window.chime-gate .breathing { font-size: 18px; color: #3f6f5e; }
        window.chime-gate .focus { font-size: 14px; color: #5d6862; }
        window.chime-gate .budget { font-size: 14px; color: #5d6862; }
        window.chime-gate button { font-size: 15px; padding: 8px 18px; }
        window.chime-gate button.suggested-action { background-color: #3f6f5e; background-image: none; color: #ffffff; border-color: #355e50; }
        window.chime-gate button.suggested-action:hover { background-color: #4a7d6b; }
        """
}

/// Releases the object a handler holds (passed retained to a `chime_gtk_connect_*`), when GLib
/// disconnects the handler or finalizes its object.
private let releaseHandlerData: GClosureNotify = { data, _ in
    Unmanaged<AnyObject>.fromOpaque(data!).release()
}

/// What a button's "clicked" handler holds: the gate and the choice.
private final class ButtonTarget {
    weak var gate: GtkGateWindow?
    let choice: GateChoice
    init(gate: GtkGateWindow, choice: GateChoice) { (self.gate, self.choice) = (gate, choice) }
    func fire() { gate?.choose(choice) }
}

/// What the frame clock's "after-paint" handler holds: it reports the first frame and disconnects.
private final class FirstFrame {
    let started: ContinuousClock.Instant
    let report: (@Sendable (Duration) -> Void)?
    var handler: gulong = 0
    init(started: ContinuousClock.Instant, report: (@Sendable (Duration) -> Void)?) { (self.started, self.report) = (started, report) }

    func fire(clock: OpaquePointer?) {
        guard handler != 0 else { return }
        let elapsed = ContinuousClock.now - started
        g_signal_handler_disconnect(UnsafeMutableRawPointer(clock), handler)
        handler = 0
        report?(elapsed)
    }
}
