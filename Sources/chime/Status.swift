import ArgumentParser
import ChimeCore
import ChimeDBus
import Foundation

#if canImport(Glibc)
import Glibc
#endif

extension StatusFormat: ExpressibleByArgument {}

/// `chime status`: what a status bar shows, read from the runner over D-Bus (see StatusFeed).
struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "A status-bar line: next reminder, focus, dose, quiet.",
        discussion: """
            Reads the runner's D-Bus properties (never starts a runner). With --follow,
            a line at once, then one per change: signals from the runner, and each
            minute of a countdown; 'no runner' while none runs. Formats: text,
            json, waybar (custom module JSON), i3bar (a block, for i3blocks).
            Exit status 7: no session bus.
            Examples:
              chime status
              chime status --follow --format waybar
            More: man chime (chime status), docs/status-bar.md
            """
    )

    @Flag(help: "Keep running: a line per change, until stopped.") var follow = false
    @Option(help: "The line's format.") var format: StatusFormat = .text

    func run() async throws {
        guard let address = SessionBusAddress.find(export: false) else {
            throw ChimeError(
                .delivery,
                "no session bus: DBUS_SESSION_BUS_ADDRESS is not set and $XDG_RUNTIME_DIR/bus does not exist (chime status reads the runner over D-Bus)"
            )
        }
        guard follow else {
            let status = try StatusFeed.read(address: address)
            Self.write(StatusLine.render(status, format: format, now: Date(), zone: .current))
            return
        }
        // Stopped by the bar (SIGTERM) or Ctrl-C: exit 0. A bar that went away (a closed pipe)
        // ends it quietly at its next line (write fails with EPIPE).
        signal(SIGTERM) { _ in _exit(0) }
        signal(SIGINT) { _ in _exit(0) }
        signal(SIGPIPE, SIG_IGN)
        try StatusFeed.follow(address: address, format: format) { Self.write($0) }
        while true { pause() }
    }

    /// One line on standard output, unbuffered (a bar reads it at once); a closed pipe ends
    /// the process with status 0.
    static func write(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(1, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                _exit(0)
            }
            offset += written
        }
    }
}
