import Foundation

/// The environment of every process a test starts: a home and XDG directories of its own under
/// a test's directory, a fixed PATH, UTC, and nothing from the environment of whoever runs the
/// tests: not their `~/.local` (an installed chime, its icons), their `CHIME_STORE`, their
/// session bus or their display. A test that is about one of these variables adds it itself.
public enum IsolatedEnvironment {
    /// The system's directories only: no `~/bin` or `~/.local/bin` of the person running the tests.
    public static let path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

    /// The variables for processes rooted at `root`, whose `home` and `run` directories are made
    /// (mode 0700, as a login's runtime directory is).
    public static func variables(root: URL) throws -> [String: String] {
        let home = root.appendingPathComponent("home")
        let runtime = root.appendingPathComponent("run")
        for directory in [home, runtime] {
            try FileManager.default.createDirectory(
                at: directory,
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
        }
        return [
            "PATH": path,
            "LANG": "C.UTF-8",
            "TZ": "UTC",
            "HOME": home.path,
            "XDG_DATA_HOME": home.appendingPathComponent(".local/share").path,
            "XDG_CONFIG_HOME": home.appendingPathComponent(".config").path,
            "XDG_CACHE_HOME": home.appendingPathComponent(".cache").path,
            "XDG_STATE_HOME": home.appendingPathComponent(".local/state").path,
            "XDG_RUNTIME_DIR": runtime.path,
            // Not /usr/share: a chime installed system-wide (its icons) is not this build's.
            "XDG_DATA_DIRS": root.appendingPathComponent("share").path,
            "XDG_CONFIG_DIRS": root.appendingPathComponent("xdg").path,
            // No system bus: the machine's logind would give the idleness of whoever runs the
            // tests (`[focus] idle_pause`); a test that wants one points this at its own bus.
            "CHIME_SYSTEM_BUS_ADDRESS": "unix:path=" + runtime.appendingPathComponent("no-system-bus").path,
        ]
    }
}
