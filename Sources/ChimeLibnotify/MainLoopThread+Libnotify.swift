internal import CLibnotifyLoader
import ChimeCore

extension MainLoopThread {
    /// A GLib thread (see ``MainLoopThread``) on the GLib that libnotify's loader opened, where
    /// every libnotify call is made.
    static func onLibnotifyGLib(name: String) -> MainLoopThread {
        MainLoopThread(
            name: name,
            functions: .init(
                newContext: { libnotify.g_main_context_new()! },  // GLib aborts rather than return NULL
                run: { context, started in
                    libnotify.g_main_context_push_thread_default(context)
                    let loop = libnotify.g_main_loop_new(context, 0)
                    started()
                    libnotify.g_main_loop_run(loop)
                },
                enqueue: { context, function, data in chime_enqueue(context, function, data) }
            )
        )
    }
}
