import CGtk
import Foundation

/// The environment GTK is started with, for both of Chime's windows (the gate's, on
/// ``GtkThread``, and the app's, in ChimeAdw): set before `gtk_init_check`, keeping whatever the
/// person set.
public enum GtkEnvironment {
    /// GSK's cairo renderer and no GL unless the environment chose a renderer, and
    /// `GTK_A11Y=none` when no accessibility bus can be reached.
    public static func prepare() {
        if getenv("GSK_RENDERER") == nil {
            setenv("GSK_RENDERER", "cairo", 0)
            // GDK still loads a GL driver when it opens the display (45 ms of a 125 ms first
            // frame, measured under Xvfb), which the cairo renderer never uses: GTK 4.8 turns
            // that off with the GDK_DEBUG flag `gl-disable`; GTK 4.16 moved it to GDK_DISABLE=gl.
            if gtk_get_minor_version() >= 16 {
                setenv("GDK_DISABLE", "gl", 0)
            } else if getenv("GDK_DEBUG") == nil {
                setenv("GDK_DEBUG", "gl-disable", 0)
            }
        }
        // No accessibility bus on this session (a bare X session, a container): GTK would warn
        // of it at every start; it is told there is none, as its warning advises. A person's
        // own GTK_A11Y is kept.
        if getenv("GTK_A11Y") == nil && chime_gtk_accessibility_bus_reachable() == 0 {
            setenv("GTK_A11Y", "none", 0)
        }
    }
}
