import ChimeCore
import Foundation

#if canImport(Glibc)
import Glibc

private let systemWrite = Glibc.write
#elseif canImport(Darwin)
import Darwin

private let systemWrite = Darwin.write
#endif

/// The directories the XDG Base Directory Specification names for data: where desktop entries
/// are found (`applications/` under each) and where Chime keeps its own files.
public struct XDGDataDirectories: Sendable, Equatable {
    /// `$XDG_DATA_HOME`, or `$HOME/.local/share`: the person's own; launcher overrides go here.
    public var home: String
    /// `$XDG_DATA_DIRS`, or `/usr/local/share:/usr/share`, most important first. Flatpak
    /// (`/var/lib/flatpak/exports/share`, `~/.local/share/flatpak/exports/share`) and Snap
    /// (`/var/lib/snapd/desktop`) add their exports here in a session that has them.
    public var directories: [String]

    /// The directories given, as they are (absolute, without a trailing `/`).
    public init(home: String, directories: [String]) {
        (self.home, self.directories) = (home, directories)
    }

    /// Reads the directories from `environment` (the process's, or a test's own), never from
    /// the process itself. Relative paths are ignored, as the specification says.
    ///
    /// - Throws: ``ChimeError`` `.usage` when neither an absolute `XDG_DATA_HOME` nor `HOME` is set.
    public init(environment: [String: String]) throws {
        if let home = environment["XDG_DATA_HOME"], home.hasPrefix("/") {
            self.home = Self.trimmed(home)
        } else if let user = environment["HOME"], user.hasPrefix("/") {
            self.home = Self.trimmed(user) + "/.local/share"
        } else {
            throw ChimeError(
                .usage,
                "no data directory: XDG_DATA_HOME is '\(environment["XDG_DATA_HOME"] ?? "")' and HOME is '\(environment["HOME"] ?? "")'; expected an absolute path in either"
            )
        }
        let listed = (environment["XDG_DATA_DIRS"] ?? "").split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
        directories = (listed.isEmpty ? ["/usr/local/share", "/usr/share"] : listed).map(Self.trimmed)
    }

    private static func trimmed(_ path: String) -> String {
        var path = path
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        return path
    }
}

/// One launcher override Chime wrote, and how it stands now.
public struct LauncherOverride: Sendable, Equatable {
    /// How an override stands, as ``LauncherOverrides/list()`` and ``LauncherOverrides/doctor()`` report it.
    public enum Status: String, Sendable, Equatable, Codable, CaseIterable {
        /// The override is as Chime wrote it and wraps the original as it is now.
        case ok
        /// The original changed since (a package update): ``LauncherOverrides/refresh(_:)`` writes
        /// the override again from the new original.
        case originalChanged = "original_changed"
        /// The original is gone (the program was uninstalled): the override only hides that.
        case originalGone = "original_gone"
        /// The person edited the override after Chime wrote it: Chime leaves it alone.
        case overrideEdited = "override_edited"
        /// The override file is gone: the program opens without a gate.
        case overrideMissing = "override_missing"
        /// The `chime` program the override runs is not there or not executable any more: the
        /// launcher cannot start the program until the override is refreshed or removed.
        case chimeMissing = "chime_missing"
        /// A change Chime was making was cut short (the process was killed, the machine went
        /// down): the file in the override's place is one Chime knows, the person's own entry as
        /// it was or the override before a refresh, and the original is kept in the record.
        /// ``LauncherOverrides/refresh(_:)`` finishes writing the gate, ``LauncherOverrides/remove(_:)``
        /// finishes removing it.
        case unfinished
    }

    /// The desktop file id the override shadows.
    public var id: DesktopFileID
    /// Where the override is (`$XDG_DATA_HOME/applications/ID`).
    public var path: String
    /// Where the original was when the override was written.
    public var originalPath: String
    /// Whether the original was the person's own entry at ``path``, which ``LauncherOverrides/remove(_:)`` puts back.
    public var wrapsOwnEntry: Bool
    /// The `chime` program the override runs.
    public var chime: String
    /// How the override stands now.
    public var status: Status

    /// What to do about ``status``, for people, in the library's terms (a command line adds its commands).
    public var advice: String {
        switch status {
        case .ok: "'\(id)' is gated"
        case .originalChanged:
            "the entry of '\(id)' at '\(originalPath)' changed since the gate was written (an update?): refresh the gate to wrap the new one"
        case .originalGone: "the entry of '\(id)' at '\(originalPath)' is gone (uninstalled?): remove the gate"
        case .overrideEdited:
            "'\(path)' was edited after Chime wrote it, so Chime leaves it alone: keep what you need from it, delete it, then remove the gate"
        case .overrideMissing: "'\(path)' is gone, so '\(id)' opens without a gate: refresh the gate to write it again, or remove the gate"
        case .chimeMissing: "'\(chime)', which '\(path)' runs, is not an executable file: refresh the gate with the chime installed now"
        case .unfinished:
            "Chime was stopped part-way through writing or removing the gate of '\(id)' ('\(path)' is as Chime left it, and the original is kept): refresh the gate to finish writing it, or remove the gate"
        }
    }

