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
/// Shows the SVG (or other image) at `resource` in `picture`, drawn at `size` × `size` pixels
/// (aspect kept) rather than at its natural size and then scaled: an SVG stays sharp when the
/// picture is larger than the file's width. False (and the picture unchanged) when it cannot be read.
static inline gboolean chime_adw_picture_set_resource_at_size(GtkWidget *picture, const char *resource, int size) {
    GError *error = NULL;
    GdkPixbuf *pixbuf = gdk_pixbuf_new_from_resource_at_scale(resource, size, size, TRUE, &error);
    if (pixbuf == NULL) {
        g_clear_error(&error);
        return FALSE;
    }
    GdkTexture *texture = gdk_texture_new_for_pixbuf(pixbuf);
    g_object_unref(pixbuf);
    gtk_picture_set_paintable(GTK_PICTURE(picture), GDK_PAINTABLE(texture));
    g_object_unref(texture);
    return TRUE;
}
static inline GtkButton *chime_adw_as_button(GtkWidget *widget) { return GTK_BUTTON(widget); }
static inline GtkToggleButton *chime_adw_as_toggle_button(GtkWidget *widget) { return GTK_TOGGLE_BUTTON(widget); }
static inline GtkEditable *chime_adw_as_editable(GtkWidget *widget) { return GTK_EDITABLE(widget); }
static inline GtkEntry *chime_adw_as_entry(GtkWidget *widget) { return GTK_ENTRY(widget); }
static inline GtkSwitch *chime_adw_as_switch(GtkWidget *widget) { return GTK_SWITCH(widget); }
static inline GtkImage *chime_adw_as_image(GtkWidget *widget) { return GTK_IMAGE(widget); }
static inline GtkLevelBar *chime_adw_as_level_bar(GtkWidget *widget) { return GTK_LEVEL_BAR(widget); }
static inline GtkDrawingArea *chime_adw_as_drawing_area(GtkWidget *widget) { return GTK_DRAWING_AREA(widget); }
static inline GtkListBox *chime_adw_as_list_box(GtkWidget *widget) { return GTK_LIST_BOX(widget); }
static inline GtkFlowBox *chime_adw_as_flow_box(GtkWidget *widget) { return GTK_FLOW_BOX(widget); }
static inline AdwPreferencesGroup *chime_adw_as_preferences_group(GtkWidget *widget) { return ADW_PREFERENCES_GROUP(widget); }
static inline AdwPreferencesRow *chime_adw_as_preferences_row(GtkWidget *widget) { return ADW_PREFERENCES_ROW(widget); }
static inline AdwActionRow *chime_adw_as_action_row(GtkWidget *widget) { return ADW_ACTION_ROW(widget); }
static inline AdwExpanderRow *chime_adw_as_expander_row(GtkWidget *widget) { return ADW_EXPANDER_ROW(widget); }
static inline AdwComboRow *chime_adw_as_combo_row(GtkWidget *widget) { return ADW_COMBO_ROW(widget); }
static inline AdwToastOverlay *chime_adw_as_toast_overlay(GtkWidget *widget) { return ADW_TOAST_OVERLAY(widget); }

// Every page's accessible names, lists and toasts.

/// Sets a widget's accessible label (its name for AT-SPI) and description; either may be NULL:
/// left as is (gtk_accessible_update_property is variadic: Swift cannot call it).
static inline void chime_adw_set_accessible(GtkWidget *widget, const char *label, const char *description) {
    if (label != NULL) gtk_accessible_update_property(GTK_ACCESSIBLE(widget), GTK_ACCESSIBLE_PROPERTY_LABEL, label, -1);
    if (description != NULL)
        gtk_accessible_update_property(GTK_ACCESSIBLE(widget), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, description, -1);
}

/// Names a widget exactly `label` for AT-SPI: GTK 4.8 joins a widget's label to those of the
/// widgets it is "labelled by" (a button's own label, a row's title), so "Plant Tree Plant Tree";
/// the relation is reset and the label set.
static inline void chime_adw_name_exactly(GtkWidget *widget, const char *label) {
    gtk_accessible_reset_relation(GTK_ACCESSIBLE(widget), GTK_ACCESSIBLE_RELATION_LABELLED_BY);
    gtk_accessible_update_property(GTK_ACCESSIBLE(widget), GTK_ACCESSIBLE_PROPERTY_LABEL, label, -1);
}

