// libnotify, GLib, GObject and GIO: their headers (for the types and constants), and their
// functions opened with dlopen the first time an alert is shown or the
// desktop is asked about, not by the dynamic loader at every start of chime.
//
// Why by hand: linked normally, libnotify pulls in 15 shared libraries (GLib, GIO, gdk-pixbuf,
// libpng, libjpeg, libmount, libselinux, ...) that the loader maps and binds (about 2,800
// symbol bindings under -z now) for every `chime --version`, `chime in` and `chime list`,
// which never show an alert: 8.6 M of the 10.0 M instructions of `chime --version`
// (valgrind --tool=callgrind: docs/performance.md) and about half its wall time. Debian has no lazy-loading stub
// generator for this, and ld on Linux has no -z lazyload, so the table below is the usual
// dlopen/dlsym one, with each pointer's type taken from the library's own header (__typeof__),
// so a changed signature is a compile error, not a crash.
#ifndef CHIME_LIBNOTIFY_LOADER_H
#define CHIME_LIBNOTIFY_LOADER_H

#include <gio/gio.h>
#include <libnotify/notify.h>

/// Every function Chime calls, by name; the loader resolves each from libnotify's handle
/// (dlsym on a handle searches its dependencies too: GLib, GObject, GIO).
#define CHIME_LIBNOTIFY_FUNCTIONS(F)                                                                                      \
    F(notify_init)                                                                                                       \
    F(notify_notification_new)                                                                                           \
    F(notify_notification_update)                                                                                        \
    F(notify_notification_show)                                                                                          \
    F(notify_notification_close)                                                                                         \
    F(notify_notification_set_timeout)                                                                                   \
    F(notify_notification_set_urgency)                                                                                   \
    F(notify_notification_set_category)                                                                                  \
    F(notify_notification_set_hint)                                                                                      \
    F(notify_notification_set_hint_string)                                                                               \
    F(notify_notification_set_hint_int32)                                                                                \
    F(notify_notification_clear_hints)                                                                                   \
    F(notify_notification_clear_actions)                                                                                 \
    F(notify_notification_add_action)                                                                                    \
    F(notify_notification_get_closed_reason)                                                                             \
    F(g_free)                                                                                                            \
    F(g_malloc0_n)                                                                                                       \
    F(g_strfreev)                                                                                                        \
    F(g_error_free)                                                                                                      \
    F(g_main_context_new)                                                                                                \
    F(g_main_context_push_thread_default)                                                                                \
    F(g_main_loop_new)                                                                                                   \
    F(g_main_loop_run)                                                                                                   \
    F(g_idle_source_new)                                                                                                 \
    F(g_source_set_priority)                                                                                             \
    F(g_source_set_callback)                                                                                             \
    F(g_source_attach)                                                                                                   \
    F(g_source_unref)                                                                                                    \
    F(g_variant_new)                                                                                                     \
    F(g_variant_new_string)                                                                                              \
    F(g_variant_new_boolean)                                                                                             \
    F(g_variant_new_tuple)                                                                                               \
    F(g_variant_unref)                                                                                                   \
    F(g_variant_get)                                                                                                     \
    F(g_variant_get_child_value)                                                                                         \
    F(g_variant_get_variant)                                                                                             \
    F(g_variant_get_boolean)                                                                                             \
    F(g_variant_get_type_string)                                                                                         \
    F(g_variant_dup_strv)                                                                                                \
    F(g_object_unref)                                                                                                    \
    F(g_object_get)                                                                                                      \
    F(g_object_set)                                                                                                      \
    F(g_signal_connect_data)                                                                                             \
    F(g_bus_get_sync)                                                                                                    \
    F(g_bus_watch_name_on_connection)                                                                                    \
    F(g_dbus_connection_call_sync)                                                                                       \
    F(g_settings_schema_source_get_default)                                                                              \
    F(g_settings_schema_source_lookup)                                                                                   \
    F(g_settings_schema_unref)                                                                                           \
    F(g_settings_schema_has_key)                                                                                         \
    F(g_settings_new_full)                                                                                               \
    F(g_settings_get_boolean)

#define CHIME_LIBNOTIFY_FIELD(name) __typeof__(name) *_Nonnull name;

/// The functions, each a pointer of the library's own type.
typedef struct chime_libnotify_api {
    CHIME_LIBNOTIFY_FUNCTIONS(CHIME_LIBNOTIFY_FIELD)
} chime_libnotify_api;

/// Opens libnotify once (thread-safe; later calls return the first outcome). NULL when every
/// function was found; otherwise what went wrong (dlerror's text), a static string.
const char *_Nullable chime_libnotify_open(void);

/// The table; only after chime_libnotify_open returned NULL.
const chime_libnotify_api *_Nonnull chime_libnotify(void);

// The calls Swift cannot make itself (macros, variadic functions), through the table.

typedef void (*chime_closed_callback)(NotifyNotification *_Nullable notification, gpointer _Nullable data);

/// Connects the "closed" signal (g_signal_connect is a macro).
gulong chime_connect_closed(NotifyNotification *_Nonnull notification, chime_closed_callback _Nonnull callback,
                            gpointer _Nullable data);

/// The server's id of a shown notification (libnotify 0.8.1 has no getter for the "id" property).
guint32 chime_notification_server_id(NotifyNotification *_Nonnull notification);

/// Sets the server id a notification not shown yet replaces (its `id` property: the Notify
/// call's replaces_id), to replace an alert another process showed.
void chime_notification_set_server_id(NotifyNotification *_Nonnull notification, guint32 id);

/// Runs `function(data)` once on the thread that runs `context`'s main loop (an idle source):
/// unlike g_main_context_invoke it never runs inline.
void chime_enqueue(GMainContext *_Nonnull context, GSourceFunc _Nonnull function, gpointer _Nullable data);

/// Who owns `name` on the bus, asked with a timeout and without auto-starting anything.
/// Returns a new string (g_free it), or NULL with `error` set (no owner, no answer).
gchar *_Nullable chime_name_owner(GDBusConnection *_Nonnull connection, const gchar *_Nonnull name, gint timeout_ms,
                                  GError *_Nullable *_Nullable error);

/// GetCapabilities with a timeout: a NULL-terminated array (g_strfreev it), or NULL with `error`.
gchar *_Nullable *_Nullable chime_server_capabilities(GDBusConnection *_Nonnull connection, gint timeout_ms,
                                                      GError *_Nullable *_Nullable error);

/// GetServerInformation with a timeout: name, vendor, version, spec version as a
/// NULL-terminated array of four strings (g_strfreev it), or NULL with `error`.
gchar *_Nullable *_Nullable chime_server_information(GDBusConnection *_Nonnull connection, gint timeout_ms,
                                                     GError *_Nullable *_Nullable error);

/// CloseNotification(id) with a timeout; from any process (the CLI closes a runner's alert).
gboolean chime_close_notification(GDBusConnection *_Nonnull connection, guint32 id, gint timeout_ms,
                                  GError *_Nullable *_Nullable error);

#endif