    /// An override and its status, as ``LauncherOverrides/list()`` makes them.
    public init(id: DesktopFileID, path: String, originalPath: String, wrapsOwnEntry: Bool, chime: String, status: Status) {
        self.id = id
        self.path = path
        self.originalPath = originalPath
        self.wrapsOwnEntry = wrapsOwnEntry
        self.chime = chime
        self.status = status
    }
}

/// Catches a program's launch without root: a desktop entry of the same id in
/// `$XDG_DATA_HOME/applications` shadows the program's own (launchers read that directory
/// first) and wraps its `Exec` in `chime gate open ID -- …`.
///
/// What was there is recorded under `$XDG_DATA_HOME/chime/gate/ID/`: a copy of the original
/// (compared byte for byte to notice a package update), its path, and a copy of the override as
/// written (to notice a person's edits). ``remove(_:)`` puts back exactly what was there.
///
/// Rules kept throughout:
/// - A file without Chime's mark (``marker``) is never deleted, nor overwritten unless it is
///   first copied aside: a person's own entry at the override's path is the original to wrap,
///   and comes back byte for byte on remove. A person's own entry that is a symbolic link or
///   has other hard links is refused: replacing it would break the link.
/// - An override the person edited after Chime wrote it is left alone: ``remove(_:)`` and
///   ``refresh(_:)`` refuse it, naming the file; deleting it by hand and removing again works.
///   A file Chime knows (the override as written, the one before a refresh, the person's own
///   entry as it was) is never taken for an edit.
/// - One command at a time: every command that writes holds an exclusive lock (`flock` on
///   `.lock` in ``stateDirectory``) and reads the record again under it; reading commands hold
///   it shared.
/// - Writes are atomic (a temporary file in the same directory, then a rename) and keep the
///   original's permissions, in an order such that a command killed at any point leaves a state
///   the next command recognises and finishes (see ``LauncherOverride/Status/unfinished``); the
///   next command that writes deletes the temporary files and half-made records a killed one
///   left. `update-desktop-database` is never run.
public struct LauncherOverrides: Sendable {
    /// The key that marks a desktop entry as Chime's; its value is the id it gates.
    public static let marker = "X-Chime-Gate"

    /// Where entries are looked up and overrides written.
    public var data: XDGDataDirectories

    /// Test-only: called before each change the gate's commands make to a file or directory
    /// (made, written, renamed into place, deleted), with what the change is. Chime's crash
    /// tests set it (in a debug build of `chime`, through `CHIME_TEST_GATE_KILL_AT`) to kill the
    /// process before each change in turn; nothing else sets it, and nil does nothing.
    public var beforeChange: (@Sendable (String) -> Void)?

    /// Overrides in the data directories `data`.
    public init(data: XDGDataDirectories) {
        self.data = data
    }

    /// Overrides in the data directories `environment` names (see ``XDGDataDirectories/init(environment:)``).
    public init(environment: [String: String]) throws {
        self.init(data: try XDGDataDirectories(environment: environment))
    }

    /// Chime's own directory for the gate's records: `$XDG_DATA_HOME/chime/gate`.
    public var stateDirectory: String { data.home + "/chime/gate" }

    // MARK: Finding entries

    /// Where a desktop entry was found.
    public struct Location: Sendable, Equatable {
        /// The data directory (`/usr/share`).
        public var base: String
        /// The path under its `applications/` (`kde4/foo.desktop`).
        public var relativePath: String
        /// The whole path.
        public var path: String { base + "/applications/" + relativePath }
    }

    /// The entry launchers use for `id`: the first found in `$XDG_DATA_HOME`, then in each of
    /// `$XDG_DATA_DIRS` in order; nil when there is none.
    public func find(_ id: DesktopFileID) -> Location? {
        find(id, in: [data.home] + data.directories)
    }

    /// The entry `id` would have without the person's own directory: the original of an override.
    func findSystem(_ id: DesktopFileID) -> Location? {
        // By real path: `$XDG_DATA_DIRS` may name the data home another way (`/x//data`, `/x/./data`, a link).
        let home = Self.canonical(data.home)
        return find(id, in: data.directories.filter { Self.canonical($0) != home })
    }

    /// `path` with its links resolved when it exists, else with repeated `/`, `.` and `..`
    /// segments and a trailing `/` taken out.
    static func canonical(_ path: String) -> String {
        if let resolved = realpath(path, nil) {
            defer { free(resolved) }
            return String(cString: resolved)
        }
        var segments: [Substring] = []
        for segment in path.split(separator: "/") where segment != "." {
            if segment == ".." {
                _ = segments.popLast()
            } else {
                segments.append(segment)
            }
        }
        return "/" + segments.joined(separator: "/")
    }

    private func find(_ id: DesktopFileID, in bases: [String]) -> Location? {
        for base in bases {
            for relative in id.candidatePaths where isRegularFile(base + "/applications/" + relative) {
                return Location(base: base, relativePath: relative)
            }
        }
        return nil
    }

