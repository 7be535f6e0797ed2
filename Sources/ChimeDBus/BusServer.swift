internal import CGioLoader
import ChimeCore
import ChimeStore
import Foundation
import Logging
import Synchronization

/// libgio's functions, opened when the service starts (see CGioLoader's header for why).
private var gio: chime_gio_api { chime_gio().pointee }

/// `chime run`'s D-Bus service: owns ``ChimeBus/name`` on the session bus and serves
/// ``ChimeBus/interface`` at ``ChimeBus/objectPath`` through GIO's GDBus.
///
/// GDBus calls the methods on a GLib main loop of the service's own thread; each call is read
/// there and handed to a worker thread, which runs it through ``RemindersService`` (the store,
/// and for a cancel, the runner's answer) and replies from there: the loop thread never waits
/// on the store. Signals may be asked for from any thread: they are sent from the worker.
///
/// `@unchecked Sendable`: `connection` is only used with GDBus calls that are thread-safe
/// (`g_dbus_connection_emit_signal`); the rest is set once on the loop thread before anything
/// reads it, or is behind a `Mutex`.
public final class ChimeBusServer: @unchecked Sendable {
    /// What became of the name.
    public enum NameState: Sendable, Equatable {
        case acquired
        /// Another process owns it (another runner, on another store), or the bus refused it.
        case lost
    }

    private let service: RemindersService
    let worker = Worker()
    var connection: OpaquePointer?
    private let onName: @Sendable (NameState) -> Void
    /// Told what became of an action sent back to an app, or of opening the Chime app (one line
    /// for the runner's log), and whether it failed.
    let log: @Sendable (_ line: String, _ failed: Bool) -> Void
    /// How the app is started when no window is open (org.freedesktop.Application): nil for a
    /// runner that does not open it.
    let launcher: AppLauncher?

    private init(
        service: RemindersService,
        launcher: AppLauncher?,
        onName: @escaping @Sendable (NameState) -> Void,
        log: @escaping @Sendable (String, Bool) -> Void
    ) {
        self.service = service
        self.launcher = launcher
        self.onName = onName
        self.log = log
    }

    /// Connects to the bus at `address`, registers the object (``ChimeBus/interface`` and
    /// `org.freedesktop.Application`, which opens the app through `launcher`) and asks for the
    /// name; what becomes of the name is told to `onName` (on the loop thread). Throws a one-line
    /// reason when libgio cannot be loaded or the bus cannot be reached.
    public static func start(
        address: String,
        service: RemindersService,
        launcher: AppLauncher? = nil,
        log: @escaping @Sendable (_ line: String, _ failed: Bool) -> Void = { _, _ in },
        onName: @escaping @Sendable (NameState) -> Void
    ) throws(ChimeError) -> ChimeBusServer {
        if let problem = chime_gio_open() {
            throw ChimeError(.failure, "libgio could not be loaded: " + String(cString: problem))
        }
        let server = ChimeBusServer(service: service, launcher: launcher, onName: onName, log: log)
        let loop = MainLoopThread.onGioGLib(name: "chime-dbus")
        let failure: String? = loop.runAndWait {
            var error: UnsafeMutablePointer<GError>?
            let flags = GDBusConnectionFlags(
                rawValue: G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT.rawValue | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION.rawValue
            )
            guard let connection = gio.g_dbus_connection_new_for_address_sync(address, flags, nil, nil, &error) else {
                return "cannot connect to the session bus: " + Self.message(error)
            }
            server.connection = connection
            // org.freedesktop.Application first: the object is whole once the name is owned.
            let application = chime_gio_register(
                connection,
                ChimeBus.applicationIntrospection,
                ChimeBus.applicationInterface,
                ChimeBus.objectPath,
                { invocation, data in
                    Unmanaged<ChimeBusServer>.fromOpaque(data!).takeUnretainedValue().applicationCall(invocation)
                },
                Unmanaged.passRetained(server).toOpaque(),
                &error
            )
            guard application != 0 else { return "cannot serve \(ChimeBus.applicationInterface): " + Self.message(error) }
            let id = chime_gio_serve(
                connection,
                ChimeBus.introspection,
                ChimeBus.interface,
                ChimeBus.objectPath,
                ChimeBus.name,
                { invocation, data in
                    Unmanaged<ChimeBusServer>.fromOpaque(data!).takeUnretainedValue().call(invocation)
                },
                { property, data in
                    let server = Unmanaged<ChimeBusServer>.fromOpaque(data!).takeUnretainedValue()
                    return server.property(String(cString: property))
                },
                { acquired, data in
                    let server = Unmanaged<ChimeBusServer>.fromOpaque(data!).takeUnretainedValue()
                    server.onName(acquired != 0 ? .acquired : .lost)
                },
                Unmanaged.passRetained(server).toOpaque(),
                &error
            )
            return id == 0 ? "cannot serve \(ChimeBus.interface): " + Self.message(error) : nil
        }
        if let failure { throw ChimeError(.failure, failure) }
        server.refreshProperties()
        return server
    }

