import ChimeCore

/// Why no gate window could be opened: the caller shows the terminal gate, or starts the
/// program and records the reason, and never locks a person out.
public struct GtkGateError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What failed, stable for scripts and events.
    public enum Code: String, Sendable, Hashable, Codable {
        /// Neither `DISPLAY` nor `WAYLAND_DISPLAY` is set: there is no desktop to show a window on.
        case noDisplay = "no_display"
        /// `gtk_init_check` failed: the display named by the environment could not be opened.
        case initFailed = "gtk_init_failed"
    }

    public var code: Code
    /// One line for people: what failed, and what was tried.
    public var message: String

    public init(_ code: Code, _ message: String) {
        (self.code, self.message) = (code, message)
    }

    public var description: String { message }

    /// The same failure as Chime's error type (code `failure`), for the CLI's exit status.
    public var chimeError: ChimeError { ChimeError(.failure, message) }
}
