// libadwaita 1.2 and GTK 4 for Swift, for the Chime app's window (ChimeAdw): the cast and
// signal macros Swift cannot import, as small static inline functions, and the app's single
// instance on the session bus (io.github.chime.Chime.App), written against GDBus in C.
#ifndef CHIME_CADW_SHIM_H
#define CHIME_CADW_SHIM_H

#include <adwaita.h>

static inline GApplication *chime_adw_g_application(AdwApplication *app) { return G_APPLICATION(app); }
static inline GtkApplication *chime_adw_gtk_application(AdwApplication *app) { return GTK_APPLICATION(app); }
/// A builder's object as the widget it is.
static inline GtkWidget *chime_adw_widget(GObject *object) { return GTK_WIDGET(object); }
// Casts from GtkWidget *, so that Swift never names a type GTK keeps opaque.
static inline GtkWindow *chime_adw_as_window(GtkWidget *widget) { return GTK_WINDOW(widget); }
static inline GtkBox *chime_adw_as_box(GtkWidget *widget) { return GTK_BOX(widget); }
static inline GtkLabel *chime_adw_as_label(GtkWidget *widget) { return GTK_LABEL(widget); }
static inline GtkPicture *chime_adw_as_picture(GtkWidget *widget) { return GTK_PICTURE(widget); }
static inline GtkProgressBar *chime_adw_as_progress_bar(GtkWidget *widget) { return GTK_PROGRESS_BAR(widget); }
static inline AdwViewStack *chime_adw_as_view_stack(GtkWidget *widget) { return ADW_VIEW_STACK(widget); }
static inline AdwMessageDialog *chime_adw_as_message_dialog(GtkWidget *widget) { return ADW_MESSAGE_DIALOG(widget); }

typedef void (*chime_adw_callback)(gpointer instance, gpointer data);
typedef void (*chime_adw_response_callback)(AdwMessageDialog *dialog, const char *response, gpointer data);

/// Connects `signal` of `instance` to a handler taking only the instance ("activate",
/// "clicked", "map", "unmap"; not "notify::…": see chime_adw_connect_notify); `release` gets `data` when the
/// handler goes.
static inline gulong chime_adw_connect(gpointer instance, const char *signal, chime_adw_callback callback, gpointer data,
                                       GClosureNotify release) {
    return g_signal_connect_data(instance, signal, G_CALLBACK(callback), data, release, (GConnectFlags)0);
}

typedef void (*chime_adw_notify_callback)(gpointer instance, GParamSpec *property, gpointer data);

/// Connects `notify::PROPERTY` of `instance`, whose handlers get the property's GParamSpec
/// between the instance and `data` (a handler of chime_adw_connect's shape would take the
/// GParamSpec for its data).
static inline gulong chime_adw_connect_notify(gpointer instance, const char *signal, chime_adw_notify_callback callback, gpointer data) {
    return g_signal_connect_data(instance, signal, G_CALLBACK(callback), data, NULL, (GConnectFlags)0);
}

/// Connects an AdwMessageDialog's "response".
static inline gulong chime_adw_connect_response(GtkWidget *dialog, chime_adw_response_callback callback, gpointer data,
                                                GClosureNotify release) {
    return g_signal_connect_data(dialog, "response", G_CALLBACK(callback), data, release, (GConnectFlags)0);
}

/// Registers `size` bytes of a compiled GResource bundle (copied) with GIO; FALSE if it is not one.
static inline gboolean chime_adw_register_resource(const void *bytes, gsize size) {
    GBytes *data = g_bytes_new(bytes, size);
    GResource *resource = g_resource_new_from_data(data, NULL);
    g_bytes_unref(data);
    if (resource == NULL) return FALSE;
    g_resources_register(resource);
    return TRUE;
}

/// Whether the session bus can be reached without starting one: `DBUS_SESSION_BUS_ADDRESS` is
/// set, or `$XDG_RUNTIME_DIR/bus` exists (GLib would otherwise try X11 autolaunch).
static inline gboolean chime_adw_session_bus_known(void) {
    const char *address = g_getenv("DBUS_SESSION_BUS_ADDRESS");
    if (address != NULL && *address != 0) return TRUE;
    const char *runtime = g_getenv("XDG_RUNTIME_DIR");
    if (runtime == NULL) return FALSE;
    char *path = g_build_filename(runtime, "bus", NULL);
    gboolean exists = g_file_test(path, G_FILE_TEST_EXISTS);
    g_free(path);
    return exists;
}

#define CHIME_APP_BUS_NAME "io.github.chime.Chime.App"
#define CHIME_APP_OBJECT_PATH "/io/github/chime/Chime/App"
#define CHIME_APP_INTERFACE "io.github.chime.Chime.App1"

typedef void (*chime_app_present_callback)(const char *page, gpointer data);

typedef struct {
    chime_app_present_callback callback;
    gpointer data;
} ChimeAppPresenter;

