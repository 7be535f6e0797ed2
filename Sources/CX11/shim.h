// Xlib, for the gate window's tests only: what a window manager does when a person clicks a
// window's close button (xdotool 3.20160805 cannot send it: its windowclose destroys the window).
#ifndef CHIME_CX11_SHIM_H
#define CHIME_CX11_SHIM_H

#include <X11/Xlib.h>
#include <string.h>

/// Sends WM_PROTOCOLS/WM_DELETE_WINDOW to `window` on `display_name` (ICCCM 4.2.8.1), as a
/// window manager's close button does. Returns 0 on success, -1 when the display cannot be opened.
static inline int chime_x11_request_close(const char *display_name, unsigned long window) {
    Display *display = XOpenDisplay(display_name);
    if (display == NULL) return -1;
    XEvent event;
    memset(&event, 0, sizeof event);
    event.xclient.type = ClientMessage;
    event.xclient.window = (Window)window;
    event.xclient.message_type = XInternAtom(display, "WM_PROTOCOLS", False);
    event.xclient.format = 32;
    event.xclient.data.l[0] = (long)XInternAtom(display, "WM_DELETE_WINDOW", False);
    event.xclient.data.l[1] = CurrentTime;
    XSendEvent(display, (Window)window, False, NoEventMask, &event);
    XSync(display, False);
    XCloseDisplay(display);
    return 0;
}

#endif
