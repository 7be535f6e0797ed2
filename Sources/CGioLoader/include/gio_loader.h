// GIO's GDBus and GSettings (and the GLib they need): their headers for the types and constants, their
// functions opened with dlopen when `chime run` starts its D-Bus service or `chime status` reads it (or carries GNOME
// notification settings over to Chime's application id: NotificationSettingsMigration), not by the dynamic
// loader at every start of chime (`chime --version`, `in`, `list`, `cancel` map no GLib: see
// CLibnotifyLoader's header for the figures, and StartupTests). A table of pointers, each typed
// from the library's own header (__typeof__), so a changed signature is a compile error.
#ifndef CHIME_GIO_LOADER_H
#define CHIME_GIO_LOADER_H

#include <gio/gio.h>

#define CHIME_GIO_FUNCTIONS(F)                                                                                           \
    F(g_free)                                                                                                            \
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
    F(g_source_destroy)                                                                                                  \
    F(g_timeout_source_new)                                                                                              \
    F(g_dbus_connection_signal_subscribe)                                                                                \
    F(g_dbus_connection_set_exit_on_close)                                                                               \
    F(g_variant_new_string)                                                                                              \
    F(g_variant_new_boolean)                                                                                             \
    F(g_variant_new_int64)                                                                                               \
    F(g_variant_new_int32)                                                                                               \
    F(g_variant_new_variant)                                                                                             \
    F(g_variant_new_dict_entry)                                                                                          \
    F(g_variant_new_tuple)                                                                                               \
    F(g_variant_new_array)                                                                                               \
    F(g_variant_ref_sink)                                                                                                \
    F(g_variant_unref)                                                                                                   \
    F(g_variant_n_children)                                                                                              \
    F(g_variant_get_child_value)                                                                                         \
    F(g_variant_get_variant)                                                                                             \
    F(g_variant_get_string)                                                                                              \
    F(g_variant_get_boolean)                                                                                             \
    F(g_variant_get_int64)                                                                                               \
    F(g_variant_get_int32)                                                                                               \
    F(g_variant_get_uint32)                                                                                              \
    F(g_variant_get_uint64)                                                                                              \
    F(g_variant_new_uint32)                                                                                              \
    F(g_variant_new_uint64)                                                                                              \
    F(g_dbus_connection_signal_unsubscribe)                                                                              \
    F(g_variant_get_type_string)                                                                                         \
    F(g_dbus_connection_new_for_address_sync)                                                                            \
    F(g_dbus_connection_register_object)                                                                                 \
    F(g_dbus_connection_emit_signal)                                                                                     \
    F(g_dbus_node_info_new_for_xml)                                                                                      \
    F(g_dbus_node_info_lookup_interface)                                                                                 \
    F(g_bus_own_name_on_connection)                                                                                      \
    F(g_dbus_connection_call_sync)                                                                                       \
    F(g_dbus_method_invocation_get_sender)                                                                               \
    F(g_dbus_method_invocation_get_method_name)                                                                          \
    F(g_dbus_method_invocation_get_parameters)                                                                           \
    F(g_dbus_method_invocation_return_value)                                                                             \
    F(g_dbus_method_invocation_return_dbus_error)                                                                        \
    F(g_strfreev)                                                                                                        \
    F(g_object_unref)                                                                                                    \
    F(g_variant_print)                                                                                                   \
    F(g_settings_schema_source_get_default)                                                                              \
    F(g_settings_schema_source_lookup)                                                                                   \
    F(g_settings_schema_list_keys)                                                                                       \
    F(g_settings_schema_unref)                                                                                           \
    F(g_settings_new_full)                                                                                               \
    F(g_settings_get_user_value)                                                                                         \
    F(g_settings_set_value)                                                                                              \
    F(g_settings_set_string)                                                                                             \
    F(g_settings_get_strv)                                                                                               \
    F(g_settings_set_strv)                                                                                               \
    F(g_settings_sync)

#define CHIME_GIO_FIELD(name) __typeof__(name) *_Nonnull name;

/// The functions, each a pointer of the library's own type.
typedef struct chime_gio_api {
    CHIME_GIO_FUNCTIONS(CHIME_GIO_FIELD)
} chime_gio_api;

/// Opens libgio once (thread-safe; later calls return the first outcome). NULL when every
/// function was found; otherwise what went wrong (dlerror's text), a static string.
const char *_Nullable chime_gio_open(void);

/// The table; only after chime_gio_open returned NULL.
const chime_gio_api *_Nonnull chime_gio(void);

/// Runs `function(data)` once on the thread that runs `context`'s main loop (an idle source).
void chime_gio_enqueue(GMainContext *_Nonnull context, GSourceFunc _Nonnull function, gpointer _Nullable data);

/// Called on the loop thread for each method call on the registered object.
typedef void (*chime_gio_method_callback)(GDBusMethodInvocation *_Nonnull invocation, gpointer _Nullable data);
/// Called on the loop thread for a property's value (a floating GVariant of the property's type;
/// GDBus has already refused names the XML does not declare).
typedef GVariant *_Nonnull (*chime_gio_property_callback)(const gchar *_Nonnull property, gpointer _Nullable data);
/// Called on the loop thread when the name is acquired (`acquired` TRUE) or lost / not got.
typedef void (*chime_gio_name_callback)(gboolean acquired, gpointer _Nullable data);

/// Registers `interface_name` of `xml` at `path` on `connection`, its method calls going to
/// `method`, its properties read from `property`; then asks for `name` (without replacing an owner, and without queueing: a name
/// another process owns is reported lost at once). Returns 0 with `error` set when the XML or
/// the registration fails. Call on the loop thread (callbacks run on its main context).
guint chime_gio_serve(GDBusConnection *_Nonnull connection, const gchar *_Nonnull xml,
                      const gchar *_Nonnull interface_name, const gchar *_Nonnull path, const gchar *_Nonnull name,
                      chime_gio_method_callback _Nonnull method, chime_gio_property_callback _Nonnull property,
                      chime_gio_name_callback _Nonnull on_name,
                      gpointer _Nullable data, GError *_Nullable *_Nullable error);

/// Registers `interface_name` of `xml` (an interface with methods only) at `path` on
/// `connection`, its method calls going to `method`; asks for no name (call it before
/// chime_gio_serve, so that the object is whole when the name is owned). Returns 0 with `error`
/// set when the XML or the registration fails. Call on the loop thread.
guint chime_gio_register(GDBusConnection *_Nonnull connection, const gchar *_Nonnull xml, const gchar *_Nonnull interface_name,
                         const gchar *_Nonnull path, chime_gio_method_callback _Nonnull method, gpointer _Nullable data,
                         GError *_Nullable *_Nullable error);

#endif
