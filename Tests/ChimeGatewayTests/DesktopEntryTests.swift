import ChimeCore
import ChimeGateway
import Foundation
import Testing

@Suite struct DesktopEntryTests {
    static let awkwardFiles: [String] = [
        "",
        "\n",
        "[Desktop Entry]\nName=A\nExec=a %u\n",
        "[Desktop Entry]\nName=A\nExec=a",  // no final line feed
        "[Desktop Entry]\r\nName=A\r\nExec=a %u\r\n",  // CRLF
        "# comment before\n\n  \n[Desktop Entry]\n# a comment\nName = Spaced\nName[de]=Mit Leer zeichen\n\n\n",
        "Key=before any group\n[Desktop Entry]\nnot a key line\n[Broken\n=no key\nX-Unknown-Key=☃ ünïcödé\n",
        "[Desktop Entry]\nExec=sh -c \"echo \\\\\"hi\\\\\"\"\n\t# indented comment\n[Desktop Action x]\nExec=x\n",
    ]

    @Test(arguments: awkwardFiles)
    func roundTripsByteForByte(_ text: String) throws {
        let entry = try DesktopEntry(data: Data(text.utf8), path: "test.desktop")
        #expect(entry.data == Data(text.utf8))
    }

    @Test func refusesTextThatIsNotUTF8() {
        let error = #expect(throws: ChimeError.self) {
            try DesktopEntry(data: Data([0x5B, 0xFF, 0xFE, 0x5D]), path: "/x/bad.desktop")
        }
        #expect(error?.code == .usage)
        #expect(error?.message.contains("/x/bad.desktop") == true)
    }

    @Test func readsValuesGroupsAndLocales() {
        let entry = DesktopEntry(
            text: """
                # Written by hand
                [Desktop Entry]
                Name=Firefox
                Name[de]=Feuerfuchs
                Name[sr@latin] = Vatrena lisica
                Comment=Line one\\nline two\\sand\\ta tab\\\\
                Exec=firefox %u

                [Desktop Action new-window]
                Name=New Window
                Exec=firefox --new-window %u

                """
        )
        #expect(entry.groups == ["Desktop Entry", "Desktop Action new-window"])
        #expect(entry.value("Name") == "Firefox")
        #expect(entry.value("Name", locale: "de") == "Feuerfuchs")
        #expect(entry.value("Name", locale: "sr@latin") == "Vatrena lisica")
        #expect(entry.value("Comment") == "Line one\nline two and\ta tab\\")
        #expect(entry.value("Exec", in: "Desktop Action new-window") == "firefox --new-window %u")
        #expect(entry.value("Missing") == nil)
        #expect(entry.value("Name", in: "No Such Group") == nil)
    }

    @Test func setsAndRemovesValuesLeavingOtherLinesAlone() {
        var entry = DesktopEntry(text: "[Desktop Entry]\r\nName=A\r\nDBusActivatable=true\r\n\r\n[Desktop Action b]\r\nExec=b\r\n")
        entry.setValue("a \"%u\"", for: "Name")
        entry.setValue(" lead", for: "X-New")
        entry.removeValue(for: "DBusActivatable")
        entry.setValue("c", for: "Exec", in: "Desktop Action b")
        #expect(entry.text == "[Desktop Entry]\r\nName=a \"%u\"\r\nX-New=\\slead\r\n\r\n[Desktop Action b]\r\nExec=c\r\n")
        #expect(entry.value("X-New") == " lead")
    }

    @Test func aRepeatedKeyReadsAsItsLastAndIsSetOnce() {
        var entry = DesktopEntry(text: "[Desktop Entry]\nExec=first\nName=A\nExec=second\n[Other]\nExec=other\n")
        #expect(entry.value("Exec") == "second")
        entry.setValue("wrapped", for: "Exec")
        #expect(entry.text == "[Desktop Entry]\nExec=wrapped\nName=A\n[Other]\nExec=other\n")
    }

    @Test func removesLocalizedKeysToo() {
        var entry = DesktopEntry(text: "[Desktop Entry]\nName=A\nName[de]=B\nExec=a\n")
        entry.removeValue(for: "Name")
        #expect(entry.text == "[Desktop Entry]\nExec=a\n")
    }

    @Test func stringEscapesRoundTrip() {
        var generator = SplitMix64(seed: 7)
        let alphabet = Array(" \\\n\t\rsntr;a=é\"").map(String.init) + ["\u{301}", "\r\n"]
        for _ in 0..<2000 {
            let value = (0..<generator.next(upTo: 12)).map { _ in alphabet[generator.next(upTo: alphabet.count)] }.joined()
            #expect(DesktopEntry.unescape(DesktopEntry.escape(value)) == value, "\(value.debugDescription)")
            var entry = DesktopEntry(text: "[Desktop Entry]\n")
            entry.setValue(value, for: "Key")
            #expect(DesktopEntry(text: entry.text).value("Key") == value, "\(value.debugDescription)")
        }
    }

    @Test func desktopFileIDs() throws {
        #expect(try DesktopFileID("firefox").rawValue == "firefox.desktop")
        #expect(try DesktopFileID("org.mozilla.firefox.desktop").rawValue == "org.mozilla.firefox.desktop")
        #expect(try DesktopFileID(relativePath: "kde4/foo.desktop").rawValue == "kde4-foo.desktop")
        #expect(try DesktopFileID("kde4-foo").candidatePaths == ["kde4-foo.desktop", "kde4/foo.desktop"])
        #expect(try DesktopFileID("a-b-c").candidatePaths == ["a-b-c.desktop", "a/b-c.desktop", "a-b/c.desktop", "a/b/c.desktop"])
        for bad in ["", ".desktop", "a/b", "../x", "-x", "a\nb"] {
            let error = #expect(throws: ChimeError.self) { try DesktopFileID(bad) }
            #expect(error?.code == .usage)
            #expect(error?.message.contains("'\(ChimeError.escapingControlCharacters(bad))'") == true)
        }
    }
}

