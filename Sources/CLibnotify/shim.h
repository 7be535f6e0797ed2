// libnotify and GDBus for Swift: the macros and variadic calls Swift cannot import, as small
// static inline functions (g_signal_connect, G_CALLBACK, g_object_get, g_variant_new/get).
#ifndef CHIME_CLIBNOTIFY_SHIM_H
#define CHIME_CLIBNOTIFY_SHIM_H

#include <gio/gio.h>
#include <libnotify/notify.h>

typedef void (*chime_closed_callback)(NotifyNotification *notification, gpointer data);

/// Connects the "closed" signal.
static inline gulong chime_connect_closed(NotifyNotification *notification, chime_closed_callback callback, gpointer data) {
    return g_signal_connect_data(notification, "closed", G_CALLBACK(callback), data, NULL, (GConnectFlags)0);
}

/// The server's id of a shown notification (libnotify 0.8.1 has no getter for the "id" property).
static inline guint32 chime_notification_server_id(NotifyNotification *notification) {
    gint id = 0;
    g_object_get(G_OBJECT(notification), "id", &id, NULL);
    return (guint32)id;
}

/// Runs `function(data)` once on the thread that runs `context`'s main loop (an idle source):
/// unlike g_main_context_invoke it never runs inline.
static inline void chime_enqueue(GMainContext *context, GSourceFunc function, gpointer data) {
    GSource *source = g_idle_source_new();
    g_source_set_priority(source, G_PRIORITY_DEFAULT);
    g_source_set_callback(source, function, data, NULL);
    g_source_attach(source, context);
    g_source_unref(source);
}

/// Who owns `name` on the bus, asked with a timeout and without auto-starting anything.
/// Returns a new string (g_free it), or NULL with `error` set (no owner, no answer).
static inline gchar *chime_name_owner(GDBusConnection *connection, const gchar *name, gint timeout_ms, GError **error) {
    GVariant *reply = g_dbus_connection_call_sync(
        connection, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner",
        g_variant_new("(s)", name), G_VARIANT_TYPE("(s)"), G_DBUS_CALL_FLAGS_NO_AUTO_START, timeout_ms, NULL, error);
    if (reply == NULL) return NULL;
    gchar *owner = NULL;
    g_variant_get(reply, "(s)", &owner);
    g_variant_unref(reply);
    return owner;
}

static inline GVariant *chime_notifications_call(GDBusConnection *connection, const gchar *method, GVariant *parameters,
                                                 const GVariantType *reply_type, gint timeout_ms, GError **error) {
    return g_dbus_connection_call_sync(
        connection, "org.freedesktop.Notifications", "/org/freedesktop/Notifications", "org.freedesktop.Notifications",
        method, parameters, reply_type, G_DBUS_CALL_FLAGS_NO_AUTO_START, timeout_ms, NULL, error);
}

/// GetCapabilities with a timeout: a NULL-terminated array (g_strfreev it), or NULL with `error`.
static inline gchar **chime_server_capabilities(GDBusConnection *connection, gint timeout_ms, GError **error) {
    GVariant *reply = chime_notifications_call(connection, "GetCapabilities", NULL, G_VARIANT_TYPE("(as)"), timeout_ms, error);
    if (reply == NULL) return NULL;
    GVariant *array = g_variant_get_child_value(reply, 0);
    gchar **capabilities = g_variant_dup_strv(array, NULL);
    g_variant_unref(array);
    g_variant_unref(reply);
    return capabilities;
}

/// GetServerInformation with a timeout: name, vendor, version, spec version as a
/// NULL-terminated array of four strings (g_strfreev it), or NULL with `error`.
static inline gchar **chime_server_information(GDBusConnection *connection, gint timeout_ms, GError **error) {
    GVariant *reply = chime_notifications_call(connection, "GetServerInformation", NULL, G_VARIANT_TYPE("(ssss)"), timeout_ms, error);
    if (reply == NULL) return NULL;
    gchar **info = g_new0(gchar *, 5);
    g_variant_get(reply, "(ssss)", &info[0], &info[1], &info[2], &info[3]);
    g_variant_unref(reply);
    return info;
}

/// CloseNotification(id) with a timeout; from any process (the CLI closes a runner's alert).
static inline gboolean chime_close_notification(GDBusConnection *connection, guint32 id, gint timeout_ms, GError **error) {
    GVariant *reply = chime_notifications_call(connection, "CloseNotification", g_variant_new("(u)", id), NULL, timeout_ms, error);
    if (reply == NULL) return FALSE;
    g_variant_unref(reply);
    return TRUE;
}

#endif
