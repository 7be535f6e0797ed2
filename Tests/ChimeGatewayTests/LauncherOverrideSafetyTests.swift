import ChimeCore
import ChimeGateway
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The launcher overrides never lose a person's file: entries linked from elsewhere, data
/// directories named more than one way.
@Suite struct LauncherOverrideSafetyTests {
    static let own = "[Desktop Entry]\nType=Application\nName=Mine\nExec=mine %U\n# mine\n"

    @Test func refusesThePersonsOwnEntryWhenItHasOtherHardLinks() throws {
        // Given the person's entry, hard-linked from a dotfiles repository
        let fixture = try XDGFixture()
        let target = fixture.root + "/dotfiles/mine.desktop"
        try fixture.write(Self.own, to: target)
        try FileManager.default.createDirectory(atPath: fixture.home + "/applications", withIntermediateDirectories: true)
        let ownPath = fixture.home + "/applications/mine.desktop"
        #expect(link(target, ownPath) == 0)
        let before = try fixture.tree()

        // When it is gated, then it is refused in one line naming the file, and nothing is touched
        let error = #expect(throws: ChimeError.self) { try fixture.overrides.gate(DesktopFileID("mine"), chime: fixture.chime) }
        #expect(error?.code == .conflict)
        #expect(error?.message.contains("'\(ownPath)' has 2 hard links") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("\n") == false)
        #expect(try fixture.tree() == before)
        var info = stat()
        #expect(lstat(ownPath, &info) == 0 && info.st_nlink == 2)
    }

    /// `$XDG_DATA_DIRS` naming the data home another way.
    static let spellings: [String] = ["//", "/./", "/../share/", "link"]

    @Test(arguments: spellings)
    func theDataHomeNamedAnotherWayInTheDataDirectoriesIsStillTheDataHome(_ spelling: String) throws {
        // Given a system entry, and XDG_DATA_DIRS naming the data home first, another way
        let fixture = try XDGFixture()
        try fixture.write("[Desktop Entry]\nType=Application\nName=App\nExec=app %f\n", to: fixture.system + "/applications/app.desktop")
        let alias: String
        switch spelling {
        case "link":
            // Outside the fixture's root, whose tree is compared.
            alias = FileManager.default.temporaryDirectory.path + "/chime-gate-link-" + UUID().uuidString
            try FileManager.default.createSymbolicLink(atPath: alias, withDestinationPath: fixture.home)
        case "/../share/":
            alias = fixture.home + "/../share/"
        default:
            alias = fixture.home.replacingOccurrences(of: "/.local/", with: "/.local" + spelling)
        }
        defer { if spelling == "link" { try? FileManager.default.removeItem(atPath: alias) } }
        let before = try fixture.tree()
        var environment = fixture.environment
        environment["XDG_DATA_DIRS"] = alias + ":" + (environment["XDG_DATA_DIRS"] ?? "")
        let overrides = try LauncherOverrides(environment: environment)
        let id = try DesktopFileID("app")

        // When it is gated, then list, doctor and remove see the system's entry as its original
        let gated = try overrides.gate(id, chime: fixture.chime)
        #expect(gated.originalPath == fixture.system + "/applications/app.desktop")
        #expect(try overrides.list().map(\.status) == [.ok])
        #expect(try overrides.doctor().isEmpty)
        try overrides.remove(id)
        #expect(try fixture.tree() == before)
    }
}
