// See include/gio_loader.h for why libgio is opened with dlopen.
#include "gio_loader.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

static chime_gio_api api;
static const char *problem;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void open_once(void) {
    // libgio-2.0.so.0: the SONAME of Debian's libglib2.0-0 (which GLib and GObject come with).
    void *handle = dlopen("libgio-2.0.so.0", RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        problem = dlerror();
        return;
    }
#define CHIME_GIO_RESOLVE(name)                                                                                          \
    api.name = (__typeof__(name) *)dlsym(handle, #name);                                                                 \
    if (api.name == NULL) {                                                                                              \
        problem = "libgio-2.0.so.0 lacks " #name;                                                                        \
        return;                                                                                                          \
    }
    CHIME_GIO_FUNCTIONS(CHIME_GIO_RESOLVE)
#undef CHIME_GIO_RESOLVE
}

const char *chime_gio_open(void) {
    pthread_once(&once, open_once);
    return problem;
}

const chime_gio_api *chime_gio(void) { return &api; }

void chime_gio_enqueue(GMainContext *context, GSourceFunc function, gpointer data) {
    GSource *source = api.g_idle_source_new();
    api.g_source_set_priority(source, G_PRIORITY_DEFAULT);
    api.g_source_set_callback(source, function, data, NULL);
    api.g_source_attach(source, context);
    api.g_source_unref(source);
}

typedef struct serving {
    chime_gio_method_callback method;
    chime_gio_property_callback property;
    chime_gio_name_callback on_name;
    gpointer data;
} serving;

static void method_call(GDBusConnection *connection, const gchar *sender, const gchar *object_path,
                        const gchar *interface_name, const gchar *method_name, GVariant *parameters,
                        GDBusMethodInvocation *invocation, gpointer user_data) {
    (void)connection, (void)sender, (void)object_path, (void)interface_name, (void)method_name, (void)parameters;
    serving *s = user_data;
    s->method(invocation, s->data);
}

static GVariant *get_property(GDBusConnection *connection, const gchar *sender, const gchar *object_path,
                             const gchar *interface_name, const gchar *property_name, GError **error, gpointer user_data) {
    (void)connection, (void)sender, (void)object_path, (void)interface_name, (void)error;
    serving *s = user_data;
    return s->property(property_name, s->data);
}

static void name_acquired(GDBusConnection *connection, const gchar *name, gpointer user_data) {
    (void)connection, (void)name;
    serving *s = user_data;
    s->on_name(TRUE, s->data);
}

static void name_lost(GDBusConnection *connection, const gchar *name, gpointer user_data) {
    (void)connection, (void)name;
    serving *s = user_data;
    s->on_name(FALSE, s->data);
}

static const GDBusInterfaceVTable vtable = {method_call, get_property, NULL, {0}};

/// Exports `interface_name` of `xml` at `path`, its calls and properties to the callbacks (either
/// may be NULL); *served gets the struct the name's callbacks share. Served for the life of the
/// process: the node info and this small struct are never freed.
static guint register_serving(GDBusConnection *connection, const gchar *xml, const gchar *interface_name, const gchar *path,
                              chime_gio_method_callback method, chime_gio_property_callback property,
                              chime_gio_name_callback on_name, gpointer data, serving **served, GError **error) {
    GDBusNodeInfo *node = api.g_dbus_node_info_new_for_xml(xml, error);
    if (node == NULL) return 0;
    GDBusInterfaceInfo *interface = api.g_dbus_node_info_lookup_interface(node, interface_name);
    // (The XML is Chime's own: a test checks that it names the interface.)
    if (interface == NULL) return 0;
    serving *s = calloc(1, sizeof(serving));
    if (s == NULL) return 0;
    s->method = method;
    s->property = property;
    s->on_name = on_name;
    s->data = data;
    *served = s;
    return api.g_dbus_connection_register_object(connection, path, interface, &vtable, s, NULL, error);
}

guint chime_gio_serve(GDBusConnection *connection, const gchar *xml, const gchar *interface_name, const gchar *path,
                      const gchar *name, chime_gio_method_callback method, chime_gio_property_callback property,
                      chime_gio_name_callback on_name,
                      gpointer data, GError **error) {
    serving *s = NULL;
    guint id = register_serving(connection, xml, interface_name, path, method, property, on_name, data, &s, error);
    if (id == 0) return 0;
    api.g_bus_own_name_on_connection(connection, name, G_BUS_NAME_OWNER_FLAGS_DO_NOT_QUEUE, name_acquired, name_lost, s,
                                      NULL);
    return id;
}

guint chime_gio_register(GDBusConnection *connection, const gchar *xml, const gchar *interface_name, const gchar *path,
                         chime_gio_method_callback method, gpointer data, GError **error) {
    serving *s = NULL;
    return register_serving(connection, xml, interface_name, path, method, NULL, NULL, data, &s, error);
}