    // MARK: Properties

    /// The properties' values as last read (``RemindersService/properties()``): GDBus reads them
    /// here on the loop thread, which never waits on the store.
    private let properties = Mutex<[String: BusValue]>([:])
    /// Whether a read of the properties is queued on the worker (later asks are folded into it).
    private let refreshQueued = Mutex(false)

    private func property(_ name: String) -> OpaquePointer {
        let value = properties.withLock { $0[name] }
        // Before the first read (only a call in the first instant): the type's empty value.
        return Self.variant(value ?? (name == "NextDue" ? .int64(0) : .dictionary([:])))
    }

    /// Reads the properties again on the worker and signals those that changed
    /// (`org.freedesktop.DBus.Properties.PropertiesChanged`, with their new values). Cheap to
    /// ask often: asks made while one read is queued are answered by it.
    public func refreshProperties() {
        guard
            refreshQueued.withLock({ queued in
                defer { queued = true }
                return !queued
            })
        else { return }
        worker.enqueue { [self] in
            refreshQueued.withLock { $0 = false }
            guard let now = try? service.properties() else { return }
            let changed: [String: BusValue] = properties.withLock { old in
                defer { old = now }
                return now.filter { old[$0.key] != $0.value }
            }
            guard !changed.isEmpty, let connection else { return }
            let parameters = Self.tuple([
                Self.variant(.string(ChimeBus.interface)), Self.dictionary(changed), Self.array([], of: "s"),
            ])
            _ = gio.g_dbus_connection_emit_signal(
                connection,
                nil,
                ChimeBus.objectPath,
                "org.freedesktop.DBus.Properties",
                "PropertiesChanged",
                parameters,
                nil
            )
        }
    }

    // MARK: Signals

    /// `Fired(s id, x due_us, a{sv} details)`: an occurrence was shown. To the reminder's app
    /// only, when it has one (``emit(_:about:_:)``).
    public func fired(id: String, due: Date, details: [String: BusValue]) {
        emit("Fired", about: [id]) { _ in
            Self.tuple([Self.variant(.string(id)), Self.variant(.int64(RemindersService.micros(due))), Self.dictionary(details)])
        }
    }

    /// `Answered(s id, s answer)`: a shown alert was answered (an action's key, or `closed`).
    /// To the reminder's app only, when it has one.
    public func answered(id: String, answer: String) {
        emit("Answered", about: [id]) { _ in Self.tuple([Self.variant(.string(id)), Self.variant(.string(answer))]) }
    }

    // MARK: Actions sent back to the app