    /// Every desktop entry launchers can see, each id with the entry that wins for it (the
    /// first data directory that has it), Chime's own overrides included.
    public func installed() -> [DesktopFileID: Location] {
        var found: [DesktopFileID: Location] = [:]
        for base in [data.home] + data.directories {
            let applications = base + "/applications"
            guard let paths = FileManager.default.subpaths(atPath: applications) else { continue }
            for relative in paths.sorted() where relative.hasSuffix(".desktop") && isRegularFile(applications + "/" + relative) {
                guard let id = try? DesktopFileID(relativePath: relative), found[id] == nil else { continue }
                found[id] = Location(base: base, relativePath: relative)
            }
        }
        return found
    }

    // MARK: Wrapping

    /// The override of `original`: its `Exec`, and the `Exec` of every `[Desktop Action NAME]`,
    /// wrapped as `CHIME gate open ID -- ARGV…` (`… open ID --action NAME -- ARGV…`) with field
    /// codes intact; `DBusActivatable` dropped (launchers would activate the program over D-Bus
    /// and never run `Exec`); Chime's ``marker`` added; everything else kept as it was.
    ///
    /// `%k` in the original then expands to the override's path, not the original's.
    ///
    /// - Parameter path: where `original` was read from, named in errors.
    /// - Throws: ``ChimeError`` `.notFound` when the original is `Hidden=true` (the specification's
    ///   "deleted"); `.usage` when it has no `[Desktop Entry]` group or a group twice, is not `Type=Application`,
    ///   has no `Exec` (a program started by D-Bus activation only, which Chime cannot catch),
    ///   carries Chime's mark already, is Chime's own entry, or has an `Exec` that does not parse.
    public static func wrap(_ original: DesktopEntry, id: DesktopFileID, chime: String, path: String) throws -> DesktopEntry {
        let main = "Desktop Entry"
        guard original.groups.contains(main) else {
            throw ChimeError(.usage, "desktop entry '\(path)' has no [Desktop Entry] group: expected a desktop entry file")
        }
        if let repeated = Dictionary(grouping: original.groups, by: { $0 }).first(where: { $0.value.count > 1 })?.key {
            // Readers differ on such a file (GLib merges the groups): Chime could not be sure to wrap what runs.
            throw ChimeError(
                .usage,
                "desktop entry '\(path)' has the group [\(repeated)] twice: expected each group once, as the specification requires"
            )
        }
        guard id.rawValue != ApplicationID.current + ".desktop" else {
            throw ChimeError(.usage, "'\(id)' is Chime's own app: expected another program (Chime does not gate itself)")
        }
        guard original.value(marker) == nil else {
            throw ChimeError(
                .usage,
                "desktop entry '\(path)' is already Chime's gate (it has \(marker)=): expected the program's own entry"
            )
        }
        if original.isTrue("Hidden") {
            throw ChimeError(
                .notFound,
                "desktop entry '\(path)' has Hidden=true, which means deleted: there is no program '\(id)' to gate"
            )
        }
        if let type = original.value("Type"), type != "Application" {
            throw ChimeError(.usage, "desktop entry '\(path)' has Type=\(type): expected Type=Application, only programs can be gated")
        }
        guard let exec = original.value("Exec") else {
            let why =
                original.isTrue("DBusActivatable")
                ? "it is started by D-Bus activation only (DBusActivatable=true), which Chime cannot catch without root"
                : "expected an Exec key naming the program to start"
            throw ChimeError(.usage, "desktop entry '\(path)' has no Exec key: \(why)")
        }
        var override = original
        override.setValue(wrapped(try Exec.split(exec), id: id, chime: chime, action: nil), for: "Exec")
        for group in original.groups where group.hasPrefix("Desktop Action ") {
            guard let actionExec = original.value("Exec", in: group) else { continue }
            let action = String(group.dropFirst("Desktop Action ".count))
            override.setValue(wrapped(try Exec.split(actionExec), id: id, chime: chime, action: action), for: "Exec", in: group)
        }
        override.removeValue(for: "DBusActivatable")
        override.setValue(id.rawValue, for: marker)
        return override
    }

    /// The arguments of a wrapped `Exec`, quoted for the file.
    private static func wrapped(_ argv: [String], id: DesktopFileID, chime: String, action: String?) -> String {
        let open = [chime, "gate", "open", id.rawValue] + (action.map { ["--action", $0] } ?? []) + ["--"]
        // `%` in Chime's own arguments must not read as a field code.
        return Exec.join(open.map { $0.replacingOccurrences(of: "%", with: "%%") } + argv)
    }

    // MARK: Gate, refresh, remove

    /// Gates `id`: writes the override that wraps its entry, and records what was there.
    ///
    /// The original is the entry launchers use now: the person's own in `$XDG_DATA_HOME` when
    /// they have one (it is copied aside and put back by ``remove(_:)``), else the first in
    /// `$XDG_DATA_DIRS`. An entry in a subdirectory keeps its path (`kde4/foo.desktop`).
    /// A gate whose override is not in place (``LauncherOverride/Status/overrideMissing``,
    /// ``LauncherOverride/Status/unfinished``) is written again.
    ///
    /// - Parameter chime: the absolute path of the `chime` program the override runs.
    /// - Returns: the override written.
    /// - Throws: ``ChimeError`` `.usage` when `chime` is not absolute or the entry cannot be
    ///   wrapped (see ``wrap(_:id:chime:path:)``); `.notFound` when no directory has the id;
    ///   `.conflict` when it is gated already, a file is in the way, or the person's own entry is
    ///   a symbolic link or has other hard links; `.failure` when a file cannot be written.
    @discardableResult
    public func gate(_ id: DesktopFileID, chime: String) throws -> LauncherOverride {
        guard chime.hasPrefix("/") else {
            throw ChimeError.invalid("chime path", chime, expected: "an absolute path, such as /usr/bin/chime")
        }
        return try exclusively { held in try gate(id, chime: chime, held: held) }
    }

