#!/usr/bin/python3
"""A stand-in idle service on the test's private bus (DBUS_SESSION_BUS_ADDRESS), speaking one of
the interfaces Chime reads idleness from:

  mutter       org.gnome.Mutter.IdleMonitor at /org/gnome/Mutter/IdleMonitor/Core: GetIdletime,
               AddIdleWatch, AddUserActiveWatch, RemoveWatch, signal WatchFired (to the watcher)
  screensaver  org.freedesktop.ScreenSaver GetSessionIdleTime (seconds), at /org/freedesktop/ScreenSaver
               and /ScreenSaver
  logind       org.freedesktop.login1: Manager.GetSession (refused for "auto", as for a systemd user
               service), GetUser and the user's Display, and the session's IdleHint / IdleSinceHint
               with PropertiesChanged

The test speaks for the person through the FIFO named by the second argument, one line each:
  idle SECONDS   the last input was SECONDS ago (Mutter: idle watches up to that fire; logind:
                 IdleHint true since then)
  active         input now (Mutter: the user-active watches fire; logind: IdleHint false)
Standard output: "ready" once the name is owned, then one line per call ("call NAME ARGS"),
which the tests and chime-bench count.
"""
import os
import sys
import time

from gi.repository import Gio, GLib

KIND = sys.argv[1]
MUTTER_XML = """<node><interface name="org.gnome.Mutter.IdleMonitor">
<method name="GetIdletime"><arg type="t" direction="out"/></method>
<method name="AddIdleWatch"><arg type="t" direction="in"/><arg type="u" direction="out"/></method>
<method name="AddUserActiveWatch"><arg type="u" direction="out"/></method>
<method name="RemoveWatch"><arg type="u" direction="in"/></method>
<signal name="WatchFired"><arg type="u"/></signal>
</interface></node>"""
SCREENSAVER_XML = """<node><interface name="org.freedesktop.ScreenSaver">
<method name="GetSessionIdleTime"><arg type="u" direction="out"/></method>
</interface></node>"""
LOGIND_XML = """<node><interface name="org.freedesktop.login1.Manager">
<method name="GetSession"><arg type="s" direction="in"/><arg type="o" direction="out"/></method>
<method name="GetUser"><arg type="u" direction="in"/><arg type="o" direction="out"/></method>
</interface><interface name="org.freedesktop.login1.User">
<property name="Display" type="(so)" access="read"/>
</interface><interface name="org.freedesktop.login1.Session">
<property name="IdleHint" type="b" access="read"/>
<property name="IdleSinceHint" type="t" access="read"/>
</interface></node>"""
SESSION_PATH = "/org/freedesktop/login1/session/_31"
USER_PATH = "/org/freedesktop/login1/user/_1000"

state = {"last_input": time.time(), "idle": False, "next": 1}
idle_watches = {}  # id -> (interval ms, sender)
active_watches = {}  # id -> sender
bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)


def say(line):
    print(line, flush=True)


def idle_ms():
    return int((time.time() - state["last_input"]) * 1000)


def fire(watch, sender):
    bus.emit_signal(sender, "/org/gnome/Mutter/IdleMonitor/Core", "org.gnome.Mutter.IdleMonitor", "WatchFired",
                    GLib.Variant("(u)", (watch,)))