static void chime_app_method_call(GDBusConnection *connection, const gchar *sender, const gchar *path, const gchar *interface,
                                  const gchar *method, GVariant *parameters, GDBusMethodInvocation *invocation, gpointer user_data) {
    (void)connection, (void)sender, (void)path, (void)interface;
    ChimeAppPresenter *presenter = user_data;
    if (g_strcmp0(method, "Present") == 0) {
        const gchar *page = NULL;
        g_variant_get(parameters, "(&s)", &page);
        presenter->callback(page, presenter->data);
        g_dbus_method_invocation_return_value(invocation, NULL);
    } else {
        g_dbus_method_invocation_return_error(invocation, G_DBUS_ERROR, G_DBUS_ERROR_UNKNOWN_METHOD, "no method %s", method);
    }
}

static const GDBusInterfaceVTable chime_app_vtable = {chime_app_method_call, NULL, NULL, {0}};

/// The app's single instance. Exports io.github.chime.Chime.App1 (`Present(s page)`) at
/// /io/github/chime/Chime/App on the session bus, then asks for the name
/// io.github.chime.Chime.App without queueing. Returns 0 when this process owns it (`callback`
/// then gets each Present, on the main context), 1 when another instance has it and was asked
/// to present `page` (this process should exit), 2 when there is no session bus (no single
/// instance), 3 when the bus failed; `*message` (free it with g_free) says why for 2 and 3.
static inline int chime_app_claim(const char *page, chime_app_present_callback callback, gpointer data, char **message) {
    *message = NULL;
    if (!chime_adw_session_bus_known()) {
        *message = g_strdup("no session bus (DBUS_SESSION_BUS_ADDRESS is unset): a second 'chime app' opens a second window");
        return 2;
    }
    GError *error = NULL;
    GDBusConnection *bus = g_bus_get_sync(G_BUS_TYPE_SESSION, NULL, &error);
    if (bus == NULL) {
        *message = g_strdup_printf("no session bus (%s): a second 'chime app' opens a second window", error->message);
        g_error_free(error);
        return 2;
    }
    GDBusNodeInfo *node = g_dbus_node_info_new_for_xml(
        "<node><interface name='" CHIME_APP_INTERFACE "'><method name='Present'>"
        "<arg type='s' name='page' direction='in'/></method></interface></node>",
        NULL);
    ChimeAppPresenter *presenter = g_new0(ChimeAppPresenter, 1);
    presenter->callback = callback;
    presenter->data = data;
    guint registration = g_dbus_connection_register_object(bus, CHIME_APP_OBJECT_PATH, node->interfaces[0], &chime_app_vtable,
                                                           presenter, g_free, &error);
    g_dbus_node_info_unref(node);
    if (registration == 0) {
        *message = g_strdup_printf("cannot export %s: %s", CHIME_APP_OBJECT_PATH, error->message);
        g_error_free(error);
        g_object_unref(bus);
        return 3;
    }
    // DBUS_NAME_FLAG_DO_NOT_QUEUE (4): owned at once, or not at all.
    GVariant *reply = g_dbus_connection_call_sync(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                                  "RequestName", g_variant_new("(su)", CHIME_APP_BUS_NAME, 4u),
                                                  G_VARIANT_TYPE("(u)"), G_DBUS_CALL_FLAGS_NONE, 5000, NULL, &error);
    if (reply == NULL) {
        *message = g_strdup_printf("cannot own %s: %s", CHIME_APP_BUS_NAME, error->message);
        g_error_free(error);
        g_object_unref(bus);
        return 3;
    }
    guint32 answer = 0;
    g_variant_get(reply, "(u)", &answer);
    g_variant_unref(reply);
    // 1: the primary owner now; 4: already was.
    if (answer == 1 || answer == 4) {
        // The connection is kept for the process's life: GIO holds the session bus singleton
        // weakly, and closing it would give the name up (and drop the object).
        return 0;
    }
    g_dbus_connection_unregister_object(bus, registration);
    GVariant *presented = g_dbus_connection_call_sync(bus, CHIME_APP_BUS_NAME, CHIME_APP_OBJECT_PATH, CHIME_APP_INTERFACE, "Present",
                                                      g_variant_new("(s)", page), NULL, G_DBUS_CALL_FLAGS_NONE, 10000, NULL,
                                                      &error);
    g_object_unref(bus);
    if (presented == NULL) {
        *message = g_strdup_printf("Chime's window is open already but did not answer (%s)", error->message);
        g_error_free(error);
        return 3;
    }
    g_variant_unref(presented);
    return 1;
}