    private func gate(_ id: DesktopFileID, chime: String, held: Held) throws -> LauncherOverride {
        if isRegularFile(recordPath(id)) {
            let record = try loadRecord(id)
            let current = try status(of: record)
            if [.overrideMissing, .unfinished].contains(current.status) { return try refresh(id, chime: chime, held: held) }
            throw ChimeError(
                .conflict,
                "'\(id)' is gated already (by '\(record.overridePath)'): refresh the gate to write it again, or remove it first"
            )
        }
        guard let location = find(id) else {
            let stem = id.rawValue.dropLast(".desktop".count).lowercased()
            let similar = installed().keys.map(\.rawValue).filter { $0.lowercased().contains(stem) }.sorted().prefix(5)
            throw ChimeError(
                .notFound,
                "no desktop entry '\(id)' under applications/ in \(([data.home] + data.directories).joined(separator: ":")): expected the id of an installed program"
                    + (similar.isEmpty ? "" : " (similar: \(similar.joined(separator: ", ")))")
            )
        }
        let ownEntry = location.base == data.home
        if ownEntry, let target = try? FileManager.default.destinationOfSymbolicLink(atPath: location.path) {
            // Replacing it would turn the link (a dotfile manager's, say) into a file, and
            // putting it back would not bring the link back.
            throw ChimeError(
                .conflict,
                "'\(location.path)' is a symbolic link (to '\(target)'): Chime gates only a regular file there; copy the entry in place of the link, then gate again"
            )
        }
        var info = stat()
        if ownEntry, lstat(location.path, &info) == 0, info.st_nlink > 1 {
            // The same: the override would be a new file, and the other names would keep the old one.
            throw ChimeError(
                .conflict,
                "'\(location.path)' has \(info.st_nlink) hard links (a dotfiles repository's, say): Chime gates only a file of its own there; copy the entry in place of the link, then gate again"
            )
        }
        let originalData = try read(location.path)
        let original = try DesktopEntry(data: originalData, path: location.path)
        if ownEntry && original.value(Self.marker) != nil {
            throw ChimeError(
                .conflict,
                "'\(location.path)' has Chime's mark (\(Self.marker)) but Chime has no record of it in \(stateDirectory): delete it by hand, then gate again"
            )
        }
        let override = try Self.wrap(original, id: id, chime: chime, path: location.path)
        let overridePath = data.home + "/applications/" + location.relativePath
        if !ownEntry && fileExists(overridePath) {
            throw ChimeError(.conflict, "'\(overridePath)' is in the way of the override and is not Chime's: move it away, then gate again")
        }
        let mode = try permissions(location.path)
        let overrideDirectory = directory(of: overridePath)
        var created = held.made + inheritedDirectories(for: [overrideDirectory, recordDirectory(id)])
        created += try makeDirectories(recordDirectory(id))
        // Recorded before they are made: a crash in between leaves no directory nothing knows about.
        created += missingDirectories(overrideDirectory)
        let record = Record(
            id: id,
            overridePath: overridePath,
            originalPath: location.path,
            wrapsOwnEntry: ownEntry,
            mode: mode,
            chime: chime,
            createdDirectories: Array(Set(created)).sorted()
        )
        do {
            // The record first (its record.json last of all): a crash before that leaves a
            // half-made record the next command deletes; after it, a gate doctor reports
            // (override missing, or unfinished), never an override nothing knows about.
            try writeRecord(record, original: originalData, override: override.data, previous: nil)
            _ = try makeDirectories(overrideDirectory)
            try writeAtomically(override.data, to: overridePath, mode: mode)
        } catch {
            try? removeRecordFiles(id)
            removeEmptyDirectories(record.createdDirectories)
            throw error
        }
        return try status(of: record)
    }

    /// Writes `id`'s override again from its original as it is now (after a package update, or
    /// when the override went missing or `chime` moved, or a change was cut short).
    ///
    /// - Parameter chime: the `chime` program to run from now on; nil keeps the one recorded.
    /// - Throws: ``ChimeError`` `.notFound` when `id` is not gated or its original is gone;
    ///   `.conflict` when the person edited the override; `.usage` when the new original cannot
    ///   be wrapped.
    @discardableResult
    public func refresh(_ id: DesktopFileID, chime: String? = nil) throws -> LauncherOverride {
        if let chime, !chime.hasPrefix("/") {
            throw ChimeError.invalid("chime path", chime, expected: "an absolute path, such as /usr/bin/chime")
        }
        guard let refreshed = try ifGated({ held in try refresh(id, chime: chime, held: held) }) else { throw notGated(id) }
        return refreshed
    }

