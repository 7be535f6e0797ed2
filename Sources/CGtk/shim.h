// GTK 4 for Swift: the cast macros (GTK_WINDOW, GTK_LABEL, …) and signal macros
// (g_signal_connect, G_CALLBACK) Swift cannot import, as small static inline functions.
#ifndef CHIME_CGTK_SHIM_H
#define CHIME_CGTK_SHIM_H

#include <gtk/gtk.h>

// Every connect takes `release`, called with `data` when the handler is disconnected or its
// object finalized: Swift passes a retained object and releases it there.

// Casts from the GtkWidget * that every gtk_*_new returns.
static inline GtkWindow *chime_gtk_window(GtkWidget *widget) { return GTK_WINDOW(widget); }
static inline GtkBox *chime_gtk_box(GtkWidget *widget) { return GTK_BOX(widget); }
static inline GtkLabel *chime_gtk_label(GtkWidget *widget) { return GTK_LABEL(widget); }
static inline GtkButton *chime_gtk_button(GtkWidget *widget) { return GTK_BUTTON(widget); }
static inline GtkProgressBar *chime_gtk_progress_bar(GtkWidget *widget) { return GTK_PROGRESS_BAR(widget); }

/// Runs `function(data)` once on the thread that runs the global default main context (GTK's):
/// an idle source, never run inline, so the caller's thread never touches GTK.
static inline void chime_gtk_enqueue(GSourceFunc function, gpointer data) {
    GSource *source = g_idle_source_new();
    g_source_set_priority(source, G_PRIORITY_DEFAULT);
    g_source_set_callback(source, function, data, NULL);
    g_source_attach(source, NULL);
    g_source_unref(source);
}

typedef void (*chime_gtk_clicked_callback)(GtkButton *button, gpointer data);
typedef gboolean (*chime_gtk_close_request_callback)(GtkWindow *window, gpointer data);
typedef gboolean (*chime_gtk_key_pressed_callback)(GtkEventControllerKey *controller, guint keyval, guint keycode,
                                                   GdkModifierType state, gpointer data);
typedef void (*chime_gtk_frame_callback)(GdkFrameClock *clock, gpointer data);

/// Connects a button's "clicked" signal.
static inline gulong chime_gtk_connect_clicked(GtkWidget *button, chime_gtk_clicked_callback callback, gpointer data,
                                              GClosureNotify release) {
    return g_signal_connect_data(button, "clicked", G_CALLBACK(callback), data, release, (GConnectFlags)0);
}

/// Connects a window's "close-request" signal (the window manager's close button, Alt-F4,
/// `xdotool windowclose`); the callback returns TRUE to keep the window.
static inline gulong chime_gtk_connect_close_request(GtkWidget *window, chime_gtk_close_request_callback callback,
                                                     gpointer data, GClosureNotify release) {
    return g_signal_connect_data(window, "close-request", G_CALLBACK(callback), data, release, (GConnectFlags)0);
}

/// Adds a key controller to `widget` and connects its "key-pressed" signal.
static inline void chime_gtk_add_key_pressed(GtkWidget *widget, chime_gtk_key_pressed_callback callback, gpointer data,
                                             GClosureNotify release) {
    GtkEventController *controller = gtk_event_controller_key_new();
    // Before the focused widget (capture): a key the gate handles never reaches a button.
    gtk_event_controller_set_propagation_phase(controller, GTK_PHASE_CAPTURE);
    g_signal_connect_data(controller, "key-pressed", G_CALLBACK(callback), data, release, (GConnectFlags)0);
    gtk_widget_add_controller(widget, controller);
}

/// Connects a frame clock's "after-paint" signal (emitted once a frame has been drawn).
static inline gulong chime_gtk_connect_after_paint(GdkFrameClock *clock, chime_gtk_frame_callback callback, gpointer data,
                                                   GClosureNotify release) {
    return g_signal_connect_data(clock, "after-paint", G_CALLBACK(callback), data, release, (GConnectFlags)0);
}

