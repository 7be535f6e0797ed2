import CGtk
import Foundation
import Synchronization

/// The one thread of this process that owns GTK: it calls `gtk_init_check`, builds every
/// window and runs GLib's global default main context, where GDK attaches its display's event
/// source. Every GTK call is marshalled onto it through an idle source (``enqueue(_:)``).
///
/// GTK is not thread-safe, and the thread that initialized it is its "main thread" for the rest
/// of the process (gtk-rs's `gtk::init` documents this, and rfd moved its dialogs to one long-lived
/// thread for the same reason); GTK cannot be initialized twice. So the thread lives as long as
/// the process, but its loop runs only while a window is open: when the last window closes the
/// loop quits and the thread parks on a semaphore (no wake-ups) until the next ``enqueue(_:)``.
///
/// `Sendable`: its state is a `Mutex`; the window count and `gtk_init_check`'s answer are read
/// and written on the GTK thread only (`GtkOnly`).
final class GtkThread: Sendable {
    static let shared = GtkThread()

    /// Whether the loop runs or will run (a `start` was signalled and not yet answered by a quit),
    /// and how many enqueued bodies have not started yet: the loop stops only when no window is
    /// open and nothing is queued, decided under this lock so an ``enqueue(_:)`` racing a stop
    /// either keeps the loop running or starts it again.
    private let state = Mutex((running: false, queued: 0))
    private let start = DispatchSemaphore(value: 0)
    private let loop = GtkOnly(g_main_loop_new(nil, 0))
    private let windows = GtkOnly(0)
    private let initialized = GtkOnly<Result<Void, GtkGateError>?>(nil)

    private init() {
        let start = self.start
        let loop = self.loop
        let thread = Thread {
            // GTK's main context is the global default one (GDK attaches its sources there):
            // this thread owns it from now on.
            g_main_context_acquire(nil)
            while true {
                start.wait()
                g_main_loop_run(loop.value)
            }
        }
        thread.name = "chime-gtk"
        thread.start()
    }

    /// Runs `body` on the GTK thread, starting its loop if it is parked; then `after`, once the
    /// loop has been stopped if that left it idle (nothing of GTK's runs after `after` but the
    /// return from the loop).
    func enqueue(_ body: @escaping @Sendable () -> Void, after: (@Sendable () -> Void)? = nil) {
        state.withLock { state in
            state.queued += 1
            if !state.running {
                state.running = true
                start.signal()
            }
        }
        let work = Work { [self] in
            state.withLock { $0.queued -= 1 }
            body()
            stopIfIdle()
            after?()
        }
        chime_gtk_enqueue(
            { data in
                Unmanaged<Work>.fromOpaque(data!).takeRetainedValue().body()
                return 0  // G_SOURCE_REMOVE
            },
            Unmanaged.passRetained(work).toOpaque()
        )
    }

    /// Runs `body` on the GTK thread and waits for its result, blocking the calling thread.
    /// Called on the GTK thread itself (from a GTK handler), it runs `body` at once.
    func sync<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
        if g_main_context_is_owner(nil) != 0 { return body() }
        let result = Mutex<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        enqueue {
            let value = body()
            result.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        return result.withLock { $0! }
    }

    /// Runs `body` on the GTK thread and returns its result, once the GTK thread is done with
    /// it (its loop stopped if that left it idle).
    func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            let result = Mutex<T?>(nil)
            enqueue({ result.withLock { $0 = body() } }, after: { continuation.resume(returning: result.withLock { $0! }) })
        }
    }

    /// On the GTK thread: initializes GTK once (the answer is kept: GTK cannot be initialized
    /// twice), in the environment ``GtkEnvironment/prepare()`` makes (see
    /// ``GtkGateWindow/open(program:showing:environment:onFirstFrame:)``).
    func initializeOnce() -> Result<Void, GtkGateError> {
        if let answer = initialized.value { return answer }
        GtkEnvironment.prepare()
        let answer: Result<Void, GtkGateError> =
            gtk_init_check() != 0
            ? .success(())
            : .failure(GtkGateError(.initFailed, "GTK could not open the display (gtk_init_check failed)."))
        initialized.value = answer
        if case .success = answer { chime_gtk_add_css(GtkGateWindow.css) }
        return answer
    }

    /// On the GTK thread: a window was built.
    func windowOpened() { windows.value += 1 }

    /// On the GTK thread: a window was destroyed; the last one stops the loop, once what GDK
    /// has buffered for the X server (the window's destruction) is sent.
    func windowClosed() {
        windows.value -= 1
        stopIfIdle()
    }

    /// On the GTK thread: stops the loop when no window is open and nothing is queued.
    private func stopIfIdle() {
        guard windows.value == 0 else { return }
        if let display = gdk_display_get_default() { gdk_display_flush(display) }
        state.withLock { state in
            guard state.running, state.queued == 0 else { return }
            state.running = false
            g_main_loop_quit(loop.value)
        }
    }

    private final class Work {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
}

/// A value that only the GTK thread reads or writes.
///
/// `@unchecked Sendable`: every access happens on the GTK thread (inside ``GtkThread/enqueue(_:)``
/// bodies, or the GTK signal handlers that thread dispatches), so accesses never overlap.
final class GtkOnly<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
