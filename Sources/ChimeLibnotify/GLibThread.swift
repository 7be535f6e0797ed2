internal import CLibnotifyLoader
import Foundation

/// A thread running a GLib main loop on a context of its own, where every libnotify call is
/// made: libnotify delivers its signals ("closed", actions) on the main context of the thread
/// that made the first call, and its calls are blocking D-Bus round trips that must stay off
/// Swift's cooperative pool.
///
/// `@unchecked Sendable`: `context` is only handed to GLib functions that are thread-safe
/// (`g_source_attach`); everything else runs on the loop thread.
final class GLibThread: @unchecked Sendable {
    let context: OpaquePointer

    init(name: String) {
        context = libnotify.g_main_context_new()!  // GLib aborts rather than return NULL
        let address = UInt(bitPattern: context)
        let started = DispatchSemaphore(value: 0)
        let thread = Thread {
            let context = OpaquePointer(bitPattern: address)
            libnotify.g_main_context_push_thread_default(context)
            let loop = libnotify.g_main_loop_new(context, 0)
            started.signal()
            libnotify.g_main_loop_run(loop)
        }
        thread.name = name
        thread.start()
        started.wait()
    }

    /// Runs `body` on the loop thread and returns its result.
    func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            let work = Work { continuation.resume(returning: body()) }
            chime_enqueue(
                context,
                { data in
                    Unmanaged<Work>.fromOpaque(data!).takeRetainedValue().body()
                    return 0  // G_SOURCE_REMOVE
                },
                Unmanaged.passRetained(work).toOpaque()
            )
        }
    }

    /// Runs `body` on the loop thread without waiting for it.
    func enqueue(_ body: @escaping @Sendable () -> Void) {
        chime_enqueue(
            context,
            { data in
                Unmanaged<Work>.fromOpaque(data!).takeRetainedValue().body()
                return 0
            },
            Unmanaged.passRetained(Work(body)).toOpaque()
        )
    }

    private final class Work {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }
}