/// Loads `css` into a new provider for every window on the default display.
static inline void chime_gtk_add_css(const char *css) {
    GtkCssProvider *provider = gtk_css_provider_new();
    gtk_css_provider_load_from_data(provider, css, -1);
    gtk_style_context_add_provider_for_display(gdk_display_get_default(), GTK_STYLE_PROVIDER(provider),
                                               GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
    g_object_unref(provider);
}

/// The keyval of Escape (GDK_KEY_Escape is a macro).
static inline guint chime_gtk_key_escape(void) { return GDK_KEY_Escape; }

/// What a key means to the gate window (the GDK_KEY_* names are macros): 1 Escape, 2 a key
/// that presses the focused button (Enter, space), 3 a key that moves the focus (Tab, the
/// arrows), 4 `p` without Control, Alt or Super, 0 anything else.
static inline int chime_gtk_gate_key(guint keyval, GdkModifierType state) {
    switch (keyval) {
    case GDK_KEY_Escape: return 1;
    case GDK_KEY_Return: case GDK_KEY_KP_Enter: case GDK_KEY_ISO_Enter: case GDK_KEY_space: case GDK_KEY_KP_Space: return 2;
    case GDK_KEY_Tab: case GDK_KEY_ISO_Left_Tab: case GDK_KEY_KP_Tab: case GDK_KEY_Left: case GDK_KEY_Right: case GDK_KEY_Up:
    case GDK_KEY_Down: case GDK_KEY_KP_Left: case GDK_KEY_KP_Right: case GDK_KEY_KP_Up: case GDK_KEY_KP_Down: return 3;
    case GDK_KEY_p: case GDK_KEY_P:
        return (state & (GDK_CONTROL_MASK | GDK_ALT_MASK | GDK_SUPER_MASK | GDK_META_MASK)) ? 0 : 4;
    default: return 0;
    }
}

/// Whether an accessibility bus can be reached: `AT_SPI_BUS_ADDRESS` is set, or the session
/// bus has `org.a11y.Bus` (owned, or activatable). Without one GTK prints a warning at every
/// start ("Unable to acquire the address of the accessibility bus"); the gate then sets
/// GTK_A11Y=none, as that warning itself advises. Bounded (1 s per call); never starts a bus
/// (no autolaunch: only an address or $XDG_RUNTIME_DIR/bus is used).
static inline gboolean chime_gtk_accessibility_bus_reachable(void) {
    if (g_getenv("AT_SPI_BUS_ADDRESS") != NULL) return TRUE;
    const char *address = g_getenv("DBUS_SESSION_BUS_ADDRESS");
    char *fallback = NULL;
    if (address == NULL || *address == 0) {
        const char *runtime = g_getenv("XDG_RUNTIME_DIR");
        if (runtime == NULL) return FALSE;
        char *path = g_build_filename(runtime, "bus", NULL);
        gboolean exists = g_file_test(path, G_FILE_TEST_EXISTS);
        if (exists) fallback = g_strconcat("unix:path=", path, NULL);
        g_free(path);
        if (!exists) return FALSE;
        address = fallback;
    }
    GDBusConnection *bus = g_dbus_connection_new_for_address_sync(
        address, G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION, NULL, NULL, NULL);
    g_free(fallback);
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
            GVariant *list = g_variant_get_child_value(names, 0);
            gsize count = g_variant_n_children(list);
            for (gsize i = 0; i < count && !found; i++) {
                GVariant *name = g_variant_get_child_value(list, i);
                found = g_strcmp0(g_variant_get_string(name, NULL), "org.a11y.Bus") == 0;
                g_variant_unref(name);
            }
            g_variant_unref(list);
            g_variant_unref(names);
        }
    }
    g_dbus_connection_close_sync(bus, NULL, NULL);
    g_object_unref(bus);
    return found;
}

/// Where `widget` is drawn, in its toplevel window's coordinates (surface pixels, CSD shadow
/// included): FALSE when it has no bounds yet (not mapped).
static inline gboolean chime_gtk_widget_bounds_in_window(GtkWidget *widget, double *x, double *y, double *width, double *height) {
    GtkWidget *root = GTK_WIDGET(gtk_widget_get_root(widget));
    if (root == NULL) return FALSE;
    graphene_rect_t bounds;
    if (!gtk_widget_compute_bounds(widget, root, &bounds)) return FALSE;
    double dx = 0, dy = 0;
    gtk_native_get_surface_transform(GTK_NATIVE(root), &dx, &dy);
    *x = bounds.origin.x + dx;
    *y = bounds.origin.y + dy;
    *width = bounds.size.width;
    *height = bounds.size.height;
    return TRUE;
}

#endif
