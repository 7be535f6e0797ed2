import ChimeCore
import ChimeGateway
import ChimeTesting
import Foundation
import Testing

/// A temporary root of its own per test, laid out like a machine: the person's data home, the
/// Flatpak and Snap exports and the system's data directories, and a `chime` to run.
final class XDGFixture {
    let root: String
    var home: String { root + "/home/ana/.local/share" }
    var flatpakUser: String { home + "/flatpak/exports/share" }
    var flatpak: String { root + "/var/lib/flatpak/exports/share" }
    var local: String { root + "/usr/local/share" }
    var system: String { root + "/usr/share" }
    var snap: String { root + "/var/lib/snapd/desktop" }
    var chime: String { root + "/usr/bin/chime" }

    init() throws {
        root = FileManager.default.temporaryDirectory.path + "/chime-gate-" + UUID().uuidString
        for directory in [home, flatpak + "/applications", system + "/applications", root + "/usr/bin"] {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        try write("#!/bin/sh\nexit 0\n", to: chime, mode: 0o755)
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    var environment: [String: String] {
        [
            "HOME": root + "/home/ana",
            "XDG_DATA_HOME": home,
            "XDG_DATA_DIRS": [flatpakUser, flatpak, local, system, snap].joined(separator: ":"),
        ]
    }

    var overrides: LauncherOverrides { get throws { try LauncherOverrides(environment: environment) } }

    func write(_ text: String, to path: String, mode: Int = 0o644) throws {
        let directory = (path as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
    }

    /// Every file and directory under the root: its kind, permissions and bytes.
    func tree() throws -> [String: String] {
        var tree: [String: String] = [:]
        for path in try FileManager.default.subpathsOfDirectory(atPath: root) {
            let full = root + "/" + path
            let attributes = try FileManager.default.attributesOfItem(atPath: full)
            let mode = String((attributes[.posixPermissions] as? Int) ?? -1, radix: 8)
            if attributes[.type] as? FileAttributeType == .typeDirectory {
                tree[path] = "dir \(mode)"
            } else {
                let bytes = try Data(contentsOf: URL(fileURLWithPath: full))
                tree[path] = "file \(mode) " + bytes.base64EncodedString()
            }
        }
        return tree
    }

    func read(_ path: String) throws -> String {
        try String(decoding: Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
    }

    func mode(_ path: String) throws -> Int {
        try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int ?? -1
    }
}

/// A real-world desktop entry and what its override must run.
struct RealEntry: Sendable, CustomTestStringConvertible {
    var name: String
    /// The directory under the fixture's root it is installed in, and its path under `applications/`.
    var base: Base
    var relativePath: String
    var text: String
    /// The original argv, field codes intact.
    var argv: [String]
    /// Each action's original argv.
    var actions: [String: [String]] = [:]

    var testDescription: String { name }

    /// The data directories an entry can be installed in.
    enum Base: Sendable, Equatable {
        case home, flatpakUser, flatpak, local, system, snap

        func path(in fixture: XDGFixture) -> String {
            switch self {
            case .home: fixture.home
            case .flatpakUser: fixture.flatpakUser
            case .flatpak: fixture.flatpak
            case .local: fixture.local
            case .system: fixture.system
            case .snap: fixture.snap
            }
        }
    }
}

@Suite struct LauncherOverrideTests {
    static let entries: [RealEntry] = [
        RealEntry(
            name: "Firefox ESR (Debian), localized",
            base: .system,
            relativePath: "firefox-esr.desktop",
            text: """
                [Desktop Entry]
                Name=Firefox ESR
                Name[de]=Firefox ESR
                Name[ja]=Firefox ESR ウェブブラウザー
                Comment=Browse the World Wide Web
                Comment[de]=Im Internet surfen
                GenericName=Web Browser
                GenericName[de]=Webbrowser
                X-GNOME-FullName=Firefox ESR Web Browser
                X-GNOME-FullName[de]=Firefox ESR Webbrowser
                Exec=/usr/lib/firefox-esr/firefox-esr %u
                Terminal=false
                X-MultipleArgs=false
                Type=Application
                Icon=firefox-esr
                Categories=Network;WebBrowser;
                MimeType=text/html;text/xml;application/xhtml+xml;application/xml;application/vnd.mozilla.xul+xml;application/rss+xml;application/rdf+xml;image/gif;image/jpeg;image/png;x-scheme-handler/http;x-scheme-handler/https;
                StartupWMClass=Firefox-esr
                StartupNotify=true

                """,
            argv: ["/usr/lib/firefox-esr/firefox-esr", "%u"]
        ),
        RealEntry(
            name: "Visual Studio Code, %F and an action",
            base: .system,
            relativePath: "code.desktop",
            text: """
                [Desktop Entry]
                Name=Visual Studio Code
                Comment=Code Editing. Redefined.
                GenericName=Text Editor
                Exec=/usr/share/code/code %F
                Icon=vscode
                Type=Application
                StartupNotify=false
                StartupWMClass=Code
                Categories=TextEditor;Development;IDE;
                MimeType=application/x-code-workspace;
                Actions=new-empty-window;
                Keywords=vscode;

                [Desktop Action new-empty-window]
                Name=New Empty Window
                Name[de]=Neues leeres Fenster
                Exec=/usr/share/code/code --new-window %F
                Icon=vscode

                """,
            argv: ["/usr/share/code/code", "%F"],
            actions: ["new-empty-window": ["/usr/share/code/code", "--new-window", "%F"]]
        ),
        RealEntry(
            name: "Firefox from Flathub (system export)",
            base: .flatpak,
            relativePath: "org.mozilla.firefox.desktop",
            text: """
                [Desktop Entry]
                Version=1.0
                Name=Firefox
                GenericName=Web Browser
                Comment=Browse the Web
                Exec=/usr/bin/flatpak run --branch=stable --arch=x86_64 --command=firefox --file-forwarding org.mozilla.firefox @@u %u @@
                Icon=org.mozilla.firefox
                Terminal=false
                Type=Application
                MimeType=text/html;text/xml;application/xhtml+xml;application/vnd.mozilla.xul+xml;text/mml;x-scheme-handler/http;x-scheme-handler/https;
                StartupNotify=true
                Categories=Network;WebBrowser;
                Keywords=web;browser;internet;
                Actions=new-window;new-private-window;
                StartupWMClass=firefox
                X-Flatpak=org.mozilla.firefox

                [Desktop Action new-window]
                Name=Open a New Window
                Exec=/usr/bin/flatpak run --branch=stable --arch=x86_64 --command=firefox org.mozilla.firefox --new-window %u

                [Desktop Action new-private-window]
                Name=Open a New Private Window
                Exec=/usr/bin/flatpak run --branch=stable --arch=x86_64 --command=firefox org.mozilla.firefox --private-window %u

                """,
            argv: [
                "/usr/bin/flatpak", "run", "--branch=stable", "--arch=x86_64", "--command=firefox", "--file-forwarding",
                "org.mozilla.firefox", "@@u", "%u", "@@",
            ],
            actions: [
                "new-window": [
                    "/usr/bin/flatpak", "run", "--branch=stable", "--arch=x86_64", "--command=firefox", "org.mozilla.firefox",
                    "--new-window", "%u",
                ],
                "new-private-window": [
                    "/usr/bin/flatpak", "run", "--branch=stable", "--arch=x86_64", "--command=firefox", "org.mozilla.firefox",
                    "--private-window", "%u",
                ],
            ]
        ),
        RealEntry(
            name: "Spotify from Flathub (a user install, exported under the data home)",
            base: .flatpakUser,
            relativePath: "com.spotify.Client.desktop",
            text: """
                [Desktop Entry]
                Type=Application
                Name=Spotify
                GenericName=Music Player
                GenericName[fr]=Lecteur de musique
                Icon=com.spotify.Client
                TryExec=/home/ana/.local/share/flatpak/exports/bin/com.spotify.Client
                Exec=/usr/bin/flatpak run --branch=stable --arch=x86_64 --command=spotify --file-forwarding com.spotify.Client @@u %U @@
                Terminal=false
                MimeType=x-scheme-handler/spotify;
                Categories=Audio;Music;Player;AudioVideo;
                StartupWMClass=spotify
                X-Flatpak-RenamedFrom=spotify.desktop;
                X-Flatpak=com.spotify.Client

                """,
            argv: [
                "/usr/bin/flatpak", "run", "--branch=stable", "--arch=x86_64", "--command=spotify", "--file-forwarding",
                "com.spotify.Client",
                "@@u", "%U", "@@",
            ]
        ),
        RealEntry(
            name: "Telegram, DBusActivatable=true with Exec, TryExec",
            base: .system,
            relativePath: "org.telegram.desktop.desktop",
            text: """
                [Desktop Entry]
                Name=Telegram Desktop
                Comment=Official desktop version of Telegram messaging app
                TryExec=telegram-desktop
                Exec=telegram-desktop -- %u
                Icon=org.telegram.desktop
                Terminal=false
                StartupWMClass=TelegramDesktop
                Type=Application
                Categories=Chat;Network;InstantMessaging;Qt;
                MimeType=x-scheme-handler/tg;x-scheme-handler/tonsite;
                Keywords=tg;chat;im;messaging;messenger;sms;tdesktop;
                Actions=quit;
                DBusActivatable=true
                SingleMainWindow=true
                X-GNOME-UsesNotifications=true
                X-GNOME-SingleWindow=true

                [Desktop Action quit]
                Exec=telegram-desktop -quit
                Name=Quit Telegram
                Icon=application-exit

                """,
            argv: ["telegram-desktop", "--", "%u"],
            actions: ["quit": ["telegram-desktop", "-quit"]]
        ),
        RealEntry(
            name: "Steam, %U and actions",
            base: .system,
            relativePath: "steam.desktop",
            text: """
                [Desktop Entry]
                Name=Steam
                Comment=Application for managing and playing games on Steam
                Comment[pt_BR]=Aplicativo para jogar e gerenciar jogos no Steam
                Exec=/usr/games/steam %U
                Icon=steam
                Terminal=false
                Type=Application
                Categories=Network;FileTransfer;Game;
                MimeType=x-scheme-handler/steam;x-scheme-handler/steamlink;
                Actions=Store;Community;Library;BigPicture;
                PrefersNonDefaultGPU=true
                X-KDE-RunOnDiscreteGpu=true

                [Desktop Action Store]
                Name=Store
                Exec=steam steam://store

                [Desktop Action Community]
                Name=Community
                Exec=steam steam://url/CommunityHome/

                [Desktop Action Library]
                Name=Library
                Exec=steam steam://open/games

                [Desktop Action BigPicture]
                Name=Big Picture
                Exec=steam steam://open/bigpicture

                """,
            argv: ["/usr/games/steam", "%U"],
            actions: [
                "Store": ["steam", "steam://store"], "Community": ["steam", "steam://url/CommunityHome/"],
                "Library": ["steam", "steam://open/games"], "BigPicture": ["steam", "steam://open/bigpicture"],
            ]
        ),
        RealEntry(
            name: "Discord from the Snap store, env VAR=… prog %U",
            base: .snap,
            relativePath: "discord_discord.desktop",
            text: """
                [Desktop Entry]
                X-SnapInstanceName=discord
                Name=Discord
                StartupWMClass=discord
                Comment=All-in-one voice and text chat for gamers that's free, secure, and works on both your desktop and phone.
                GenericName=Internet Messenger
                X-SnapAppName=discord
                Exec=env BAMF_DESKTOP_FILE_HINT=/var/lib/snapd/desktop/applications/discord_discord.desktop /snap/bin/discord %U
                Icon=/snap/discord/current/meta/gui/icon.png
                Type=Application
                Categories=Network;InstantMessaging;
                MimeType=x-scheme-handler/discord;

                """,
            argv: ["env", "BAMF_DESKTOP_FILE_HINT=/var/lib/snapd/desktop/applications/discord_discord.desktop", "/snap/bin/discord", "%U"]
        ),
        RealEntry(
            name: "env GDK_BACKEND=x11 with %u",
            base: .local,
            relativePath: "zoom.desktop",
            text: """
                [Desktop Entry]
                Name=Zoom Workplace
                Comment=Zoom Video Conference
                Exec=env GDK_BACKEND=x11 QT_QPA_PLATFORM=xcb /usr/bin/zoom %U
                Icon=Zoom
                Terminal=false
                Type=Application
                Encoding=UTF-8
                Categories=Network;Application;
                StartupWMClass=zoom
                MimeType=x-scheme-handler/zoommtg;x-scheme-handler/zoomus;
                X-KDE-Protocols=zoommtg;zoomus

                """,
            argv: ["env", "GDK_BACKEND=x11", "QT_QPA_PLATFORM=xcb", "/usr/bin/zoom", "%U"]
        ),
        RealEntry(
            name: "Wine game: quoted arguments with spaces and backslashes",
            base: .home,
            relativePath: "wine/Programs/Game.desktop",
            text: """
                [Desktop Entry]
                Name=Game
                Exec=env WINEPREFIX="/home/ana/.wine games" wine "C:\\\\\\\\Program Files\\\\\\\\Game\\\\\\\\game.exe" --title "Say \\\\"hi\\\\" for \\\\$5"
                Type=Application
                StartupNotify=true
                Path=/home/ana/.wine games/dosdevices/c:/Program Files/Game
                Icon=A1B2_game.0
                StartupWMClass=game.exe

                """,
            argv: ["env", "WINEPREFIX=/home/ana/.wine games", "wine", "C:\\Program Files\\Game\\game.exe", "--title", "Say \"hi\" for $5"]
        ),
        RealEntry(
            name: "NoDisplay=true helper, kept hidden",
            base: .system,
            relativePath: "spotify-handler.desktop",
            text: """
                [Desktop Entry]
                Type=Application
                Name=Spotify (URI handler)
                Exec=spotify --uri=%u
                NoDisplay=true
                MimeType=x-scheme-handler/spotify;

                """,
            argv: ["spotify", "--uri=%u"]
        ),
        RealEntry(
            name: "KDE 4 entry in a subdirectory (%c %i), comments and blank lines",
            base: .system,
            relativePath: "kde4/ksnapshot.desktop",
            text: """
                # KDE Config File

                [Desktop Entry]
                Type=Application
                Exec=ksnapshot -caption %c %i
                Icon=ksnapshot
                X-DocPath=ksnapshot/index.html
                Name=KSnapshot
                Name[de]=KSnapshot
                GenericName=Screen Capture Program
                GenericName[de]=Programm für Bildschirmfotos
                Categories=Qt;KDE;Graphics;

                # trailing comment
                """,
            argv: ["ksnapshot", "-caption", "%c", "%i"]
        ),
    ]

    @Test(arguments: entries)
    func gatesAndRemovesRealEntries(_ real: RealEntry) throws {
        // Given a machine with the entry installed
        let fixture = try XDGFixture()
        let originalPath = real.base.path(in: fixture) + "/applications/" + real.relativePath
        try fixture.write(real.text, to: originalPath)
        let before = try fixture.tree()
        let id = try DesktopFileID(relativePath: real.relativePath)
        let overrides = try fixture.overrides

        // When it is gated
        let gated = try overrides.gate(id, chime: fixture.chime)

        // Then the override in the data home wraps every Exec, field codes intact
        let overridePath = fixture.home + "/applications/" + real.relativePath
        #expect(gated.path == overridePath)
        #expect(gated.originalPath == originalPath)
        #expect(gated.status == .ok)
        #expect(gated.wrapsOwnEntry == (real.base == .home))
        let override = DesktopEntry(text: try fixture.read(overridePath))
        let open = [fixture.chime, "gate", "open", id.rawValue]
        #expect(try Exec.split(#require(override.value("Exec"))) == open + ["--"] + real.argv)
        for (action, argv) in real.actions {
            let exec = try #require(override.value("Exec", in: "Desktop Action \(action)"))
            #expect(try Exec.split(exec) == open + ["--action", action, "--"] + argv)
        }
        #expect(override.value("DBusActivatable") == nil)
        #expect(override.value(LauncherOverrides.marker) == id.rawValue)
        #expect(try fixture.mode(overridePath) == 0o644)
        // Every other line is kept as it was.
        let original = DesktopEntry(text: real.text)
        let untouched = { (entry: DesktopEntry) in
            entry.lines.filter {
                if case .entry(let key, _, _) = $0.kind {
                    !["Exec", "DBusActivatable", LauncherOverrides.marker].contains(key)
                } else {
                    true
                }
            }
        }
        #expect(untouched(override) == untouched(original))
        #expect(try overrides.list() == [gated])
        #expect(try overrides.doctor().isEmpty)

        // When it is removed, every file is as it was
        try overrides.remove(id)
        #expect(try fixture.tree() == before)
        #expect(try overrides.list().isEmpty)
    }

    @Test func wrapsThePersonsOwnEntryAndPutsItBack() throws {
        // Given the person's own customised entry, private, shadowing the system's
        let fixture = try XDGFixture()
        try fixture.write(
            "[Desktop Entry]\nType=Application\nName=Firefox\nExec=firefox %u\n",
            to: fixture.system + "/applications/firefox.desktop"
        )
        let own = "[Desktop Entry]\nType=Application\nName=My Firefox\nExec=firefox -P work %u\n# mine\n"
        let ownPath = fixture.home + "/applications/firefox.desktop"
        try fixture.write(own, to: ownPath, mode: 0o600)
        let before = try fixture.tree()
        let overrides = try fixture.overrides

        let gated = try overrides.gate(DesktopFileID("firefox"), chime: fixture.chime)

        #expect(gated.wrapsOwnEntry)
        #expect(gated.originalPath == ownPath)
        let override = DesktopEntry(text: try fixture.read(ownPath))
        #expect(override.value("Name") == "My Firefox")
        #expect(
            try Exec.split(#require(override.value("Exec"))) == [
                fixture.chime, "gate", "open", "firefox.desktop", "--", "firefox", "-P", "work", "%u",
            ]
        )
        #expect(try fixture.mode(ownPath) == 0o600)
        // A package update of the system's entry does not matter: the person's own is the original.
        try fixture.write(
            "[Desktop Entry]\nType=Application\nName=Firefox\nExec=firefox-new %u\n",
            to: fixture.system + "/applications/firefox.desktop"
        )
        #expect(try overrides.status(DesktopFileID("firefox")).status == .ok)
        try fixture.write(
            "[Desktop Entry]\nType=Application\nName=Firefox\nExec=firefox %u\n",
            to: fixture.system + "/applications/firefox.desktop"
        )

        try overrides.remove(DesktopFileID("firefox"))
        #expect(try fixture.tree() == before)
        #expect(try fixture.read(ownPath) == own)
    }

    @Test func anEditedOverrideOfThePersonsOwnEntryGivesItBackOnceDeleted() throws {
        let fixture = try XDGFixture()
        let own = "[Desktop Entry]\nType=Application\nName=Mine\nExec=mine %U\n"
        let ownPath = fixture.home + "/applications/mine.desktop"
        try fixture.write(own, to: ownPath, mode: 0o640)
        let before = try fixture.tree()
        let overrides = try fixture.overrides
        let id = try DesktopFileID("mine")
        try overrides.gate(id, chime: fixture.chime)
        try fixture.write(try fixture.read(ownPath).replacingOccurrences(of: "Name=Mine", with: "Name=Edited"), to: ownPath)

        #expect(throws: ChimeError.self) { try overrides.remove(id) }
        try FileManager.default.removeItem(atPath: ownPath)
        try overrides.remove(id)
        #expect(try fixture.tree() == before)
    }

    @Test func refusesThePersonsOwnEntryWhenItIsASymbolicLink() throws {
        let fixture = try XDGFixture()
        let target = fixture.root + "/dotfiles/mine.desktop"
        try fixture.write("[Desktop Entry]\nType=Application\nName=Mine\nExec=mine\n", to: target)
        try FileManager.default.createDirectory(atPath: fixture.home + "/applications", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: fixture.home + "/applications/mine.desktop", withDestinationPath: target)
        let before = try fixture.tree()
        let error = #expect(throws: ChimeError.self) { try fixture.overrides.gate(DesktopFileID("mine"), chime: fixture.chime) }
        #expect(error?.code == .conflict)
        #expect(error?.message.contains("symbolic link") == true)
        #expect(try fixture.tree() == before)
    }

    @Test func prefersTheFirstDataDirectory() throws {
        let fixture = try XDGFixture()
        try fixture.write(
            "[Desktop Entry]\nType=Application\nName=Local\nExec=/usr/local/bin/app\n",
            to: fixture.local + "/applications/app.desktop"
        )
        try fixture.write(
            "[Desktop Entry]\nType=Application\nName=System\nExec=/usr/bin/app\n",
            to: fixture.system + "/applications/app.desktop"
        )
        let gated = try fixture.overrides.gate(DesktopFileID("app"), chime: fixture.chime)
        #expect(gated.originalPath == fixture.local + "/applications/app.desktop")
    }

    @Test func refusesDeletedAndUngateableEntriesLeavingEverythingAlone() throws {
        let fixture = try XDGFixture()
        let cases: [(String, String, ChimeError.Code, String)] = [
            ("hidden", "[Desktop Entry]\nType=Application\nName=Gone\nExec=gone\nHidden=true\n", .notFound, "Hidden=true"),
            (
                "org.gnome.Dbusonly", "[Desktop Entry]\nType=Application\nName=Only D-Bus\nDBusActivatable=true\n", .usage,
                "DBusActivatable=true"
            ),
            ("noexec", "[Desktop Entry]\nType=Application\nName=Nothing to run\n", .usage, "no Exec key"),
            ("link", "[Desktop Entry]\nType=Link\nName=A link\nURL=https://example.org\n", .usage, "Type=Link"),
            ("badexec", "[Desktop Entry]\nType=Application\nName=Bad\nExec=prog \"unclosed %u\n", .usage, "prog \"unclosed %u"),
            ("notanentry", "[Something Else]\nExec=x\n", .usage, "no [Desktop Entry] group"),
            ("twice", "[Desktop Entry]\nType=Application\nName=A\n[Desktop Entry]\nExec=a\n", .usage, "[Desktop Entry] twice"),
            // Chime's own app (in the app grid): Chime does not gate itself.
            (
                "io.github.chime.Chime", "[Desktop Entry]\nType=Application\nName=Chime\nExec=chime app\nDBusActivatable=true\n", .usage,
                "Chime's own app"
            ),
        ]
        for (name, text, _, _) in cases { try fixture.write(text, to: fixture.system + "/applications/\(name).desktop") }
        let before = try fixture.tree()
        let overrides = try fixture.overrides
        for (name, _, code, phrase) in cases {
            let error = #expect(throws: ChimeError.self, "\(name)") { try overrides.gate(DesktopFileID(name), chime: fixture.chime) }
            #expect(error?.code == code, "\(name)")
            #expect(error?.message.contains(phrase) == true, "\(name): \(error?.message ?? "")")
        }
        let missing = #expect(throws: ChimeError.self) { try overrides.gate(DesktopFileID("not-installed"), chime: fixture.chime) }
        #expect(missing?.code == .notFound)
        #expect(missing?.message.contains("not-installed.desktop") == true)
        let relative = #expect(throws: ChimeError.self) { try overrides.gate(DesktopFileID("hidden"), chime: "chime") }
        #expect(relative?.code == .usage)
        #expect(try fixture.tree() == before)
    }

    @Test func chimesOwnAppIsNotOfferedForGating() throws {
        let fixture = try XDGFixture()
        try fixture.write(
            "[Desktop Entry]\nType=Application\nName=Chime\nExec=chime app\nDBusActivatable=true\n",
            to: fixture.system + "/applications/io.github.chime.Chime.desktop"
        )
        try fixture.write(
            "[Desktop Entry]\nType=Application\nName=Firefox\nExec=firefox %u\n",
            to: fixture.system + "/applications/firefox.desktop"
        )
        #expect(try fixture.overrides.pickable(gated: []).map(\.name) == ["Firefox"])
    }

    @Test func listsInstalledEntriesAndSuggestsSimilarIDs() throws {
        let fixture = try XDGFixture()
        let entry = "[Desktop Entry]\nType=Application\nName=Firefox\nExec=firefox %u\n"
        try fixture.write(entry, to: fixture.flatpak + "/applications/org.mozilla.firefox.desktop")
        try fixture.write(entry, to: fixture.system + "/applications/org.mozilla.firefox.desktop")
        try fixture.write(entry, to: fixture.system + "/applications/kde4/firefox-kde.desktop")
        try fixture.write("not an entry", to: fixture.system + "/applications/mimeinfo.cache")
        let overrides = try fixture.overrides

        let installed = overrides.installed()
        #expect(installed.keys.map(\.rawValue).sorted() == ["kde4-firefox-kde.desktop", "org.mozilla.firefox.desktop"])
        #expect(installed[try DesktopFileID("org.mozilla.firefox")]?.base == fixture.flatpak)

        let error = #expect(throws: ChimeError.self) { try overrides.gate(DesktopFileID("Firefox"), chime: fixture.chime) }
        #expect(error?.code == .notFound)
        #expect(error?.message.hasSuffix("(similar: kde4-firefox-kde.desktop, org.mozilla.firefox.desktop)") == true)
    }

    @Test func refusesToGateTwice() throws {
        let fixture = try XDGFixture()
        try fixture.write("[Desktop Entry]\nType=Application\nName=App\nExec=app\n", to: fixture.system + "/applications/app.desktop")
        let overrides = try fixture.overrides
        try overrides.gate(DesktopFileID("app"), chime: fixture.chime)
        let error = #expect(throws: ChimeError.self) { try overrides.gate(DesktopFileID("app"), chime: fixture.chime) }
        #expect(error?.code == .conflict)
    }

    @Test func anEditedOverrideIsLeftAloneUntilThePersonDeletesIt() throws {
        let fixture = try XDGFixture()
        try fixture.write("[Desktop Entry]\nType=Application\nName=App\nExec=app %f\n", to: fixture.system + "/applications/app.desktop")
        let before = try fixture.tree()
        let overrides = try fixture.overrides
        let id = try DesktopFileID("app")
        let gated = try overrides.gate(id, chime: fixture.chime)

        // When the person edits the override
        let edited = try fixture.read(gated.path) + "Keywords=mine;\n"
        try fixture.write(edited, to: gated.path)

        // Then doctor says so, and remove, refresh and off refuse, naming the file
        #expect(try overrides.doctor().map(\.status) == [.overrideEdited])
        let error = #expect(throws: ChimeError.self) { try overrides.remove(id) }
        #expect(error?.code == .conflict)
        #expect(error?.message.contains(gated.path) == true)
        #expect(throws: ChimeError.self) { try overrides.refresh(id) }
        let report = try overrides.off()
        #expect(report.removed.isEmpty)
        #expect(report.refused[id]?.code == .conflict)
        #expect(try fixture.read(gated.path) == edited)

        // When they delete it, remove finishes the job
        try FileManager.default.removeItem(atPath: gated.path)
        try overrides.remove(id)
        #expect(try fixture.tree() == before)
    }

    @Test func refreshesAfterAPackageUpdate() throws {
        let fixture = try XDGFixture()
        let path = fixture.system + "/applications/code.desktop"
        try fixture.write("[Desktop Entry]\nType=Application\nName=Code\nExec=/usr/share/code/code %F\n", to: path)
        let overrides = try fixture.overrides
        let id = try DesktopFileID("code")
        try overrides.gate(id, chime: fixture.chime)

        // When the package is updated
        try fixture.write(
            "[Desktop Entry]\nType=Application\nName=Code\nExec=/usr/share/code/bin/code --ozone %F\nDBusActivatable=true\n",
            to: path
        )
        var before = try fixture.tree()
        #expect(try overrides.doctor().map(\.status) == [.originalChanged])

        // Then refresh wraps the new original
        let refreshed = try overrides.refresh(id)
        #expect(refreshed.status == .ok)
        let override = DesktopEntry(text: try fixture.read(refreshed.path))
        #expect(
            try Exec.split(#require(override.value("Exec")))
                == [fixture.chime, "gate", "open", "code.desktop", "--", "/usr/share/code/bin/code", "--ozone", "%F"]
        )
        #expect(override.value("DBusActivatable") == nil)

        try overrides.remove(id)
        for key in before.keys where key.hasPrefix("home/ana/.local/share/") { before[key] = nil }
        #expect(try fixture.tree() == before)
    }

    @Test func reportsAGoneOriginalAMissingOverrideAndAMissingChime() throws {
        let fixture = try XDGFixture()
        for name in ["gone", "missing", "moved"] {
            try fixture.write(
                "[Desktop Entry]\nType=Application\nName=\(name)\nExec=\(name)\n",
                to: fixture.system + "/applications/\(name).desktop"
            )
        }
        let overrides = try fixture.overrides
        let otherChime = fixture.root + "/opt/chime"
        try fixture.write("#!/bin/sh\n", to: otherChime, mode: 0o755)
        var before = try fixture.tree()
        try overrides.gate(DesktopFileID("gone"), chime: fixture.chime)
        try overrides.gate(DesktopFileID("missing"), chime: fixture.chime)
        try overrides.gate(DesktopFileID("moved"), chime: otherChime)

        try FileManager.default.removeItem(atPath: fixture.system + "/applications/gone.desktop")
        try FileManager.default.removeItem(atPath: fixture.home + "/applications/missing.desktop")
        try FileManager.default.removeItem(atPath: otherChime)

        let listed = try overrides.list()
        #expect(listed.map(\.status) == [.originalGone, .overrideMissing, .chimeMissing])
        #expect(listed[0].advice.contains(fixture.system + "/applications/gone.desktop"))
        #expect(listed[1].advice.contains(fixture.home + "/applications/missing.desktop"))
        #expect(listed[2].advice.contains(otherChime))
        let gone = #expect(throws: ChimeError.self) { try overrides.refresh(DesktopFileID("gone")) }
        #expect(gone?.code == .notFound)
        #expect(try overrides.refresh(DesktopFileID("missing")).status == .ok)
        #expect(try overrides.refresh(DesktopFileID("moved"), chime: fixture.chime).status == .ok)

        let report = try overrides.off()
        #expect(report.removed.map(\.rawValue) == ["gone.desktop", "missing.desktop", "moved.desktop"])
        #expect(report.refused.isEmpty)
        (before["usr/share/applications/gone.desktop"], before["opt/chime"]) = (nil, nil)
        #expect(try fixture.tree() == before)
    }

    @Test func offRemovesEveryOverride() throws {
        let fixture = try XDGFixture()
        for real in Self.entries {
            try fixture.write(real.text, to: real.base.path(in: fixture) + "/applications/" + real.relativePath)
        }
        let before = try fixture.tree()
        let overrides = try fixture.overrides
        for real in Self.entries { try overrides.gate(DesktopFileID(relativePath: real.relativePath), chime: fixture.chime) }
        #expect(try overrides.list().count == Self.entries.count)
        #expect(try overrides.list().allSatisfy { $0.status == .ok })

        let report = try overrides.off()
        #expect(report.removed.count == Self.entries.count)
        #expect(try fixture.tree() == before)
    }

    @Test func dataDirectoriesFromTheEnvironment() throws {
        let defaults = try XDGDataDirectories(environment: ["HOME": "/home/ana/"])
        #expect(defaults == XDGDataDirectories(home: "/home/ana/.local/share", directories: ["/usr/local/share", "/usr/share"]))
        let set = try XDGDataDirectories(environment: ["HOME": "/h", "XDG_DATA_HOME": "/d/", "XDG_DATA_DIRS": "relative:/a/::/b"])
        #expect(set == XDGDataDirectories(home: "/d", directories: ["/a", "/b"]))
        let relative = try XDGDataDirectories(environment: ["HOME": "/h", "XDG_DATA_HOME": "data"])
        #expect(relative.home == "/h/.local/share")
        let error = #expect(throws: ChimeError.self) { try XDGDataDirectories(environment: [:]) }
        #expect(error?.code == .usage)
    }
}

/// GLib, which most launchers use, reads the override as Chime means it: `gio launch` runs the
/// wrapped command with the arguments undone from their quotes and the field codes expanded.
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/gio"), "needs gio (Debian: libglib2.0-bin)"))
struct GioLaunchTests {
    @Test func gioLaunchesTheWrappedCommandWithItsArguments() async throws {
        let fixture = try XDGFixture()
        // A chime that records the arguments it was started with, one per line, then renames
        // the record into place so that it is read whole.
        let record = fixture.root + "/argv.txt"
        try fixture.write(
            "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > \(record).tmp && mv \(record).tmp \(record)\n",
            to: fixture.chime,
            mode: 0o755
        )
        try fixture.write(
            """
            [Desktop Entry]
            Type=Application
            Name=Game
            Exec=env "WINEPREFIX=/home/ana/.wine games" wine "C:\\\\\\\\Program Files\\\\\\\\game.exe" --title "Say \\\\"hi\\\\" for \\\\$5" 100%% %f
            DBusActivatable=true

            """,
            to: fixture.system + "/applications/game.desktop"
        )
        let gated = try fixture.overrides.gate(DesktopFileID("game"), chime: fixture.chime)
        let file = fixture.root + "/usr/bin/chime"

        let gio = Process()
        gio.executableURL = URL(fileURLWithPath: "/usr/bin/gio")
        gio.arguments = ["launch", gated.path, file]
        // Its own home and XDG directories (GLib reads its settings and MIME data there), not
        // those of whoever runs the tests.
        gio.environment = try IsolatedEnvironment.variables(root: URL(fileURLWithPath: fixture.root + "/gio"))
        try gio.run()
        gio.waitUntilExit()
        #expect(gio.terminationStatus == 0)
        // gio starts the program and returns: wait for its record (at most 10 s).
        for _ in 0..<200 where !FileManager.default.fileExists(atPath: record) {
            try await Task.sleep(for: .milliseconds(50))
        }
        let argv = try fixture.read(record).split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        #expect(
            argv == [
                "gate", "open", "game.desktop", "--", "env", "WINEPREFIX=/home/ana/.wine games", "wine", "C:\\Program Files\\game.exe",
                "--title", "Say \"hi\" for $5", "100%", file,
            ]
        )
    }
}
