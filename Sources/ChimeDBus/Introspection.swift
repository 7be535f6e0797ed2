// The introspection XML the service registers: a copy of
// packaging/dbus/io.github.chime.Chime.Reminders1.xml, the file installed for other programs
// (ChimeDBusTests checks that the two are the same, byte for byte).
extension ChimeBus {
    public static let introspection = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
        <!-- Chime's reminders on the session bus: served by `chime run` under the name
             io.github.chime.Chime at /io/github/chime/Chime. See docs/dbus.md and man chime
             (D-BUS INTERFACE). Errors: io.github.chime.Chime.Error.NotFound, .TooLate, .Invalid,
             .Conflict, .Store, .Failed, each with the command line's one-line message. -->
        <node>
          <interface name="io.github.chime.Chime.Reminders1">
            <!-- title (s), body (s), one of in (s: 25m), at (s: 14:30, tomorrow 09:00, RFC 3339) or
                 every (s: weekday 08:00, 2h), optional id (s), urgency (s: low, normal, critical), a
                 command to run when it fires: exec (as: an argv, no shell) or exec-shell (s: for /bin/sh),
                 with exec-timeout (s: 10m, from 1s to 1d), app-id (s: the scheduling app's D-Bus id; a
                 Flatpak app's is its sandbox's) and actions (a(ss): 1 to 3 buttons, key and label, shown
                 instead of Done and Snooze; pressed, each is invoked on a D-Bus activatable app through
                 org.freedesktop.Application.ActivateAction, and signalled as Answered action:KEY).
                 Returns the reminder's id. An app (a Flatpak app, or a program owning the bus name of an
                 app id) sees and touches only its own reminders in every method; others are NotFound. -->
            <method name="Schedule">
              <arg name="reminder" type="a{sv}" direction="in"/>
              <arg name="id" type="s" direction="out"/>
            </method>
            <!-- Returns cancelled, too-late (cancelled, but its alert had been shown) or unconfirmed. -->
            <method name="Cancel">
              <arg name="id" type="s" direction="in"/>
              <arg name="outcome" type="s" direction="out"/>
            </method>
            <!-- The pending reminders, each as Get returns it, soonest first. -->
            <method name="List">
              <arg name="reminders" type="aa{sv}" direction="out"/>
            </method>
            <!-- id, title, body, kind, trigger, recurring (b), urgency, next_due (s, RFC 3339), next_due_us (x),
                 with a command exec (as) or exec-shell (s), and exec-timeout_s (x), and app-id (s), actions (a(ss)). -->
            <method name="Get">
              <arg name="id" type="s" direction="in"/>
              <arg name="reminder" type="a{sv}" direction="out"/>
            </method>
            <!-- Snoozes the alert shown last for id (duration: 10m, from 1m to 24h). -->
            <method name="Snooze">
              <arg name="id" type="s" direction="in"/>
              <arg name="duration" type="s" direction="in"/>
            </method>
            <!-- Marks the alert shown last for id done. -->
            <method name="Done">
              <arg name="id" type="s" direction="in"/>
            </method>
            <!-- Fired, Answered and Changed about a reminder of an app (scheduled with app-id, or by a
                 Flatpak app) are sent to that app alone: to the connection that owns the bus name of its
                 id, and to no one while none does (an app started later reads List). Those about the
                 reminders of no app, and Changed with no ids, are sent to every listener. Changed naming
                 the reminders of several apps is split, one per app. -->
            <!-- An occurrence was shown: title (s), body (s), kind (s). -->
            <signal name="Fired">
              <arg name="id" type="s"/>
              <arg name="due_us" type="x"/>
              <arg name="details" type="a{sv}"/>
            </signal>
            <!-- A shown alert was answered: an action's key (done, snooze, action:KEY for the reminder's own) or closed. -->
            <signal name="Answered">
              <arg name="id" type="s"/>
              <arg name="answer" type="s"/>
            </signal>
            <!-- Reminders changed: their ids, or none when the change came from elsewhere (read List). -->
            <signal name="Changed">
              <arg name="ids" type="as"/>
            </signal>
            <!-- Properties, each signalled by org.freedesktop.DBus.Properties.PropertiesChanged (with its
                 new value) when it changes: read again after every pass of the runner. -->
            <!-- The soonest pending occurrence, microseconds since the epoch; 0 for none. -->
            <property name="NextDue" type="x" access="read"/>
            <!-- That reminder: id, title, kind, due_us; empty for none. -->
            <property name="Next" type="a{sv}" access="read"/>
            <!-- The soonest pending dose: id, title, kind, due_us; empty for none. -->
            <property name="NextDose" type="a{sv}" access="read"/>
            <!-- The focus session: state (none, active, paused, break), and with a session id (x), length_s (x),
                 remaining_s (x), stage (i: the tree's, 0 to 4), label (s) when it has one and, while active,
                 end_us (x); paused_for (s: idle) while paused because the person was away; during the break
                 after a completed session: id (x: the break's), kind (s: short, long), length_s, remaining_s
                 and end_us. -->
            <property name="Focus" type="a{sv}" access="read"/>
            <!-- Quiet: active (b), and while active until_us (x) and reasons (as: manual, hours). -->
            <property name="Quiet" type="a{sv}" access="read"/>
          </interface>
        </node>
        """ + "\n"
}
