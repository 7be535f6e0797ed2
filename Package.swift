// swift-tools-version:6.1
// SPDX-License-Identifier: Apache-2.0
// Chime: a reminder and notification service for Linux (README.md; LICENSE).
import PackageDescription

/// Every target: Swift 6 language mode (strict concurrency), plus the upcoming features
/// swift-log and hummingbird turn on.
let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// The two programs a person runs (and the Debian package ships): resolve every symbol at start-up
/// (`-z now`, "bindnow"), so that with the RELRO segment the linker already gives them the whole
/// GOT is read-only after start-up. Swift's linker gives PIE and RELRO, not BIND_NOW (lintian).
let hardened: [LinkerSetting] = [.unsafeFlags(["-Xlinker", "-z", "-Xlinker", "now"])]

/// Where Debian's libnotify-dev puts the headers libnotify's and GLib's need (what
/// `pkg-config --cflags libnotify` prints, less libpng's, libmount's and blkid's, which its
/// headers do not include); glibconfig.h is in the multiarch directory.
#if arch(arm64)
let multiarch = "aarch64-linux-gnu"
#else
let multiarch = "x86_64-linux-gnu"
#endif
let glibHeaders = [
    "-I/usr/include/glib-2.0", "-I/usr/lib/\(multiarch)/glib-2.0/include", "-I/usr/include/gdk-pixbuf-2.0",
]