    private func refresh(_ id: DesktopFileID, chime: String?, held: Held) throws -> LauncherOverride {
        var record = try loadRecord(id)
        if let chime { record.chime = chime }
        let inPlace = try knownFile(record)
        let originalData: Data
        if record.wrapsOwnEntry {
            originalData = try read(originalCopyPath(id))
        } else {
            guard let location = findSystem(id) else { throw gone(record) }
            originalData = try read(location.path)
            record.originalPath = location.path
            record.mode = try permissions(location.path)
        }
        let original = try DesktopEntry(data: originalData, path: record.originalPath)
        let override = try Self.wrap(original, id: id, chime: record.chime, path: record.originalPath)
        let overrideDirectory = directory(of: record.overridePath)
        record.createdDirectories = Array(Set(record.createdDirectories + missingDirectories(overrideDirectory))).sorted()
        // The override in place becomes the previous one, which stays known until the new one
        // is in place (an unfinished refresh's previous one stays as it is).
        let previous = inPlace == .override ? try read(overrideCopyPath(id)) : nil
        try writeRecord(record, original: originalData, override: override.data, previous: previous)
        _ = try makeDirectories(overrideDirectory)
        try writeAtomically(override.data, to: record.overridePath, mode: record.mode)
        try deleteFile(previousCopyPath(id))
        return try status(of: record)
    }

    /// Un-gates `id`: deletes the override (or puts the person's own entry back, byte for byte
    /// and with its permissions), then Chime's record of it and the directories Chime made that
    /// are now empty.
    ///
    /// An override the person edited after Chime wrote it is refused, not deleted: Chime cannot
    /// tell their changes from its own. Deleting it by hand and removing again finishes the job
    /// (then the person's own entry, if there was one, is put back).
    ///
    /// - Throws: ``ChimeError`` `.notFound` when `id` is not gated; `.conflict` when the override
    ///   was edited; `.failure` when a file cannot be written or deleted.
    public func remove(_ id: DesktopFileID) throws {
        guard try ifGated({ held in try remove(id, held: held) }) != nil else { throw notGated(id) }
    }

    private func remove(_ id: DesktopFileID, held: Held) throws {
        let record = try loadRecord(id)
        switch try fileInPlace(record) {
        case .edited:
            throw edited(record)
        case .original:
            // The person's own entry is back already (a remove cut short): left as it is.
            break
        case .missing, .override, .previous:
            if record.wrapsOwnEntry {
                try writeAtomically(read(originalCopyPath(id)), to: record.overridePath, mode: record.mode)
            } else {
                try deleteFile(record.overridePath)
            }
        }
        // The override's directories before the record that names them: a crash in between
        // leaves a gate whose override is missing, which remove finishes.
        removeEmptyDirectories(record.createdDirectories)
        try removeRecordFiles(id)
        held.cleanup += record.createdDirectories + inheritedDirectories(for: [stateDirectory])
    }

    /// What ``off()`` did.
    public struct OffReport: Sendable, Equatable {
        /// The ids un-gated.
        public var removed: [DesktopFileID] = []
        /// The ids left gated, each with why (an edited override, a file that cannot be written).
        public var refused: [DesktopFileID: ChimeError] = [:]
    }

    /// Un-gates every gated id (see ``remove(_:)``), going on past the ones that refuse.
    ///
    /// - Throws: ``ChimeError`` only when the records cannot be read at all.
    public func off() throws -> OffReport {
        try ifGated { held in
            var report = OffReport()
            for id in try gatedIDs() {
                do {
                    try remove(id, held: held)
                    report.removed.append(id)
                } catch let error as ChimeError {
                    report.refused[id] = error
                } catch {
                    report.refused[id] = ChimeError(.failure, "cannot remove the gate of '\(id)': \(error)")
                }
            }
            return report
        } ?? OffReport()
    }

    /// Every gated id's override and how it stands, in id order.
    ///
    /// - Throws: ``ChimeError`` `.failure` when a record cannot be read.
    public func list() throws -> [LauncherOverride] {
        try shared { try gatedIDs().map { try status(of: loadRecord($0)) } }
    }

    /// The overrides that need something done (every status but ``LauncherOverride/Status/ok``),
    /// each saying what in ``LauncherOverride/advice``.
    public func doctor() throws -> [LauncherOverride] {
        try list().filter { $0.status != .ok }
    }

    /// The statuses a refresh mends.
    public static let mendable: Set<LauncherOverride.Status> = [.originalChanged, .overrideMissing, .chimeMissing, .unfinished]

    /// Every gated id's override, in id order, after writing again (with `chime`) those whose
    /// status is one a refresh mends (``mendable``); all of it holding the lock, so that a
    /// gate removed meanwhile is not written again.
    ///
    /// - Throws: ``ChimeError`` as ``refresh(_:chime:)`` does, for the first that fails.
    public func repair(chime: String) throws -> [LauncherOverride] {
        guard chime.hasPrefix("/") else {
            throw ChimeError.invalid("chime path", chime, expected: "an absolute path, such as /usr/bin/chime")
        }
        return try ifGated { held in
            try gatedIDs().map { id in
                let found = try status(of: loadRecord(id))
                return Self.mendable.contains(found.status) ? try refresh(id, chime: chime, held: held) : found
            }
        } ?? []
    }

