internal import CGioLoader
import ChimeCore
import ChimeViewModels
import Foundation

/// libgio's functions (see BusServer.swift).
private var gio: chime_gio_api { chime_gio().pointee }

/// How the runner starts the Chime app when no window of it is open: the windows' executable in
/// its app mode (what `chime app` execs), detached, with the runner's environment. Given by
/// `chime run`, which knows the store and the executable.
public struct AppLauncher: Sendable {
    /// Starts the app at `page` (nil: its first page); throws why it could not.
    public let launch: @Sendable (_ page: AppPage?) throws(ChimeError) -> Void

    public init(_ launch: @escaping @Sendable (_ page: AppPage?) throws(ChimeError) -> Void) {
        self.launch = launch
    }
}

/// `org.freedesktop.Application` at ``ChimeBus/objectPath``: what a launcher calls for a desktop
/// entry with `DBusActivatable=true` (the app grid's Chime), and how an alert's body opens the
/// app at its page.
///
/// - `Activate(a{sv})` opens the app, or raises it: when a window is open (its process owns
///   ``ChimeBus/appName``) its `Present("")`; else the ``AppLauncher`` starts one. Without a
///   display (a headless runner: neither `DISPLAY` nor `WAYLAND_DISPLAY`) an error says so.
/// - `ActivateAction('open', [<PAGE>], {})` does the same at PAGE (`today`, `reminders`,
///   `focus`, `doses`, `gateway`); no parameter is Activate. A page's name is an action too,
///   with no parameter (the desktop entry's actions: `ActivateAction('doses', [], {})`).
/// - `Open(as, a{sv})`: Chime opens no files (`NotSupported`).
extension ChimeBusServer {
    /// A call on org.freedesktop.Application, read on the loop thread; answered once the app
    /// was raised or started (or could not be), from a thread of its own.
    func applicationCall(_ invocation: OpaquePointer?) {
        guard let invocation else { return }
        let method = String(cString: gio.g_dbus_method_invocation_get_method_name(invocation)!)
        let parameters = gio.g_dbus_method_invocation_get_parameters(invocation)!
        let sender = gio.g_dbus_method_invocation_get_sender(invocation).map { String(cString: $0) } ?? ""
        let reply = Invocation(invocation)
        let request: Result<AppPage?, ChimeError>
        switch method {
        case "Activate":
            request = .success(nil)
        case "ActivateAction":
            request = Self.openRequest(parameters)
        case "Open":
            reply.fail(
                "org.freedesktop.DBus.Error.NotSupported",
                "Chime opens no files or URIs: call Activate, or ActivateAction('open', [<'PAGE'>], {})"
            )
            return
        default:
            reply.fail("org.freedesktop.DBus.Error.UnknownMethod", "no method \(method)")
            return
        }
        worker.enqueue { [self] in
            do throws(BusRefusal) {
                _ = try caller(sender)
            } catch {
                reply.fail(error.name, error.message)
                return
            }
            switch request {
            case .failure(let error):
                reply.fail(ChimeBus.errorName(error.code), error.message)
            case .success(let page):
                openApp(page) { outcome in
                    switch outcome {
                    case .success: reply.return(nil)
                    case .failure(let error): reply.fail(ChimeBus.errorName(error.code), error.message)
                    }
                }
            }
        }
    }

