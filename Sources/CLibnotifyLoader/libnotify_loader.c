// See include/libnotify_loader.h for why libnotify is opened with dlopen.
#include "libnotify_loader.h"

#include <dlfcn.h>
#include <pthread.h>

static chime_libnotify_api api;
static const char *problem;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void open_once(void) {
    // libnotify.so.4 is the SONAME Debian's libnotify4 ships (and the one -lnotify linked
    // before). RTLD_LOCAL: nothing else in the process should bind to GLib through us.
    void *handle = dlopen("libnotify.so.4", RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        problem = dlerror();
        return;
    }
#define CHIME_LIBNOTIFY_RESOLVE(name)                                                                                    \
    api.name = (__typeof__(name) *)dlsym(handle, #name);                                                                 \
    if (api.name == NULL) {                                                                                              \
        problem = "libnotify.so.4 lacks " #name;                                                                         \
        return;                                                                                                          \
    }
    CHIME_LIBNOTIFY_FUNCTIONS(CHIME_LIBNOTIFY_RESOLVE)
#undef CHIME_LIBNOTIFY_RESOLVE
}

const char *chime_libnotify_open(void) {
    pthread_once(&once, open_once);
    return problem;
}

const chime_libnotify_api *chime_libnotify(void) { return &api; }

gulong chime_connect_closed(NotifyNotification *notification, chime_closed_callback callback, gpointer data) {
    return api.g_signal_connect_data(notification, "closed", (GCallback)callback, data, NULL, (GConnectFlags)0);
}

guint32 chime_notification_server_id(NotifyNotification *notification) {
    gint id = 0;
    api.g_object_get((GObject *)notification, "id", &id, NULL);
    return (guint32)id;
}

void chime_notification_set_server_id(NotifyNotification *notification, guint32 id) {
    api.g_object_set((GObject *)notification, "id", (gint)id, NULL);
}

void chime_enqueue(GMainContext *context, GSourceFunc function, gpointer data) {
    GSource *source = api.g_idle_source_new();
    api.g_source_set_priority(source, G_PRIORITY_DEFAULT);
    api.g_source_set_callback(source, function, data, NULL);
    api.g_source_attach(source, context);
    api.g_source_unref(source);
}

// GVariantType strings are cast, not passed to G_VARIANT_TYPE: with GLib's checks on, that
// macro calls g_variant_type_checked_, a symbol the table does not hold.
gchar *chime_name_owner(GDBusConnection *connection, const gchar *name, gint timeout_ms, GError **error) {
    GVariant *reply = api.g_dbus_connection_call_sync(
        connection, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetNameOwner",
        api.g_variant_new("(s)", name), (const GVariantType *)"(s)", G_DBUS_CALL_FLAGS_NO_AUTO_START, timeout_ms, NULL,
        error);
    if (reply == NULL) return NULL;
    gchar *owner = NULL;
    api.g_variant_get(reply, "(s)", &owner);
    api.g_variant_unref(reply);
    return owner;
}

static GVariant *notifications_call(GDBusConnection *connection, const gchar *method, GVariant *parameters,
                                    const gchar *reply_type, gint timeout_ms, GError **error) {
    return api.g_dbus_connection_call_sync(connection, "org.freedesktop.Notifications", "/org/freedesktop/Notifications",
                                           "org.freedesktop.Notifications", method, parameters,
                                           (const GVariantType *)reply_type, G_DBUS_CALL_FLAGS_NO_AUTO_START,
                                           timeout_ms, NULL, error);
}

gchar **chime_server_capabilities(GDBusConnection *connection, gint timeout_ms, GError **error) {
    GVariant *reply = notifications_call(connection, "GetCapabilities", NULL, "(as)", timeout_ms, error);
    if (reply == NULL) return NULL;
    GVariant *array = api.g_variant_get_child_value(reply, 0);
    gchar **capabilities = api.g_variant_dup_strv(array, NULL);
    api.g_variant_unref(array);
    api.g_variant_unref(reply);
    return capabilities;
}

gchar **chime_server_information(GDBusConnection *connection, gint timeout_ms, GError **error) {
    GVariant *reply = notifications_call(connection, "GetServerInformation", NULL, "(ssss)", timeout_ms, error);
    if (reply == NULL) return NULL;
    gchar **info = api.g_malloc0_n(5, sizeof(gchar *));
    api.g_variant_get(reply, "(ssss)", &info[0], &info[1], &info[2], &info[3]);
    api.g_variant_unref(reply);
    return info;
}

gboolean chime_close_notification(GDBusConnection *connection, guint32 id, gint timeout_ms, GError **error) {
    GVariant *reply = notifications_call(connection, "CloseNotification", api.g_variant_new("(u)", id), NULL, timeout_ms,
                                         error);
    if (reply == NULL) return FALSE;
    api.g_variant_unref(reply);
    return TRUE;
}