/// Whether an accessibility bus can be reached: AT_SPI_BUS_ADDRESS is set, or the session bus
/// has org.a11y.Bus (owned or activatable). See CGtk's chime_gtk_accessibility_bus_reachable.
static inline gboolean chime_adw_accessibility_bus_reachable(void) {
    if (g_getenv("AT_SPI_BUS_ADDRESS") != NULL) return TRUE;
    if (!chime_adw_session_bus_known()) return FALSE;
    GDBusConnection *bus = g_bus_get_sync(G_BUS_TYPE_SESSION, NULL, NULL);
    if (bus == NULL) return FALSE;
    gboolean found = FALSE;
    GVariant *owned = g_dbus_connection_call_sync(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                                  "NameHasOwner", g_variant_new("(s)", "org.a11y.Bus"), G_VARIANT_TYPE("(b)"),
                                                  G_DBUS_CALL_FLAGS_NONE, 1000, NULL, NULL);
    if (owned != NULL) {
        g_variant_get(owned, "(b)", &found);
        g_variant_unref(owned);
    }
    if (!found) {
        GVariant *names = g_dbus_connection_call_sync(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                                      "ListActivatableNames", NULL, G_VARIANT_TYPE("(as)"),
                                                      G_DBUS_CALL_FLAGS_NONE, 1000, NULL, NULL);
        if (names != NULL) {
            const gchar **list = NULL;
            g_variant_get(names, "(^a&s)", &list);
            for (gsize i = 0; list != NULL && list[i] != NULL && !found; i++) found = g_strcmp0(list[i], "org.a11y.Bus") == 0;
            g_free(list);
            g_variant_unref(names);
        }
    }
    g_object_unref(bus);
    return found;
}

// MARK: Doses page (DosesPage.swift): casts, one builder object per row, accessible names and
// descriptions set at run time, and the chart's draw function.
static inline GtkListBox *chime_doses_as_list_box(GtkWidget *widget) { return GTK_LIST_BOX(widget); }
static inline GtkEditable *chime_doses_as_editable(GtkWidget *widget) { return GTK_EDITABLE(widget); }
static inline GtkToggleButton *chime_doses_as_toggle(GtkWidget *widget) { return GTK_TOGGLE_BUTTON(widget); }
static inline GtkLevelBar *chime_doses_as_level_bar(GtkWidget *widget) { return GTK_LEVEL_BAR(widget); }
static inline AdwPreferencesRow *chime_doses_as_preferences_row(GtkWidget *widget) { return ADW_PREFERENCES_ROW(widget); }
static inline AdwActionRow *chime_doses_as_action_row(GtkWidget *widget) { return ADW_ACTION_ROW(widget); }
static inline GtkButton *chime_doses_as_button(GtkWidget *widget) { return GTK_BUTTON(widget); }

/// A builder holding only the object `id` of the resource `path` (and what it contains).
static inline GtkBuilder *chime_doses_builder(const char *path, const char *id) {
    GtkBuilder *builder = gtk_builder_new();
    const char *ids[] = {id, NULL};
    GError *error = NULL;
    if (!gtk_builder_add_objects_from_resource(builder, path, ids, &error)) {
        g_error("cannot build %s from %s: %s", id, path, error->message);
    }
    return builder;
}

/// Sets a widget's accessible label and description (either may be NULL: left as is).
static inline void chime_doses_set_accessible(GtkWidget *widget, const char *label, const char *description) {
    if (label != NULL) gtk_accessible_update_property(GTK_ACCESSIBLE(widget), GTK_ACCESSIBLE_PROPERTY_LABEL, label, -1);
    if (description != NULL)
        gtk_accessible_update_property(GTK_ACCESSIBLE(widget), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, description, -1);
}

/// Removes every row of a list box (GTK 4.8 has no gtk_list_box_remove_all).
static inline void chime_doses_clear(GtkWidget *list) {
    GtkWidget *child;
    while ((child = gtk_widget_get_first_child(list)) != NULL) gtk_list_box_remove(GTK_LIST_BOX(list), child);
}

typedef void (*chime_doses_draw_callback)(cairo_t *cr, int width, int height, gpointer data);

typedef struct {
    chime_doses_draw_callback callback;
    gpointer data;
} ChimeDosesDraw;

static void chime_doses_draw_trampoline(GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data) {
    (void)area;
    ChimeDosesDraw *draw = data;
    draw->callback(cr, width, height, draw->data);
}

/// Sets a drawing area's draw function (called with the cairo context, the size and `data`).
static inline void chime_doses_set_draw(GtkWidget *area, chime_doses_draw_callback callback, gpointer data) {
    ChimeDosesDraw *draw = g_new0(ChimeDosesDraw, 1);
    draw->callback = callback;
    draw->data = data;
    gtk_drawing_area_set_draw_func(GTK_DRAWING_AREA(area), chime_doses_draw_trampoline, draw, g_free);
}

/// The widget's foreground colour (its CSS `color`), for drawing text that follows light and dark.
static inline void chime_doses_foreground(GtkWidget *widget, double *red, double *green, double *blue) {
    GdkRGBA color;
    gtk_style_context_get_color(gtk_widget_get_style_context(widget), &color);
    *red = color.red, *green = color.green, *blue = color.blue;
}

/// Whether the app shows its dark style.
static inline gboolean chime_doses_dark(void) { return adw_style_manager_get_dark(adw_style_manager_get_default()); }

// END Doses page

#endif