    /// How `id`'s override stands.
    ///
    /// - Throws: ``ChimeError`` `.notFound` when `id` is not gated.
    public func status(_ id: DesktopFileID) throws -> LauncherOverride {
        try shared { try status(of: loadRecord(id)) }
    }

    private func status(of record: Record) throws -> LauncherOverride {
        let status: LauncherOverride.Status
        switch try fileInPlace(record) {
        case .missing: status = .overrideMissing
        case .edited: status = .overrideEdited
        case .original, .previous: status = .unfinished
        case .override:
            if !record.wrapsOwnEntry, let location = findSystem(record.id) {
                status =
                    try Self.canonical(location.path) == Self.canonical(record.originalPath)
                    && read(location.path) == read(originalCopyPath(record.id))
                    ? (isExecutable(record.chime) ? .ok : .chimeMissing) : .originalChanged
            } else if !record.wrapsOwnEntry {
                status = .originalGone
            } else {
                status = isExecutable(record.chime) ? .ok : .chimeMissing
            }
        }
        return LauncherOverride(
            id: record.id,
            path: record.overridePath,
            originalPath: record.originalPath,
            wrapsOwnEntry: record.wrapsOwnEntry,
            chime: record.chime,
            status: status
        )
    }

    /// What is at an override's path.
    private enum InPlace {
        /// Nothing.
        case missing
        /// The override as Chime last wrote it.
        case override
        /// The override before a refresh that was cut short.
        case previous
        /// The person's own entry as it was (a gate of their own entry not written yet, or put back).
        case original
        /// A file Chime does not know: the person's.
        case edited
    }

    private func fileInPlace(_ record: Record) throws -> InPlace {
        guard fileExists(record.overridePath) else { return .missing }
        let bytes = try read(record.overridePath)
        if bytes == (try read(overrideCopyPath(record.id))) { return .override }
        if isRegularFile(previousCopyPath(record.id)), bytes == (try read(previousCopyPath(record.id))) { return .previous }
        if record.wrapsOwnEntry, bytes == (try read(originalCopyPath(record.id))) { return .original }
        return .edited
    }

    /// What is at `record`'s override path, when it is a file Chime knows.
    /// - Throws: ``ChimeError`` `.conflict` when the person edited it.
    private func knownFile(_ record: Record) throws -> InPlace {
        let found = try fileInPlace(record)
        if found == .edited { throw edited(record) }
        return found
    }

    private func edited(_ record: Record) -> ChimeError {
        ChimeError(
            .conflict,
            "the override '\(record.overridePath)' was edited after Chime wrote it, so Chime leaves it alone: keep what you need from it, delete it, then remove the gate of '\(record.id)' again"
        )
    }

    private func gone(_ record: Record) -> ChimeError {
        ChimeError(
            .notFound,
            "the original of '\(record.id)' (was '\(record.originalPath)') is in none of \(data.directories.joined(separator: ":")): the program seems uninstalled; remove the gate of '\(record.id)'"
        )
    }

    private func notGated(_ id: DesktopFileID) -> ChimeError {
        let gated = (try? gatedIDs().map(\.rawValue).joined(separator: ", ")) ?? ""
        return ChimeError(.notFound, "'\(id)' is not gated: expected one of the gated ids (\(gated.isEmpty ? "none" : gated))")
    }

    // MARK: One command at a time

    private var lockPath: String { stateDirectory + "/.lock" }

    /// What a command holding the lock made, and the directories to delete when empty as it lets go.
    private final class Held {
        var made: [String] = []
        var cleanup: [String] = []
    }

    private enum LockMode { case create, existing, shared }

    /// Runs `body` holding the lock exclusively, making Chime's gate directory for it.
    private func exclusively<T>(_ body: (Held) throws -> T) throws -> T {
        guard let result = try locked(.create, body) else { throw ChimeError(.failure, "cannot take the gate's lock '\(lockPath)'") }
        return result
    }

    /// Runs `body` holding the lock exclusively; nil, without running it, when nothing was ever
    /// gated (Chime's gate directory does not exist).
    private func ifGated<T>(_ body: (Held) throws -> T) throws -> T? {
        try locked(.existing, body)
    }

    /// Runs `body` holding the lock shared (it only reads); without the lock when there is no lock file.
    private func shared<T>(_ body: () throws -> T) throws -> T {
        guard let result = try locked(.shared, { _ in try body() }) else { return try body() }
        return result
    }