def method(connection, sender, path, interface, name, parameters, invocation):
    args = parameters.unpack()
    say("call %s %s" % (name, " ".join(str(a) for a in args)))
    if name == "GetIdletime":
        invocation.return_value(GLib.Variant("(t)", (idle_ms(),)))
    elif name == "AddIdleWatch":
        watch = state["next"]
        state["next"] += 1
        idle_watches[watch] = (args[0], sender)
        invocation.return_value(GLib.Variant("(u)", (watch,)))
    elif name == "AddUserActiveWatch":
        watch = state["next"]
        state["next"] += 1
        active_watches[watch] = sender
        invocation.return_value(GLib.Variant("(u)", (watch,)))
    elif name == "RemoveWatch":
        idle_watches.pop(args[0], None)
        active_watches.pop(args[0], None)
        invocation.return_value(None)
    elif name == "GetSessionIdleTime":
        invocation.return_value(GLib.Variant("(u)", (idle_ms() // 1000,)))
    elif name == "GetSession" and args[0] == "auto":
        # As logind answers a process outside any session (a systemd user service).
        invocation.return_dbus_error("org.freedesktop.login1.NoSessionForPID", "Caller does not belong to any known session")
    elif name == "GetSession":
        invocation.return_value(GLib.Variant("(o)", (SESSION_PATH,)))
    elif name == "GetUser":
        invocation.return_value(GLib.Variant("(o)", (USER_PATH,)))
    else:
        invocation.return_dbus_error("org.freedesktop.DBus.Error.UnknownMethod", name)


def logind_property(connection, sender, path, interface, name):
    say("call Get %s" % name)
    if name == "Display":
        return GLib.Variant("(so)", ("31", SESSION_PATH))
    if name == "IdleHint":
        return GLib.Variant("b", state["idle"])
    if name == "IdleSinceHint":
        return GLib.Variant("t", int(state["last_input"] * 1e6) if state["idle"] else 0)
    return None


def logind_changed():
    bus.emit_signal(None, SESSION_PATH, "org.freedesktop.DBus.Properties", "PropertiesChanged",
                    GLib.Variant("(sa{sv}as)", ("org.freedesktop.login1.Session", {
                        "IdleHint": GLib.Variant("b", state["idle"]),
                        "IdleSinceHint": GLib.Variant("t", int(state["last_input"] * 1e6) if state["idle"] else 0),
                    }, [])))


def command(channel, condition):
    line = control.readline()
    if not line:
        return True
    words = line.split()
    if words and words[0] == "idle":
        state["last_input"] = time.time() - float(words[1])
        state["idle"] = True
        if KIND == "mutter":
            for watch, (interval, sender) in list(idle_watches.items()):
                if interval <= idle_ms():
                    fire(watch, sender)
        elif KIND == "logind":
            logind_changed()
    elif words and words[0] == "active":
        state["last_input"] = time.time()
        state["idle"] = False
        if KIND == "mutter":
            for watch, sender in list(active_watches.items()):
                del active_watches[watch]
                fire(watch, sender)
        elif KIND == "logind":
            logind_changed()
    say("done " + line.strip())
    return True


if KIND == "mutter":
    name = "org.gnome.Mutter.IdleMonitor"
    info = Gio.DBusNodeInfo.new_for_xml(MUTTER_XML)
    bus.register_object("/org/gnome/Mutter/IdleMonitor/Core", info.interfaces[0], method, None, None)
elif KIND == "screensaver":
    name = "org.freedesktop.ScreenSaver"
    info = Gio.DBusNodeInfo.new_for_xml(SCREENSAVER_XML)
    for path in ("/org/freedesktop/ScreenSaver", "/ScreenSaver"):
        bus.register_object(path, info.interfaces[0], method, None, None)
elif KIND == "logind":
    name = "org.freedesktop.login1"
    info = Gio.DBusNodeInfo.new_for_xml(LOGIND_XML)
    bus.register_object("/org/freedesktop/login1", info.interfaces[0], method, None, None)
    bus.register_object(USER_PATH, info.interfaces[1], method, logind_property, None)
    bus.register_object(SESSION_PATH, info.interfaces[2], method, logind_property, None)
else:
    sys.exit("unknown kind: " + KIND)

loop = GLib.MainLoop()
Gio.bus_own_name_on_connection(bus, name, Gio.BusNameOwnerFlags.NONE, lambda *a: say("ready"), lambda *a: loop.quit())
# Opened for reading and writing: never at its end when a writer closes it.
control = os.fdopen(os.open(sys.argv[2], os.O_RDWR), "r", buffering=1)
GLib.io_add_watch(GLib.IOChannel.unix_new(control.fileno()), GLib.PRIORITY_DEFAULT, GLib.IO_IN, command)
loop.run()