    /// An answer to an alert: when it is one of the reminder's own actions and the app that
    /// scheduled it is D-Bus activatable (``RemindersService/route(id:answer:)``), the action
    /// is invoked on that app, `org.freedesktop.Application.ActivateAction(name, [], {})` at its
    /// id's path, as a notification server does for GNotification's `app.NAME`: the bus starts
    /// the app when it is not running. On a thread of its own (starting an app takes a while);
    /// a failure is logged, never fatal.
    public func route(id: String, answer: String) {
        guard Presentation.ownAction(answer) != nil else { return }
        worker.enqueue { [self] in
            guard let (appID, action) = service.route(id: id, answer: answer), let connection else { return }
            let address = UInt(bitPattern: connection)
            let log = self.log
            let thread = Thread {
                let connection = OpaquePointer(bitPattern: address)
                let parameters = Self.tuple([
                    Self.variant(.string(action)), Self.array([], of: "v"), Self.dictionary([:]),
                ])
                switch Self.call(
                    connection!,
                    appID,
                    ApplicationID.objectPath(appID),
                    "org.freedesktop.Application",
                    "ActivateAction",
                    parameters,
                    timeoutMs: -1
                ) {
                case .success(let reply):
                    gio.g_variant_unref(reply)
                    log("Action '\(action)' of reminder \(id) sent to \(appID)", false)
                case .failure(let why):
                    log("Action '\(action)' of reminder \(id) could not be sent to \(appID): \(why.message)", true)
                }
            }
            thread.name = "chime-dbus-action"
            thread.start()
        }
    }

    // MARK: Who calls

    /// Asks the bus about the connection `sender`: `GetConnectionUnixUser` (u),
    /// `GetConnectionUnixProcessID` (u), `GetNameOwner` (s). Nil when the bus cannot say. On
    /// the worker, never the loop thread (a synchronous call).
    func askBus(_ method: String, _ argument: String) -> BusValue? {
        guard let connection,
            case .success(let reply) = Self.call(
                connection,
                "org.freedesktop.DBus",
                "/org/freedesktop/DBus",
                "org.freedesktop.DBus",
                method,
                Self.tuple([Self.variant(.string(argument))])
            )
        else { return nil }
        defer { gio.g_variant_unref(reply) }
        let value = gio.g_variant_get_child_value(reply, 0)!
        defer { gio.g_variant_unref(value) }
        if String(cString: gio.g_variant_get_type_string(value)!) == "u" {
            return .int64(Int64(gio.g_variant_get_uint32(value)))
        }
        return Self.read(value)
    }

    /// Who `sender` is (see ``BusCaller``).
    func caller(_ sender: String) throws(BusRefusal) -> BusCaller {
        func number(_ value: BusValue?) -> UInt32? { if case .int64(let n) = value { UInt32(exactly: n) } else { nil } }
        let uid = number(askBus("GetConnectionUnixUser", sender))
        let pid = number(askBus("GetConnectionUnixProcessID", sender))
        return try service.identify(uid: uid, pid: pid) { name in askBus("GetNameOwner", name) == .string(sender) }
    }

    /// `Changed(as ids)`: reminders changed (none named: the change came from elsewhere, and
    /// every listener is told). The ids of apps' reminders go to their apps, each its own.
    public func changed(ids: [String]) {
        emit("Changed", about: ids) { group in Self.tuple([Self.variant(.strings(group))]) }
    }

    /// Sends `signal` about the reminders `ids` (none: about no reminder in particular, to
    /// every listener), its parameters made by `parameters` for each group of them
    /// (``recipients(of:appID:)``): those of no app to every listener; those of an app only to
    /// the connection that owns the app id's bus name (as a `GApplication` owns its id), and to
    /// no one while no connection does, so that no app learns another's reminders. Sent from
    /// the worker, in order with the method calls' replies and the other signals: finding whose
    /// they are reads the store and asks the bus.
    private func emit(_ signal: String, about ids: [String], _ parameters: @escaping @Sendable ([String]) -> OpaquePointer) {
        worker.enqueue { [self] in
            let store = service.store
            let groups = Self.recipients(of: ids) { id throws(ChimeError) in try store.appID(ofReminderWithID: id) }
            for (appID, group) in groups {
                var destination: String?
                if let appID {
                    // The owner's unique name, not the app id: a signal to a name with no
                    // owner could start the app (D-Bus activation), and the owner cannot change
                    // between this question and the signal.
                    guard case .string(let owner)? = askBus("GetNameOwner", appID) else { continue }
                    destination = owner
                }
                send(signal, parameters(group), to: destination)
            }
        }
    }