let package = Package(
    name: "Chime",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "chime", targets: ["chime"]),
        .library(name: "ChimeCore", targets: ["ChimeCore"]),
        .library(name: "ChimeApp", targets: ["ChimeApp"]),
        .library(name: "ChimeStore", targets: ["ChimeStore"]),
        .library(name: "ChimeRunner", targets: ["ChimeRunner"]),
        .library(name: "ChimeTesting", targets: ["ChimeTesting"]),
        .library(name: "ChimeLibnotify", targets: ["ChimeLibnotify"]),
        .library(name: "ChimeFocus", targets: ["ChimeFocus"]),
        .library(name: "ChimeDoses", targets: ["ChimeDoses"]),
        .library(name: "ChimeGateway", targets: ["ChimeGateway"]),
        .library(name: "ChimeGtk", targets: ["ChimeGtk"]),
        .library(name: "ChimeConfig", targets: ["ChimeConfig"]),
        .library(name: "ChimePostgres", targets: ["ChimePostgres"]),
        .library(name: "ChimeWebhook", targets: ["ChimeWebhook"]),
        .library(name: "ChimeDBus", targets: ["ChimeDBus"]),
        .library(name: "ChimeViewModels", targets: ["ChimeViewModels"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // Property-based tests of the parsers and of next-occurrence arithmetic (tests only).
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        // The config file's TOML (its parse errors carry line and column).
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
    ],
    targets: [
        // Reminder, Trigger, time-zone arithmetic, Scheduler, Notifier protocol. No GLib, no SQLite,
        // no argument parser.
        .target(name: "ChimeCore", swiftSettings: strict),
        // SQLite through GRDB: reminders, the delivery ledger, migrations.
        .target(
            name: "ChimeStore",
            dependencies: [
                "ChimeCore", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            swiftSettings: strict
        ),
        // Focus sessions (the Forest Focus seeds): the timer's state machine over the store, the
        // forest and its stats, the runner's part.
        .target(
            name: "ChimeFocus",
            dependencies: ["ChimeCore", "ChimeStore", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: strict
        ),
        // Dose reminders (the OpenMedTracker seed): medications, schedules, doses, adherence, and
        // the runner's part (alerts with actions, repeats, missed doses).
        .target(
            name: "ChimeDoses",
            dependencies: ["ChimeCore", "ChimeStore", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: strict
        ),
        // The mindful gateway (the MIGA seed): a pause before a distracting program opens, its
        // state machine on an injected clock, launcher overrides, quotes, usage events and stats.
        .target(
            name: "ChimeGateway",
            dependencies: [
                "ChimeCore", "ChimeStore", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // The config file ($XDG_CONFIG_HOME/chime/config.toml): its keys, defaults, environment
        // variables, parsing, validation, precedence and the commented example. TOMLKit stays
        // out of ChimeCore; the built-in defaults are the families' own constants.
        .target(
            name: "ChimeConfig",
            dependencies: [
                "ChimeCore", "ChimeStore",
                .product(name: "TOMLKit", package: "TOMLKit"),
            ],
            swiftSettings: strict
        ),
        // The store on PostgreSQL for several runners sharing one database: claims under
        // a lease with FOR UPDATE SKIP LOCKED, fenced marks, the database's clock; over libpq, and
        // driven by ChimeCore's one Scheduler (PostgresLedger is its SchedulerStore).
        .target(
            name: "ChimePostgres",
            dependencies: ["ChimeCore", "CLibpqLoader"],
            swiftSettings: strict + [.unsafeFlags(["-Xcc", "-I/usr/include/postgresql"])]
        ),
        // libpq (Debian libpq-dev 15), PostgreSQL's own C client, opened with dlopen the first time
        // a PostgreSQL store is used (see its header for why, with the figures). Only the header is
        // used at build time: no pkgConfig, whose -lpq would load libpq and its 20 libraries at
        // every start of chime.
        .target(name: "CLibpqLoader", cSettings: [.unsafeFlags(["-I/usr/include/postgresql"])]),
        // timerfd and eventfd, which Swift's Glibc module does not import.
        .systemLibrary(name: "CLinux", path: "Sources/CLinux"),
        // The long-running process: store + scheduler + notifier, timerfd sleep, wake-up socket.
        .target(
            name: "ChimeRunner",
            dependencies: [
                "ChimeCore", "ChimeStore", "CLinux",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // libnotify (Debian libnotify-dev 0.8.1) and GDBus for the desktop notifier, opened with
        // dlopen the first time an alert is shown (see its header for why, with the figures),
        // and the GLib calls Swift cannot make (macros, variadic functions). Only the headers are
        // used at build time: no pkgConfig, whose `-lnotify -lgio-2.0 …` would put libnotify and
        // the 14 libraries it pulls in back into every start of chime (SwiftPM places them before
        // any linker flag, so `--as-needed` cannot drop them).
        .target(
            name: "CLibnotifyLoader",
            cSettings: [.unsafeFlags(glibHeaders)]
        ),
        // GTK 4 (Debian libgtk-4-dev 4.8.3), for the gateway's window.
        .systemLibrary(
            name: "CGtk",
            path: "Sources/CGtk",
            pkgConfig: "gtk4",
            providers: [.apt(["libgtk-4-dev"])]
        ),
        // The gateway's window: a GateSurface over GTK 4, on a thread of its own that owns GTK.
        .target(name: "ChimeGtk", dependencies: ["ChimeCore", "ChimeGateway", "CGtk"], swiftSettings: strict),
        // libadwaita 1.2 (Debian libadwaita-1-dev) over GTK 4, for the Chime app's window.
        .systemLibrary(
            name: "CAdw",
            path: "Sources/CAdw",
            pkgConfig: "libadwaita-1",
            providers: [.apt(["libadwaita-1-dev"])]
        ),
        // The Chime app's window (DESIGN.md "The app"): libadwaita pages bound to ChimeViewModels,
        // its widget tree in ui/*.ui, compiled into a GResource bundle inside the executable by
        // ChimeResourcesPlugin (the chime-resources tool runs glib-compile-resources).
        .target(
            name: "ChimeAdw",
            dependencies: [
                "CAdw", "ChimeCore", "ChimeStore", "ChimeFocus", "ChimeDoses", "ChimeGateway", "ChimeGtk", "ChimeRunner", "ChimeViewModels",
                "ChimeConfig", "ChimeApp",
            ],
            exclude: ["ui"],
            swiftSettings: strict,
            plugins: ["ChimeResourcesPlugin"]
        ),
        .executableTarget(name: "chime-resources", swiftSettings: strict),
        .plugin(name: "ChimeResourcesPlugin", capability: .buildTool(), dependencies: ["chime-resources"]),
        // Xlib, for the window's tests only: a window manager's close request (WM_DELETE_WINDOW).
        .systemLibrary(name: "CX11", path: "Sources/CX11", pkgConfig: "x11", providers: [.apt(["libx11-dev"])]),
        // Chime's version from packaging/debian/changelog's first entry (one source of truth for
        // `chime --version` and the Debian package): a tool and the build-tool plugin that runs it.
        .executableTarget(name: "chime-version", swiftSettings: strict),
        .plugin(name: "ChimeVersionPlugin", capability: .buildTool(), dependencies: ["chime-version"]),
        // The windows' one executable (one Swift runtime in the package for both): the gate's
        // window (`chime gate open`'s, with --protocol; on its own, a countdown printing what
        // happens for the window's tests and figures), and with `app [PAGE]` the Chime app.
        .executableTarget(
            name: "chime-gate-window",
            dependencies: [
                "ChimeCore", "ChimeGateway", "ChimeGtk", "ChimeAdw", "ChimeViewModels",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict,
            linkerSettings: hardened,
            plugins: ["ChimeVersionPlugin"]
        ),
        // The desktop notifier: libnotify on a GLib main loop of its own thread.
        .target(
            name: "ChimeLibnotify",
            dependencies: ["ChimeCore", "CLibnotifyLoader"],
            swiftSettings: strict + [.unsafeFlags(glibHeaders.flatMap { ["-Xcc", $0] })]
        ),
        // libcurl (Debian libcurl4-openssl-dev), for the webhook notifier, opened with dlopen the first
        // time a webhook notifier is made (see its header for why, with the figures); only the header
        // is used at build time.
        .target(name: "CLibcurlLoader"),
        // The webhook notifier: a JSON POST per occurrence with an Idempotency-Key, on libcurl
        // driven by a thread of its own.
        .target(
            name: "ChimeWebhook",
            dependencies: ["ChimeCore", "CLibcurlLoader", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict,
            plugins: ["ChimeVersionPlugin"]
        ),
        // GIO (Debian libglib2.0-0), for the runner's D-Bus service, opened with dlopen when the
        // service starts (see its header for why); only the headers are used at build time.
        .target(name: "CGioLoader", cSettings: [.unsafeFlags(glibHeaders)]),
        // The runner's D-Bus service on the session bus (packaging/dbus): GDBus on a GLib loop of
        // its own thread, each method through the use cases the command line uses.
        .target(
            name: "ChimeDBus",
            dependencies: [
                "ChimeApp", "ChimeCore", "ChimeStore", "ChimeRunner", "ChimeFocus", "ChimePostgres", "ChimeViewModels", "CGioLoader",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict + [.unsafeFlags(glibHeaders.flatMap { ["-Xcc", $0] })]
        ),
        // The seeds' view models for the app (DESIGN.md "The app"): what each screen shows and
        // what a person does there, over the families' use cases; no GTK, GLib or D-Bus.
        .target(
            name: "ChimeViewModels",
            dependencies: ["ChimeCore", "ChimeStore", "ChimeFocus", "ChimeDoses", "ChimeGateway", "ChimeConfig"],
            swiftSettings: strict
        ),
        // RecordingNotifier and a manual wall clock, for Chime's tests and for users' own.
        .target(name: "ChimeTesting", dependencies: ["ChimeCore"], swiftSettings: strict),
        // The composition root: the families' tables and runner parts, listed once for chime,
        // chime-bench and the tests.
        .target(
            name: "ChimeApp",
            dependencies: [
                "ChimeCore", "ChimeStore", "ChimeFocus", "ChimeDoses", "ChimeGateway", "ChimeConfig",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "chime",
            dependencies: [
                "ChimeApp",
                "ChimeCore", "ChimeStore", "ChimeFocus", "ChimeDoses", "ChimeGateway", "ChimeRunner", "ChimeLibnotify",
                "ChimeConfig", "ChimePostgres", "ChimeWebhook", "ChimeDBus", "ChimeViewModels",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict,
            linkerSettings: hardened,
            plugins: ["ChimeVersionPlugin"]
        ),
        .executableTarget(
            name: "chime-bench",
            dependencies: [
                "ChimeApp",
                "ChimeCore", "ChimeStore", "ChimeFocus", "ChimeDoses", "ChimeGateway", "ChimeRunner", "ChimeTesting",
                "ChimeLibnotify", "ChimePostgres",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ChimeCoreTests",
            dependencies: ["ChimeCore", "ChimeTesting", .product(name: "PropertyBased", package: "swift-property-based")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ChimeConfigTests",
            dependencies: ["ChimeCore", "ChimeConfig", "ChimeApp", "ChimeTesting"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ChimeStoreTests",
            dependencies: ["ChimeCore", "ChimeStore", "ChimeTesting", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: strict
        ),
        // Against a real PostgreSQL server: scripts/test starts one (scripts/postgres-server).
        .testTarget(
            name: "ChimePostgresTests",
            dependencies: [
                "ChimeCore", "ChimePostgres", "ChimeStore", "ChimeRunner", "ChimeTesting",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ChimeRunnerTests",
            dependencies: ["ChimeCore", "ChimeStore", "ChimeRunner", "ChimeTesting"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ChimeFocusTests",
            dependencies: [
                "ChimeCore", "ChimeStore", "ChimeFocus", "ChimeRunner", "ChimeTesting",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ChimeDosesTests",
            dependencies: [
                "ChimeCore", "ChimeStore", "ChimeDoses", "ChimeRunner", "ChimeTesting",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ChimeGatewayTests",
            dependencies: [
                "ChimeCore", "ChimeStore", "ChimeGateway", "ChimeTesting",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ChimeDBusTests",
            dependencies: ["ChimeCore", "ChimeStore", "ChimeDBus", "ChimeApp", "ChimeTesting"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ChimeViewModelsTests",
            dependencies: [
                "ChimeCore", "ChimeStore", "ChimeFocus", "ChimeDoses", "ChimeGateway", "ChimeViewModels", "ChimeTesting",
                "ChimeConfig", "ChimeApp",
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ChimeWebhookTests",
            dependencies: ["ChimeCore", "ChimeWebhook"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "ChimeGtkTests",
            dependencies: ["ChimeCore", "ChimeGateway", "ChimeGtk", "ChimeTesting", "CX11"],
            swiftSettings: strict
        ),
        // FastParse (chime's hot commands parsed without argument-parser) against argument-parser.
        .testTarget(name: "ChimeFastParseTests", dependencies: ["chime"], swiftSettings: strict),
        .testTarget(
            name: "ChimeCLITests",
            dependencies: [
                "ChimeApp", "ChimeCore", "ChimeStore", "ChimeFocus", "ChimeDoses", "ChimeGateway", "ChimeTesting", "ChimeLibnotify",
                "ChimePostgres", "ChimeDBus", .product(name: "GRDB", package: "GRDB.swift"),
            ],
            // A store made by an earlier Chime, opened by ShippedSchemaTests.
            exclude: ["Fixtures"],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)