/// Removes every row of a GtkListBox (GTK 4.8 has no gtk_list_box_remove_all).
static inline void chime_adw_clear_list_box(GtkWidget *list) {
    GtkWidget *child;
    while ((child = gtk_widget_get_first_child(list)) != NULL) gtk_list_box_remove(GTK_LIST_BOX(list), child);
}

/// Shows `text` (plain text, not markup) in an AdwToast on `overlay`, for `timeout` seconds (0:
/// until dismissed).
static inline void chime_adw_toast(GtkWidget *overlay, const char *text, guint timeout) {
    char *escaped = g_markup_escape_text(text, -1);
    AdwToast *toast = adw_toast_new(escaped);
    g_free(escaped);
    adw_toast_set_timeout(toast, timeout);
    adw_toast_overlay_add_toast(ADW_TOAST_OVERLAY(overlay), toast);
}

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

typedef void (*chime_adw_frame_callback)(GdkFrameClock *clock, gpointer data);

/// Connects a frame clock's "after-paint" (emitted once a frame has been drawn).
static inline gulong chime_adw_connect_after_paint(GdkFrameClock *clock, chime_adw_frame_callback callback, gpointer data) {
    return g_signal_connect_data(clock, "after-paint", G_CALLBACK(callback), data, NULL, (GConnectFlags)0);
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

// --- App shell: live without polling (the runner's signals) ---

typedef void (*chime_app_changed_callback)(gpointer data);

typedef struct {
    chime_app_changed_callback callback;
    gpointer data;
    /// The idle source that refreshes, while one is pending (0: none).
    guint idle;
} ChimeAppListener;

static gboolean chime_app_listener_idle(gpointer user_data) {
    ChimeAppListener *listener = user_data;
    listener->idle = 0;
    listener->callback(listener->data);
    return G_SOURCE_REMOVE;
}

static void chime_app_runner_signal(GDBusConnection *connection, const gchar *sender, const gchar *path, const gchar *interface,
                                    const gchar *signal, GVariant *parameters, gpointer user_data) {
    (void)connection, (void)sender, (void)path, (void)interface, (void)signal, (void)parameters;
    ChimeAppListener *listener = user_data;
    // Coalesced: every signal until the next turn of the main loop is one refresh.
    if (listener->idle == 0) listener->idle = g_idle_add(chime_app_listener_idle, listener);
}

/// Follows the runner on the session bus: each of io.github.chime.Chime.Reminders1's signals
/// (Changed, Fired, Answered) and its PropertiesChanged, from the name io.github.chime.Chime (a
/// match rule on the bus: a runner that starts later is heard too), calls `callback` on the
/// main context, at most once per turn of the main loop (an idle source); no timer. Call on
/// GTK's thread (the callbacks come to the thread-default context, the global default one).
/// FALSE, with `*message` (free it with g_free) saying why, when there is no session bus.
static inline gboolean chime_app_follow_runner(chime_app_changed_callback callback, gpointer data, char **message) {
    *message = NULL;
    if (!chime_adw_session_bus_known()) {
        *message = g_strdup("no session bus: the pages are read again after their own changes only");
        return FALSE;
    }
    GError *error = NULL;
    GDBusConnection *bus = g_bus_get_sync(G_BUS_TYPE_SESSION, NULL, &error);
    if (bus == NULL) {
        *message = g_strdup_printf("no session bus (%s): the pages are read again after their own changes only", error->message);
        g_error_free(error);
        return FALSE;
    }
    // For the process's life, as the connection (held by the subscriptions).
    ChimeAppListener *listener = g_new0(ChimeAppListener, 1);
    listener->callback = callback;
    listener->data = data;
    g_dbus_connection_signal_subscribe(bus, "io.github.chime.Chime", "io.github.chime.Chime.Reminders1", NULL, "/io/github/chime/Chime",
                                       NULL, G_DBUS_SIGNAL_FLAGS_NONE, chime_app_runner_signal, listener, NULL);
    g_dbus_connection_signal_subscribe(bus, "io.github.chime.Chime", "org.freedesktop.DBus.Properties", "PropertiesChanged",
                                       "/io/github/chime/Chime", "io.github.chime.Chime.Reminders1", G_DBUS_SIGNAL_FLAGS_NONE,
                                       chime_app_runner_signal, listener, NULL);
    return TRUE;
}

// --- end App shell ---

// MARK: Gateway page (GatewayPage.swift)


typedef void (*chime_adw_gateway_draw_callback)(GtkWidget *area, cairo_t *cr, int width, int height, gpointer data);

/// Sets a GtkDrawingArea's draw function.
static inline void chime_adw_gateway_set_draw(GtkWidget *area, chime_adw_gateway_draw_callback callback, gpointer data) {
    gtk_drawing_area_set_draw_func(GTK_DRAWING_AREA(area), (GtkDrawingAreaDrawFunc)callback, data, NULL);
}

/// The widget's foreground colour (`accent` FALSE) or the theme's accent colour (TRUE; the
/// foreground when the theme has none), as r, g, b, a.
static inline void chime_adw_gateway_color(GtkWidget *widget, gboolean accent, double rgba[4]) {
    GtkStyleContext *style = gtk_widget_get_style_context(widget);
    GdkRGBA color;
    G_GNUC_BEGIN_IGNORE_DEPRECATIONS
    gtk_style_context_get_color(style, &color);
    if (accent) gtk_style_context_lookup_color(style, "accent_color", &color);
    G_GNUC_END_IGNORE_DEPRECATIONS
    rgba[0] = color.red, rgba[1] = color.green, rgba[2] = color.blue, rgba[3] = color.alpha;
}

typedef void (*chime_adw_gateway_app_callback)(const char *id, const char *name, const char *icon, gpointer data);

/// The desktop's installed applications a launcher shows (g_app_info_get_all, filtered by
/// g_app_info_should_show): each one's desktop entry id, name and icon (g_icon_to_string; NULL
/// without one) to `callback`.
static inline void chime_adw_gateway_installed_apps(chime_adw_gateway_app_callback callback, gpointer data) {
    GList *all = g_app_info_get_all();
    for (GList *node = all; node != NULL; node = node->next) {
        GAppInfo *info = node->data;
        const char *id = g_app_info_get_id(info);
        if (id == NULL || !g_app_info_should_show(info)) continue;
        GIcon *icon = g_app_info_get_icon(info);
        char *iconText = icon != NULL ? g_icon_to_string(icon) : NULL;
        callback(id, g_app_info_get_display_name(info), iconText, data);
        g_free(iconText);
    }
    g_list_free_full(all, g_object_unref);
}

/// Sets an AdwWindowTitle's title and subtitle (the Gateway page's rule form).
static inline void chime_adw_gateway_window_title(GtkWidget *title, const char *text, const char *subtitle) {
    adw_window_title_set_title(ADW_WINDOW_TITLE(title), text);
    adw_window_title_set_subtitle(ADW_WINDOW_TITLE(title), subtitle);
}

/// An image of the icon `icon` names (g_icon_to_string's text), or of `fallback`.
static inline GtkWidget *chime_adw_gateway_icon(const char *icon, const char *fallback) {
    GIcon *gicon = icon != NULL ? g_icon_new_for_string(icon, NULL) : NULL;
    GtkWidget *image = gicon != NULL ? gtk_image_new_from_gicon(gicon) : gtk_image_new_from_icon_name(fallback);
    if (gicon != NULL) g_object_unref(gicon);
    return image;
}

// MARK: Focus page (the forest grid, the streak chart) and Preferences (the window, the app menu)


/// Adds `css` to the display's styles (the app's own classes: `.withered`).
static inline void chime_adw_add_css(const char *css) {
    GtkCssProvider *provider = gtk_css_provider_new();
    gtk_css_provider_load_from_data(provider, css, -1);
    gtk_style_context_add_provider_for_display(gdk_display_get_default(), GTK_STYLE_PROVIDER(provider),
                                               GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
    g_object_unref(provider);
}

/// The widget's foreground color and the theme's accent color (Adwaita's accent_bg_color; blue
/// when the theme has none), for drawing.
static inline void chime_adw_colors(GtkWidget *widget, GdkRGBA *foreground, GdkRGBA *accent) {
    GtkStyleContext *context = gtk_widget_get_style_context(widget);
    gtk_style_context_get_color(context, foreground);
    if (!gtk_style_context_lookup_color(context, "accent_bg_color", accent)) gdk_rgba_parse(accent, "#3584e4");
}

/// Shows `text` centred on (x, y) in the widget's font, on `cr`, in the current source color.
static inline void chime_adw_draw_text(GtkWidget *widget, cairo_t *cr, const char *text, double x, double y) {
    PangoLayout *layout = gtk_widget_create_pango_layout(widget, text);
    int width = 0, height = 0;
    pango_layout_get_pixel_size(layout, &width, &height);
    cairo_move_to(cr, x - width / 2.0, y - height / 2.0);
    pango_cairo_show_layout(cr, layout);
    g_object_unref(layout);
}

typedef void (*chime_adw_draw_callback)(GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data);

static inline void chime_adw_set_draw_func(GtkWidget *area, chime_adw_draw_callback callback, gpointer data) {
    gtk_drawing_area_set_draw_func(GTK_DRAWING_AREA(area), callback, data, NULL);
}

typedef void (*chime_adw_flow_child_callback)(GtkFlowBox *box, GtkFlowBoxChild *child, gpointer data);

/// Connects a GtkFlowBox's "child-activated" (Enter, a click): the handler gets the child's index.
static inline gulong chime_adw_on_child_activated(GtkWidget *box, chime_adw_flow_child_callback callback, gpointer data) {
    return g_signal_connect_data(box, "child-activated", G_CALLBACK(callback), data, NULL, (GConnectFlags)0);
}

typedef void (*chime_adw_action_callback)(GSimpleAction *action, GVariant *parameter, gpointer data);

/// Adds the action `name` (no parameter) to the application, its "activate" to `callback`, and
/// its keyboard shortcut `accel` (NULL: none).
static inline void chime_adw_add_app_action(AdwApplication *app, const char *name, const char *accel, chime_adw_action_callback callback,
                                            gpointer data) {
    GSimpleAction *action = g_simple_action_new(name, NULL);
    g_signal_connect_data(action, "activate", G_CALLBACK(callback), data, NULL, (GConnectFlags)0);
    g_action_map_add_action(G_ACTION_MAP(app), G_ACTION(action));
    g_object_unref(action);
    if (accel != NULL) {
        char *detailed = g_strdup_printf("app.%s", name);
        const char *accels[] = {accel, NULL};
        gtk_application_set_accels_for_action(GTK_APPLICATION(app), detailed, accels);
        g_free(detailed);
    }
}

/// Adds the action `name` taking a string (`app.page('focus')`) to the application, its
/// "activate" to `callback` (the string in its parameter: ``chime_adw_variant_string``).
static inline void chime_adw_add_app_string_action(AdwApplication *app, const char *name, chime_adw_action_callback callback, gpointer data) {
    GSimpleAction *action = g_simple_action_new(name, G_VARIANT_TYPE_STRING);
    g_signal_connect_data(action, "activate", G_CALLBACK(callback), data, NULL, (GConnectFlags)0);
    g_action_map_add_action(G_ACTION_MAP(app), G_ACTION(action));
    g_object_unref(action);
}

/// The keyboard shortcut `accel` of the detailed action `detailed` (`app.page('focus')`).
static inline void chime_adw_set_accel(AdwApplication *app, const char *detailed, const char *accel) {
    const char *accels[] = {accel, NULL};
    gtk_application_set_accels_for_action(GTK_APPLICATION(app), detailed, accels);
}

/// A string GVariant's text (NULL for another type).
static inline const char *chime_adw_variant_string(GVariant *variant) {
    return variant != NULL && g_variant_is_of_type(variant, G_VARIANT_TYPE_STRING) ? g_variant_get_string(variant, NULL) : NULL;
}

typedef struct {
    chime_adw_callback callback;
    gpointer data;
} chime_adw_key_handler;

static inline gboolean chime_adw_key_activate(GtkWidget *widget, GVariant *args, gpointer user_data) {
    chime_adw_key_handler *handler = (chime_adw_key_handler *)user_data;
    handler->callback(widget, handler->data);
    return TRUE;
}

/// Calls `callback` (instance, data) when `trigger` (`Escape`) is pressed while the focus is
/// inside `widget` (a GtkShortcutController of its own).
static inline void chime_adw_on_key(GtkWidget *widget, const char *trigger, chime_adw_callback callback, gpointer data) {
    chime_adw_key_handler *handler = g_new(chime_adw_key_handler, 1);
    handler->callback = callback;
    handler->data = data;
    GtkEventController *controller = gtk_shortcut_controller_new();
    GtkShortcutAction *action = gtk_callback_action_new(chime_adw_key_activate, handler, g_free);
    gtk_shortcut_controller_add_shortcut(GTK_SHORTCUT_CONTROLLER(controller), gtk_shortcut_new(gtk_shortcut_trigger_parse_string(trigger), action));
    gtk_widget_add_controller(widget, controller);
}

/// Connects a GtkEventControllerFocus's "leave" to `callback` (instance, data) on `widget`.
static inline void chime_adw_on_focus_leave(GtkWidget *widget, chime_adw_callback callback, gpointer data) {
    GtkEventController *controller = gtk_event_controller_focus_new();
    g_signal_connect_data(controller, "leave", G_CALLBACK(callback), data, NULL, (GConnectFlags)0);
    gtk_widget_add_controller(widget, controller);
}

typedef gboolean (*chime_adw_close_callback)(GtkWindow *window, gpointer data);

/// Connects a window's "close-request" (its handler returns TRUE to keep the window open).
static inline gulong chime_adw_on_close_request(GtkWidget *window, chime_adw_close_callback callback, gpointer data) {
    return g_signal_connect_data(window, "close-request", G_CALLBACK(callback), data, NULL, (GConnectFlags)0);
}

/// Shows the About window: Chime, its version (empty: none shown), its icon, Apache-2.0.
static inline void chime_adw_show_about(GtkWidget *parent, const char *version) {
    GtkWidget *about = adw_about_window_new();
    AdwAboutWindow *window = ADW_ABOUT_WINDOW(about);
    adw_about_window_set_application_name(window, "Chime");
    if (version && *version) adw_about_window_set_version(window, version);
    adw_about_window_set_application_icon(window, "io.github.chime.Chime");
    adw_about_window_set_developer_name(window, "Chime developers");
    adw_about_window_set_comments(window, "Reminders, focus sessions, doses and a gateway for your desktop.");
    adw_about_window_set_license_type(window, GTK_LICENSE_APACHE_2_0);
    gtk_window_set_transient_for(GTK_WINDOW(about), GTK_WINDOW(parent));
    gtk_window_set_modal(GTK_WINDOW(about), TRUE);
    gtk_window_present(GTK_WINDOW(about));
}

// MARK: end of the Focus page's and Preferences' block
// ---- Reminders and Today pages (RemindersPage.swift, TodayPage.swift) ----

/// A builder's object by id, as a widget (NULL when missing): a row template's.
static inline GtkWidget *chime_rem_builder_widget(GtkBuilder *builder, const char *id) {
    GObject *object = gtk_builder_get_object(builder, id);
    return object == NULL ? NULL : GTK_WIDGET(object);
}
// ---- end of Reminders and Today pages ----

// MARK: Doses page (DosesPage.swift): casts, one builder object per row, accessible names and
// descriptions set at run time, and the chart's draw function.

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
// MARK: end of the Doses page

// MARK: Doses form (appdoses): the tell's "Tell no one" check
static inline GtkCheckButton *chime_doses_as_check_button(GtkWidget *widget) { return GTK_CHECK_BUTTON(widget); }
// END Doses form (appdoses)

#endif
