import ChimeCore
import ChimeGateway
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The launcher overrides never lose a person's file: entries linked from elsewhere.
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
}