    /// The reminders `ids` grouped by the app they are under, in the order each app first comes
    /// (nil: no app); `[(nil, [])]` for no ids. A reminder whose app cannot be read (the store
    /// failing) is left out: better told to no one than to every listener.
    static func recipients(
        of ids: [String],
        appID: (String) throws(ChimeError) -> String?
    ) -> [(appID: String?, ids: [String])] {
        guard !ids.isEmpty else { return [(nil, [])] }
        var groups: [(appID: String?, ids: [String])] = []
        for id in ids {
            let app: String?
            do throws(ChimeError) {
                app = try appID(id)
            } catch {
                continue
            }
            if let index = groups.firstIndex(where: { $0.appID == app }) {
                groups[index].ids.append(id)
            } else {
                groups.append((app, [id]))
            }
        }
        return groups
    }

    /// Emits `signal` with `parameters` (floating) to `destination`, a unique bus name, or to
    /// every listener (nil).
    private func send(_ signal: String, _ parameters: OpaquePointer, to destination: String?) {
        guard let connection else {
            gio.g_variant_unref(gio.g_variant_ref_sink(parameters))
            return
        }
        // (Fails only once the connection is closed: nothing to tell anyone then.)
        _ = gio.g_dbus_connection_emit_signal(connection, destination, ChimeBus.objectPath, ChimeBus.interface, signal, parameters, nil)
    }

    // MARK: Methods

    /// A method call, read on the loop thread, run and answered on the worker.
    private func call(_ invocation: OpaquePointer?) {
        guard let invocation else { return }
        let method = String(cString: gio.g_dbus_method_invocation_get_method_name(invocation)!)
        // The parameters' types are GDBus's to check against the XML: a call of the wrong
        // signature is refused before it comes here.
        let parameters = gio.g_dbus_method_invocation_get_parameters(invocation)!
        var arguments: [BusValue] = []
        var dictionary: [String: BusValue] = [:]
        for index in 0..<gio.g_variant_n_children(parameters) {
            let child = gio.g_variant_get_child_value(parameters, index)!
            defer { gio.g_variant_unref(child) }
            if String(cString: gio.g_variant_get_type_string(child)!) == "a{sv}" {
                dictionary = Self.readDictionary(child)
            } else {
                arguments.append(Self.read(child))
            }
        }
        let strings = arguments.map { if case .string(let text) = $0 { text } else { "" } }
        let reply = Invocation(invocation)
        let service = self.service
        let fields = dictionary
        let sender = gio.g_dbus_method_invocation_get_sender(invocation).map { String(cString: $0) } ?? ""
        worker.enqueue { [self] in
            let caller: BusCaller
            do throws(BusRefusal) {
                caller = try self.caller(sender)
            } catch {
                reply.fail(error.name, error.message)
                return
            }
            do throws(ChimeError) {
                switch method {
                case "Schedule":
                    reply.return(Self.tuple([Self.variant(.string(try service.schedule(fields, caller: caller)))]))
                case "Cancel":
                    reply.return(Self.tuple([Self.variant(.string(try service.cancel(strings[0], caller: caller)))]))
                case "List":
                    let items = try service.list(caller: caller).map(Self.dictionary)
                    reply.return(Self.tuple([Self.array(items, of: "a{sv}")]))
                case "Get":
                    reply.return(Self.tuple([Self.dictionary(try service.get(strings[0], caller: caller))]))
                case "Snooze":
                    try service.snooze(strings[0], duration: strings[1], caller: caller)
                    reply.return(nil)
                case "Done":
                    try service.done(strings[0], caller: caller)
                    reply.return(nil)
                default:
                    throw ChimeError(.usage, "unknown method '\(method)'")
                }
            } catch {
                reply.fail(ChimeBus.errorName(error.code), error.message)
            }
        }
    }