    /// Takes the lock (`flock` on `.lock` in the gate directory), runs `body`, lets go.
    ///
    /// A writer first deletes what a killed command left (``recover()``); as it lets go with
    /// nothing gated, it deletes the lock file and Chime's empty directories, still holding the
    /// lock: a command waiting on the deleted file then finds the path names another file (or
    /// none) and takes the lock again.
    private func locked<T>(_ mode: LockMode, _ body: (Held) throws -> T) throws -> T? {
        let held = Held()
        var descriptor: Int32 = -1
        while descriptor < 0 {
            switch mode {
            case .create: held.made += try makeDirectories(stateDirectory)
            case .existing: guard fileExists(stateDirectory) else { return nil }
            case .shared: break
            }
            if mode != .shared && !fileExists(lockPath) { change("create \(lockPath)") }
            // A reader only reads: it needs neither to write the lock file nor to make it.
            let opened = open(lockPath, mode == .shared ? O_RDONLY | O_CLOEXEC : O_RDWR | O_CLOEXEC | O_CREAT, mode_t(0o600))
            guard opened >= 0 else {
                if errno == ENOENT {
                    if mode == .shared { return nil }
                    continue
                }
                throw ChimeError(.failure, "cannot open the gate's lock '\(lockPath)': \(String(cString: strerror(errno)))")
            }
            var result: Int32
            repeat { result = flock(opened, mode == .shared ? LOCK_SH : LOCK_EX) } while result != 0 && errno == EINTR
            guard result == 0 else {
                let error = ChimeError(.failure, "cannot lock '\(lockPath)': \(String(cString: strerror(errno)))")
                close(opened)
                throw error
            }
            var taken = stat()
            var named = stat()
            if fstat(opened, &taken) == 0, stat(lockPath, &named) == 0, taken.st_dev == named.st_dev, taken.st_ino == named.st_ino {
                descriptor = opened
            } else {
                close(opened)
            }
        }
        defer { close(descriptor) }
        guard mode != .shared else { return try body(held) }
        recover()
        defer { letGo(held) }
        return try body(held)
    }

    /// With nothing gated: deletes the lock file and Chime's directories that are empty (those
    /// the command made, the gate directory, `chime/`); and the directories the command left to
    /// delete when empty.
    private func letGo(_ held: Held) {
        var directories = held.cleanup
        if ((try? gatedIDs()) ?? []).isEmpty {
            change("delete \(lockPath)")
            unlink(lockPath)
            directories += held.made + [stateDirectory, data.home + "/chime"]
        }
        removeEmptyDirectories(directories)
    }