    /// ActivateAction's parameters `(s av a{sv})` as the page to open: `open` with no parameter
    /// or one string naming a page.
    static func openRequest(_ parameters: OpaquePointer) -> Result<AppPage?, ChimeError> {
        let nameValue = gio.g_variant_get_child_value(parameters, 0)!
        let name = String(cString: gio.g_variant_get_string(nameValue, nil)!)
        gio.g_variant_unref(nameValue)
        let list = gio.g_variant_get_child_value(parameters, 1)!
        defer { gio.g_variant_unref(list) }
        let count = gio.g_variant_n_children(list)
        // The desktop entry's actions: a page by its name, no parameter.
        if let page = AppPage(rawValue: name), count == 0 { return .success(page) }
        guard name == "open" else {
            return .failure(
                ChimeError.invalid("action", name, expected: "open (with a page: \(AppPage.accepted)), or a page's name")
            )
        }
        switch count {
        case 0:
            return .success(nil)
        case 1:
            let boxed = gio.g_variant_get_child_value(list, 0)!
            let value = gio.g_variant_get_variant(boxed)!
            defer { for variant in [value, boxed] { gio.g_variant_unref(variant) } }
            let text: String =
                switch read(value) {
                case .string(let text): text
                case let other: "\(other)"
                }
            guard let page = AppPage(rawValue: text) else { return .failure(ChimeError.invalid("page", text, expected: AppPage.accepted)) }
            return .success(page)
        default:
            return .failure(ChimeError(.usage, "the action 'open' takes one parameter, the page (\(AppPage.accepted))"))
        }
    }

    /// Opens the app at `page` (nil: its first page, or the page an open window shows): raises
    /// the open window (``ChimeBus/appInterface``'s `Present`), else starts one through the
    /// ``AppLauncher``. On a thread of its own (a window that is slow to answer never holds the
    /// service's worker); `done` is told the outcome, which is also a line in the runner's log.
    public func openApp(_ page: AppPage?, done: @escaping @Sendable (Result<Void, ChimeError>) -> Void = { _ in }) {
        let address = connection.map { UInt(bitPattern: $0) }
        let log = self.log
        let launcher = self.launcher
        let thread = Thread { [self] in
            let at = page.map { " at \($0.rawValue)" } ?? ""
            let outcome = Self.open(page, connection: address.flatMap { OpaquePointer(bitPattern: $0) }, server: self, launcher: launcher)
            switch outcome {
            case .success(let how): log("App \(how)\(at)", false)
            case .failure(let error): log("App not opened\(at): \(error.message)", true)
            }
            done(outcome.map { _ in () })
        }
        thread.name = "chime-dbus-app"
        thread.start()
    }

    /// `presented` (a window was open), or `started`; or why neither.
    private static func open(
        _ page: AppPage?,
        connection: OpaquePointer?,
        server: ChimeBusServer,
        launcher: AppLauncher?
    ) -> Result<String, ChimeError> {
        if let connection, case .string = server.askBus("GetNameOwner", ChimeBus.appName) {
            let parameters = tuple([variant(.string(page?.rawValue ?? ""))])
            switch call(
                connection,
                ChimeBus.appName,
                ChimeBus.appObjectPath,
                ChimeBus.appInterface,
                "Present",
                parameters,
                timeoutMs: 10_000
            ) {
            case .success(let reply):
                gio.g_variant_unref(reply)
                return .success("presented")
            case .failure(let why):
                return .failure(ChimeError(.failure, "the open window did not answer: \(why.message)"))
            }
        }
        guard let launcher else { return .failure(ChimeError(.failure, "this runner does not start the app")) }
        if let problem = AppLauncher.displayProblem() { return .failure(ChimeError(.failure, problem)) }
        do throws(ChimeError) {
            try launcher.launch(page)
            return .success("started")
        } catch {
            return .failure(error)
        }
    }
}

extension AppLauncher {
    /// Why a window cannot be shown from this process: no display in its environment (a
    /// headless runner, or a user manager the graphical session did not tell of its display).
    /// Nil when there is one.
    public static func displayProblem(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        let display = [environment["DISPLAY"], environment["WAYLAND_DISPLAY"]].compactMap { $0 }.filter { !$0.isEmpty }
        guard display.isEmpty else { return nil }
        return
            "no display: the runner has neither DISPLAY nor WAYLAND_DISPLAY (a headless session); run 'chime app' in the graphical session, or give the user manager the session's display (systemctl --user import-environment DISPLAY WAYLAND_DISPLAY) and restart the runner"
    }
}
