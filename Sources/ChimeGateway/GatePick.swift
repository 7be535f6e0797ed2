import ChimeCore
import Foundation

/// A program `chime gate add --pick` offers: its name as launchers show it (`Name=`), and its
/// desktop entry id.
public struct PickableProgram: Sendable, Hashable {
    public var id: DesktopFileID
    /// `Name=` of its entry (the id when it has none).
    public var name: String
    /// What the list shows: the name, with the id after it when another program has the same name.
    public var label: String

    public init(id: DesktopFileID, name: String, label: String) {
        (self.id, self.name, self.label) = (id, name, label)
    }
}

extension LauncherOverrides {
    /// The programs a person can gate, by name (then id): every installed application entry a
    /// launcher shows (`Type=Application`, not `NoDisplay` or `Hidden`), but those already gated
    /// (`gated`) and Chime's own. Two with the same name say their ids (`Image Viewer (eog.desktop)`). Reads only.
    public func pickable(gated: Set<DesktopFileID>) -> [PickableProgram] {
        var programs: [(id: DesktopFileID, name: String)] = []
        // (Not Chime's own app, shown in the app grid: Chime does not gate itself.)
        for (id, location) in installed() where !gated.contains(id) && id.rawValue != ApplicationID.current + ".desktop" {
            guard let data = FileManager.default.contents(atPath: location.path),
                let entry = try? DesktopEntry(data: data, path: location.path)
            else { continue }
            guard entry.value("Type") == "Application", !entry.isTrue("NoDisplay"), !entry.isTrue("Hidden") else { continue }
            // Chime's own overrides are gated programs (a gate left in place is still gated).
            guard entry.value(Self.marker) == nil else { continue }
            let name = entry.value("Name").map(UserText.oneLine) ?? ""
            programs.append((id, name.isEmpty ? id.rawValue : name))
        }
        programs.sort { ($0.name.lowercased(), $0.id) < ($1.name.lowercased(), $1.id) }
        var counts: [String: Int] = [:]
        for program in programs { counts[program.name.lowercased(), default: 0] += 1 }
        return programs.map { program in
            let shared = (counts[program.name.lowercased()] ?? 0) > 1
            return PickableProgram(id: program.id, name: program.name, label: shared ? "\(program.name) (\(program.id))" : program.name)
        }
    }
}