    /// A method invocation to answer once, from any thread (GDBus's return calls are
    /// thread-safe). `@unchecked Sendable`: only answered, once, by the worker.
    final class Invocation: @unchecked Sendable {
        let pointer: OpaquePointer
        init(_ pointer: OpaquePointer) { self.pointer = pointer }

        func `return`(_ value: OpaquePointer?) { gio.g_dbus_method_invocation_return_value(pointer, value) }

        func fail(_ name: String, _ message: String) {
            gio.g_dbus_method_invocation_return_dbus_error(pointer, name, message)
        }
    }

    // MARK: GVariant

    static func readDictionary(_ dictionary: OpaquePointer) -> [String: BusValue] {
        var fields: [String: BusValue] = [:]
        for index in 0..<gio.g_variant_n_children(dictionary) {
            let entry = gio.g_variant_get_child_value(dictionary, index)!
            let key = gio.g_variant_get_child_value(entry, 0)!
            let boxed = gio.g_variant_get_child_value(entry, 1)!
            let value = gio.g_variant_get_variant(boxed)!
            fields[String(cString: gio.g_variant_get_string(key, nil)!)] = read(value)
            for variant in [value, boxed, key, entry] { gio.g_variant_unref(variant) }
        }
        return fields
    }

    static func read(_ value: OpaquePointer) -> BusValue {
        let signature = String(cString: gio.g_variant_get_type_string(value)!)
        switch signature {
        case "s": return .string(String(cString: gio.g_variant_get_string(value, nil)!))
        case "x": return .int64(Int64(gio.g_variant_get_int64(value)))
        case "i": return .int32(gio.g_variant_get_int32(value))
        case "b": return .bool(gio.g_variant_get_boolean(value) != 0)
        case "a{sv}": return .dictionary(readDictionary(value))
        case "a(ss)":
            return .actions(
                (0..<gio.g_variant_n_children(value)).map { index in
                    let pair = gio.g_variant_get_child_value(value, index)!
                    let key = gio.g_variant_get_child_value(pair, 0)!
                    let label = gio.g_variant_get_child_value(pair, 1)!
                    defer { for variant in [label, key, pair] { gio.g_variant_unref(variant) } }
                    return Note.Action(
                        key: String(cString: gio.g_variant_get_string(key, nil)!),
                        label: String(cString: gio.g_variant_get_string(label, nil)!)
                    )
                }
            )
        case "as":
            return .strings(
                (0..<gio.g_variant_n_children(value)).map { index in
                    let child = gio.g_variant_get_child_value(value, index)!
                    defer { gio.g_variant_unref(child) }
                    return String(cString: gio.g_variant_get_string(child, nil)!)
                }
            )
        default: return .other(signature: signature)
        }
    }

    /// A floating GVariant for `value`.
    static func variant(_ value: BusValue) -> OpaquePointer {
        switch value {
        case .string(let text): return gio.g_variant_new_string(text)!
        case .int64(let number): return gio.g_variant_new_int64(gint64(number))!
        case .int32(let number): return gio.g_variant_new_int32(number)!
        case .bool(let flag): return gio.g_variant_new_boolean(flag ? 1 : 0)!
        case .strings(let texts): return array(texts.map { gio.g_variant_new_string($0)! }, of: "s")
        case .actions(let actions):
            return array(
                actions.map { tuple([gio.g_variant_new_string($0.key)!, gio.g_variant_new_string($0.label)!]) },
                of: "(ss)"
            )
        case .dictionary(let fields): return dictionary(fields)
        case .other: return gio.g_variant_new_string("")!
        }
    }

