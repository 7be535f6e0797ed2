import Foundation
import Synchronization

/// A thread running a GLib main loop on a context of its own, where a C library's calls are
/// made: libnotify delivers its signals on the main context of the thread that made the first
/// call, GDBus calls a service's methods on the context that was the thread's default when the
/// object was registered, and both libraries' calls are blocking D-Bus round trips that must
/// stay off Swift's cooperative pool.
///
/// GLib itself is given as ``Functions`` by the module that opened it (ChimeLibnotify and
/// ChimeDBus each open GLib through their own loader, with dlopen): this type is the one
/// thread both run, and ChimeCore links no GLib.
///
/// `@unchecked Sendable`: `context` is only handed to GLib functions that are thread-safe
/// (`g_source_attach`, through ``Functions/enqueue``); everything else runs on the loop thread.
public final class MainLoopThread: @unchecked Sendable {
    /// GLib's functions for the loop, from the module that opened GLib.
    public struct Functions: Sendable {
        /// A `GSourceFunc`: called with the data given to `enqueue`, returns `G_SOURCE_REMOVE` (0).
        public typealias SourceFunction = @convention(c) (UnsafeMutableRawPointer?) -> Int32
        /// `g_main_context_new`.
        let newContext: @Sendable () -> OpaquePointer
        /// `g_main_context_push_thread_default`, `g_main_loop_new`, then `g_main_loop_run`
        /// (never returns), calling `started` between the loop's making and its run.
        let run: @Sendable (OpaquePointer, _ started: () -> Void) -> Void
        /// Attaches an idle source calling `function` with `data` to the context (unlike
        /// `g_main_context_invoke` it never runs inline).
        let enqueue: @Sendable (OpaquePointer, SourceFunction, UnsafeMutableRawPointer?) -> Void

        public init(
            newContext: @escaping @Sendable () -> OpaquePointer,
            run: @escaping @Sendable (OpaquePointer, _ started: () -> Void) -> Void,
            enqueue: @escaping @Sendable (OpaquePointer, SourceFunction, UnsafeMutableRawPointer?) -> Void
        ) {
            self.newContext = newContext
            self.run = run
            self.enqueue = enqueue
        }
    }

    public let context: OpaquePointer
    private let functions: Functions

    /// Starts the thread, named `name`; returns once its loop is made.
    public init(name: String, functions: Functions) {
        self.functions = functions
        context = functions.newContext()
        let address = UInt(bitPattern: context)
        let started = DispatchSemaphore(value: 0)
        let thread = Thread {
            functions.run(OpaquePointer(bitPattern: address)!) { started.signal() }
        }
        thread.name = name
        thread.start()
        started.wait()
    }

    /// Runs `body` on the loop thread without waiting for it.
    public func enqueue(_ body: @escaping @Sendable () -> Void) {
        functions.enqueue(
            context,
            { data in
                Unmanaged<Work>.fromOpaque(data!).takeRetainedValue().body()
                return 0  // G_SOURCE_REMOVE
            },
            Unmanaged.passRetained(Work(body)).toOpaque()
        )
    }

    /// Runs `body` on the loop thread and returns its result.
    public func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            enqueue { continuation.resume(returning: body()) }
        }
    }

    /// Runs `body` on the loop thread and waits for its result (from another thread only).
    public func runAndWait<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
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

    private final class Work {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }
}
