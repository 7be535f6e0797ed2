import Foundation

/// Where Chime's shipped data (the focus icons, the gate's quotes) is found, in order:
/// `$XDG_DATA_HOME/chime/NAME` (or `~/.local/share/chime/NAME`: a person's own files first),
/// each of `$XDG_DATA_DIRS` + `/chime/NAME` (a system package), `../share/chime/NAME` beside
/// the executable (`scripts/quickstart` installs there), and the source tree's `Resources/NAME`
/// above it (a development build).
public enum DataDirectories {
    /// The directories for `name` ("icons", "quotes"), in the order they are searched.
    public static func search(_ name: String, environment: [String: String], executable: String) -> [String] {
        var result: [String] = []
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") {
            result.append(data + "/chime/" + name)
        } else if let home = environment["HOME"], home.hasPrefix("/") {
            result.append(home + "/.local/share/chime/" + name)
        }
        let dataDirs = environment["XDG_DATA_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share"
        for directory in dataDirs.split(separator: ":") where directory.hasPrefix("/") {
            result.append(directory + "/chime/" + name)
        }
        if !executable.isEmpty {
            let resolved = URL(fileURLWithPath: executable).resolvingSymlinksInPath().deletingLastPathComponent()
            result.append(resolved.deletingLastPathComponent().path + "/share/chime/" + name)
            var directory = resolved
            for _ in 0..<4 {
                result.append(directory.path + "/Resources/" + name)
                directory = directory.deletingLastPathComponent()
            }
        }
        return result
    }

    /// This process's executable (`/proc/self/exe`: argv[0] may be a bare name found on PATH).
    public static var executablePath: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments.first ?? ""
    }
}