    /// A floating `a{sv}`, its keys sorted.
    static func dictionary(_ fields: [String: BusValue]) -> OpaquePointer {
        let entries = fields.keys.sorted().map { key in
            gio.g_variant_new_dict_entry(gio.g_variant_new_string(key)!, gio.g_variant_new_variant(variant(fields[key]!))!)!
        }
        return array(entries, of: "{sv}")
    }

    static func array(_ items: [OpaquePointer], of type: String) -> OpaquePointer {
        // A GVariantType is its type string (GLib's G_VARIANT_TYPE macro is a cast).
        type.withCString { type in
            var items: [OpaquePointer?] = items
            return gio.g_variant_new_array(OpaquePointer(type), &items, gsize(items.count))!
        }
    }

    /// The reason a call failed, GLib's message.
    struct CallFailure: Error {
        let message: String
    }

    /// A method call on `connection`, waiting for the reply up to `timeoutMs` (-1: GDBus's
    /// default): the reply (the caller unrefs it), or why there is none. `parameters` is
    /// consumed (a floating reference). Never on the loop thread.
    static func call(
        _ connection: OpaquePointer,
        _ destination: String,
        _ path: String,
        _ interface: String,
        _ method: String,
        _ parameters: OpaquePointer,
        flags: GDBusCallFlags = G_DBUS_CALL_FLAGS_NONE,
        timeoutMs: Int32 = 5000
    ) -> Result<OpaquePointer, CallFailure> {
        var error: UnsafeMutablePointer<GError>?
        let reply = gio.g_dbus_connection_call_sync(
            connection,
            destination,
            path,
            interface,
            method,
            parameters,
            nil,
            flags,
            timeoutMs,
            nil,
            &error
        )
        guard let reply else { return .failure(CallFailure(message: message(error))) }
        return .success(reply)
    }

    static func tuple(_ items: [OpaquePointer]) -> OpaquePointer {
        var items: [OpaquePointer?] = items
        return gio.g_variant_new_tuple(&items, gsize(items.count))!
    }

    static func message(_ error: UnsafeMutablePointer<GError>?) -> String {
        guard let error else { return "unknown error" }
        defer { gio.g_error_free(error) }
        return String(cString: error.pointee.message)
    }
}

extension MainLoopThread {
    /// A GLib thread (see ``MainLoopThread``) on the GLib that GIO's loader opened: GDBus calls
    /// the service's methods on it (the context that is the thread's default when the object is
    /// registered).
    static func onGioGLib(name: String) -> MainLoopThread {
        MainLoopThread(
            name: name,
            functions: .init(
                newContext: { gio.g_main_context_new()! },  // GLib aborts rather than return NULL
                run: { context, started in
                    gio.g_main_context_push_thread_default(context)
                    let loop = gio.g_main_loop_new(context, 0)
                    started()
                    gio.g_main_loop_run(loop)
                },
                enqueue: { context, function, data in chime_gio_enqueue(context, function, data) }
            )
        )
    }
}

/// A thread of the service's own that runs its method calls one at a time, in order: off the
/// GLib thread, and off Swift's cooperative pool and libdispatch's (whose worker threads would
/// wake an idle runner every second: see RunnerThread).
final class Worker: Sendable {
    private let jobs = Mutex<[@Sendable () -> Void]>([])
    private let ready = DispatchSemaphore(value: 0)

    init() {
        let thread = Thread { [self] in
            while true {
                ready.wait()
                let job = jobs.withLock { $0.removeFirst() }
                job()
            }
        }
        thread.name = "chime-dbus-work"
        thread.start()
    }

    func enqueue(_ job: @escaping @Sendable () -> Void) {
        jobs.withLock { $0.append(job) }
        ready.signal()
    }
}
