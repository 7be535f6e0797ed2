import ChimeCore
import ChimeRunner
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// An alert with a sound on the console: the terminal's bell (BEL), only on a terminal and
/// only in the human format; never in a file, a pipe or the JSON stream.
struct ConsoleBellTests {
    static let note: Note = {
        var note = Note(id: "tea", title: "Tea is ready", postedAt: Date(timeIntervalSince1970: 1_767_603_600))
        note.sound = "bell"
        return note
    }()

    /// A pseudo-terminal: the terminal side's descriptor and the reader's.
    static func terminal() throws -> (terminal: Int32, reader: Int32) {
        // posix_openpt, unlockpt and ptsname are hidden from Swift behind glibc's feature macros:
        // what they do on Linux (as TerminalGateTests' Pty does; TIOCSPTLCK and TIOCGPTN values).
        let reader = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        try #require(reader >= 0)
        var unlock: Int32 = 0
        try #require(ioctl(reader, UInt(0x4004_5431), &unlock) == 0)
        var number: UInt32 = 0
        try #require(ioctl(reader, UInt(0x8004_5430), &number) == 0)
        let terminal = open("/dev/pts/\(number)", O_RDWR | O_NOCTTY)
        try #require(terminal >= 0)
        // Raw: what is written arrives as written (no newline translation).
        var settings = termios()
        tcgetattr(terminal, &settings)
        cfmakeraw(&settings)
        tcsetattr(terminal, TCSANOW, &settings)
        return (terminal, reader)
    }

    static func read(_ fd: Int32) -> String {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = Glibc.read(fd, &buffer, buffer.count)
        return String(decoding: buffer.prefix(max(count, 0)), as: UTF8.self)
    }

    @Test(arguments: [ConsoleNotifier.Format.human, .json])
    func aSoundRingsTheBellOnATerminalInTheHumanFormatOnly(format: ConsoleNotifier.Format) async throws {
        let (terminal, reader) = try Self.terminal()
        defer {
            close(terminal)
            close(reader)
        }
        _ = try await ConsoleNotifier(format: format, fd: terminal, zone: { TimeZone(identifier: "UTC")! }).post(Self.note)
        let written = Self.read(reader)
        #expect(written.contains("Tea is ready"))
        #expect(written.contains(ConsoleBell.character) == (format == .human), "\(written.debugDescription)")
        // Without a sound, no bell.
        var quiet = Self.note
        quiet.sound = nil
        _ = try await ConsoleNotifier(format: format, fd: terminal).post(quiet)
        #expect(!Self.read(reader).contains(ConsoleBell.character))
    }

    @Test func noBellIntoAPipe() async throws {
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        defer {
            close(fds[0])
            close(fds[1])
        }
        _ = try await ConsoleNotifier(format: .human, fd: fds[1]).post(Self.note)
        let written = Self.read(fds[0])
        #expect(written.contains("Tea is ready"))
        #expect(!written.contains(ConsoleBell.character))
    }
}
