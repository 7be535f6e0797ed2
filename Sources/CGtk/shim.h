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