@Suite struct ExecTests {
    static let commandLines: [(String, [String])] = [
        ("firefox %u", ["firefox", "%u"]),
        ("/usr/share/code/code --new-window %F", ["/usr/share/code/code", "--new-window", "%F"]),
        ("env GDK_BACKEND=x11 prog %u", ["env", "GDK_BACKEND=x11", "prog", "%u"]),
        (
            "/usr/bin/flatpak run --branch=stable --arch=x86_64 --command=firefox org.mozilla.firefox @@u %u @@",
            ["/usr/bin/flatpak", "run", "--branch=stable", "--arch=x86_64", "--command=firefox", "org.mozilla.firefox", "@@u", "%u", "@@"]
        ),
        ("\"/opt/My App/app\" --title \"a \\\"b\\\" \\$HOME \\`x\\` \\\\\"", ["/opt/My App/app", "--title", "a \"b\" $HOME `x` \\"]),
        ("sh -c 'echo a  b' \"\"", ["sh", "-c", "echo a  b", ""]),
        ("  prog   --name=\"a b\"  ", ["prog", "--name=a b"]),
        ("prog \"\\n stays\"", ["prog", "\\n stays"]),
        ("ksnapshot -caption %c %i %k 100%%", ["ksnapshot", "-caption", "%c", "%i", "%k", "100%%"]),
        ("old %d %D %n %N %v %m", ["old", "%d", "%D", "%n", "%N", "%v", "%m"]),
    ]

    @Test(arguments: commandLines)
    func splits(_ line: String, _ argv: [String]) throws {
        #expect(try Exec.split(line) == argv)
        // And what Chime writes back reads the same.
        #expect(try Exec.split(Exec.join(argv)) == argv)
    }

    @Test(arguments: ["prog \"open", "prog 'open", "prog \\", "", "   ", "prog %z", "prog 100%"])
    func refusesBadCommandLines(_ line: String) {
        let error = #expect(throws: ChimeError.self) { try Exec.split(line) }
        #expect(error?.code == .usage)
    }

    @Test func quotesOnlyWhatNeedsIt() {
        #expect(Exec.quote("firefox") == "firefox")
        #expect(Exec.quote("%U") == "%U")
        #expect(Exec.quote("") == "\"\"")
        #expect(Exec.quote("a b") == "\"a b\"")
        #expect(Exec.quote("it's") == "\"it's\"")
        #expect(Exec.quote("\"$`\\") == "\"\\\"\\$\\`\\\\\"")
    }

    /// Arguments made of reserved characters, letters, field codes and `%%`: quoting, then the
    /// file's string escapes, then reading the file back, gives the same arguments.
    @Test func quotingRoundTripsThroughTheFile() throws {
        var generator = SplitMix64(seed: 2026)
        let pieces =
            Array(" \t\n\"'\\><~|&;$*?#()`=aZé/.-").map(String.init) + ["%u", "%F", "%%", "%i", "\\\\", "\\n", "\\s", "\u{301}", "\r\n"]
        for _ in 0..<3000 {
            let argv = (0..<(1 + generator.next(upTo: 5))).map { _ in
                (0..<generator.next(upTo: 6)).map { _ in pieces[generator.next(upTo: pieces.count)] }.joined()
            }
            var entry = DesktopEntry(text: "[Desktop Entry]\nName=x\n")
            entry.setValue(Exec.join(argv), for: "Exec")
            let reread = DesktopEntry(text: entry.text)
            #expect(try Exec.split(#require(reread.value("Exec"))) == argv, "\(argv)")
        }
    }
}

/// A small seeded generator, so a failing case is the same on every run.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func next(upTo bound: Int) -> Int { Int(next() % UInt64(bound)) }
}