    /// Deletes what a command killed part-way left of Chime's own: its temporary files (beside
    /// the records and the overrides), and a record directory without its `record.json`.
    private func recover() {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: stateDirectory) else { return }
        var directories: Set<String> = []
        var halfMade: [String] = []
        for name in names.sorted() where isDirectory(stateDirectory + "/" + name) {
            let directory = stateDirectory + "/" + name
            directories.insert(directory)
            if !isRegularFile(directory + "/record.json") {
                halfMade.append(directory)
            } else if let id = try? DesktopFileID(name), let record = try? loadRecord(id) {
                directories.insert(self.directory(of: record.overridePath))
            }
        }
        for directory in directories.sorted() {
            for name in ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
            where Self.isTemporaryName(name) {
                try? deleteFile(directory + "/" + name)
            }
        }
        for directory in halfMade {
            for name in ["override.desktop", "override.previous.desktop", "original.desktop"] {
                try? deleteFile(directory + "/" + name)
            }
            removeEmptyDirectories([directory])
        }
    }

    /// Whether `name` is that of one of ``writeAtomically(_:to:mode:)``'s temporary files.
    private static func isTemporaryName(_ name: String) -> Bool {
        name.hasPrefix(".chime-") && name.hasSuffix(".tmp") && UUID(uuidString: String(name.dropFirst(7).dropLast(4))) != nil
    }

    // MARK: Records

    /// What Chime keeps of one override, as `record.json` beside copies of the original and the override.
    private struct Record: Codable {
        var id: DesktopFileID
        var overridePath: String
        var originalPath: String
        var wrapsOwnEntry: Bool
        /// The original's permission bits, which the override and a restored entry get.
        var mode: UInt16
        var chime: String
        /// The directories Chime made (for this override, or inherited from another's record
        /// when shared), deleted when empty on remove.
        var createdDirectories: [String]
    }

    private func recordDirectory(_ id: DesktopFileID) -> String { stateDirectory + "/" + id.rawValue }
    private func recordPath(_ id: DesktopFileID) -> String { recordDirectory(id) + "/record.json" }
    private func originalCopyPath(_ id: DesktopFileID) -> String { recordDirectory(id) + "/original.desktop" }
    private func overrideCopyPath(_ id: DesktopFileID) -> String { recordDirectory(id) + "/override.desktop" }
    /// The override before the last refresh, kept until the refreshed one is in place.
    private func previousCopyPath(_ id: DesktopFileID) -> String { recordDirectory(id) + "/override.previous.desktop" }

    private func gatedIDs() throws -> [DesktopFileID] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: stateDirectory) else { return [] }
        return names.sorted().compactMap { name in
            guard isRegularFile(stateDirectory + "/" + name + "/record.json") else { return nil }
            return try? DesktopFileID(name)
        }
    }

    private func loadRecord(_ id: DesktopFileID) throws -> Record {
        guard isRegularFile(recordPath(id)) else { throw notGated(id) }
        do {
            let record = try JSONDecoder().decode(Record.self, from: read(recordPath(id)))
            guard record.id == id else { throw ChimeError(.failure, "record names '\(record.id)'") }
            return record
        } catch {
            throw ChimeError(
                .failure,
                "Chime's record '\(recordPath(id))' cannot be read (\(error)): delete its directory to forget the gate"
            )
        }
    }

    /// Writes the copies, then `record.json`: the previous override (when given), the override
    /// before the original, so that the override in place is known at every point between.
    private func writeRecord(_ record: Record, original: Data, override: Data, previous: Data?) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        if let previous { try writeAtomically(previous, to: previousCopyPath(record.id), mode: 0o600) }
        try writeAtomically(override, to: overrideCopyPath(record.id), mode: 0o600)
        try writeAtomically(original, to: originalCopyPath(record.id), mode: 0o600)
        try writeAtomically(encoder.encode(record), to: recordPath(record.id), mode: 0o600)
    }

    /// Deletes the record, `record.json` first (without it the rest is a half-made record the
    /// next command deletes), then its directory.
    private func removeRecordFiles(_ id: DesktopFileID) throws {
        for path in [recordPath(id), overrideCopyPath(id), previousCopyPath(id), originalCopyPath(id)] { try deleteFile(path) }
        removeEmptyDirectories([recordDirectory(id)])
    }

    /// The directories other records say Chime made that are `paths` or above them: shared ones
    /// (`applications/`, `chime/gate/`), so that the last override removed deletes them.
    private func inheritedDirectories(for paths: [String]) -> [String] {
        let others = ((try? gatedIDs()) ?? []).compactMap { try? loadRecord($0) }.flatMap(\.createdDirectories)
        return others.filter { directory in paths.contains { $0 == directory || $0.hasPrefix(directory + "/") } }
    }

    // MARK: Files

    private func change(_ what: String) { beforeChange?(what) }

    private func read(_ path: String) throws -> Data {
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ChimeError(.failure, "cannot read '\(path)': \(error.localizedDescription)")
        }
    }

    /// Deletes the file at `path` when there is one.
    private func deleteFile(_ path: String) throws {
        guard fileExists(path) else { return }
        change("delete \(path)")
        guard unlink(path) == 0 || errno == ENOENT else {
            throw ChimeError(.failure, "cannot delete '\(path)': \(String(cString: strerror(errno)))")
        }
    }

    private func fileExists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    private func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    private func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    private func isExecutable(_ path: String) -> Bool {
        isRegularFile(path) && access(path, X_OK) == 0
    }

    private func permissions(_ path: String) throws -> UInt16 {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw ChimeError(.failure, "cannot read the permissions of '\(path)': \(String(cString: strerror(errno)))")
        }
        return UInt16(info.st_mode & 0o7777)
    }

    private func directory(of path: String) -> String {
        String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
    }

    /// `path` and those of its parents that do not exist, deepest first.
    private func missingDirectories(_ path: String) -> [String] {
        var missing: [String] = []
        var current = path
        while !current.isEmpty && !fileExists(current) {
            missing.append(current)
            current = directory(of: current)
        }
        return missing
    }

    /// Makes `path` and its missing parents (mode 0700 for Chime's own, 0755 otherwise, as
    /// umask allows); returns the ones it made.
    private func makeDirectories(_ path: String) throws -> [String] {
        var made: [String] = []
        for directory in missingDirectories(path).reversed() {
            let mode: mode_t = directory.hasPrefix(data.home + "/chime") ? 0o700 : 0o755
            change("make \(directory)")
            guard mkdir(directory, mode) == 0 || errno == EEXIST else {
                throw ChimeError(.failure, "cannot make the directory '\(directory)': \(String(cString: strerror(errno)))")
            }
            made.append(directory)
        }
        return made
    }

    /// Deletes those of `directories` that are empty, deepest first.
    private func removeEmptyDirectories(_ directories: [String]) {
        for directory in Set(directories).sorted(by: { $0.count > $1.count }) where isEmptyDirectory(directory) {
            change("delete \(directory)")
            rmdir(directory)
        }
    }

    private func isEmptyDirectory(_ path: String) -> Bool {
        isDirectory(path) && ((try? FileManager.default.contentsOfDirectory(atPath: path))?.isEmpty ?? false)
    }

    /// Writes `data` to a temporary file beside `path`, sets its permissions to `mode` (umask
    /// aside), flushes it and renames it over `path`.
    private func writeAtomically(_ data: Data, to path: String, mode: UInt16) throws {
        let temporary = directory(of: path) + "/.chime-" + UUID().uuidString + ".tmp"
        func failure(_ what: String) -> ChimeError {
            ChimeError(.failure, "cannot write '\(path)' (\(what)): \(String(cString: strerror(errno)))")
        }
        change("write \(temporary)")
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode_t(0o600))
        guard descriptor >= 0 else { throw failure("create a temporary file") }
        var closed = false
        defer {
            if !closed { close(descriptor) }
        }
        let written = data.withUnsafeBytes { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                let count = systemWrite(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }
                offset += count
            }
            return true
        }
        guard written, fchmod(descriptor, mode_t(mode)) == 0, fsync(descriptor) == 0 else {
            let error = failure("write")
            unlink(temporary)
            throw error
        }
        closed = true
        close(descriptor)
        change("rename \(temporary) to \(path)")
        guard rename(temporary, path) == 0 else {
            let error = failure("rename into place")
            unlink(temporary)
            throw error
        }
    }
}
