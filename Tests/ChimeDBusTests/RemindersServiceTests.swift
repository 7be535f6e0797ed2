import ChimeApp
import ChimeCore
import ChimeFocus
import ChimeStore
import ChimeTesting
import Foundation
import Testing

@testable import ChimeDBus

/// The D-Bus methods without D-Bus: each through the command line's parsers and use cases, on a
/// temporary store and a fixed clock.
struct RemindersServiceTests {
    static let now = Date(timeIntervalSince1970: 1_893_492_000)  // 2030-01-01T10:00:00Z
    static let utc = TimeZone(identifier: "UTC")!

    final class Fixture {
        let directory: URL
        let store: ReminderStore
        let service: RemindersService
        let changes = Changes()
        let wall = ManualWallClock(now: RemindersServiceTests.now)

        final class Changes: @unchecked Sendable {
            private let lock = NSLock()
            private var value: [[String]] = []
            var all: [[String]] { lock.withLock { value } }
            func add(_ ids: [String]) { lock.withLock { value.append(ids) } }
        }

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("chime-dbus-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            store = try ReminderStore(path: directory.appendingPathComponent("chime.sqlite").path, schemas: ChimeApp.schemas)
            let changes = self.changes
            service = RemindersService(
                store: store,
                clock: { [wall] in wall.now() },
                machineClock: ManualMachineClock(wall: wall),
                systemZone: { RemindersServiceTests.utc },
                environment: ["XDG_RUNTIME_DIR": directory.path, "HOME": directory.path, "PATH": "/usr/bin:/bin"],
                poke: {},
                changed: { changes.add($0) }
            )
        }

        deinit { try? FileManager.default.removeItem(at: directory) }
    }

    @Test func scheduleInAtAndEveryAsTheCommandLineReadsThem() throws {
        let fixture = try Fixture()
        let service = fixture.service
        let tea = try service.schedule(["title": .string("Tea"), "body": .string("Green"), "in": .string("25m"), "id": .string("tea")])
        #expect(tea == "tea")
        let got = try service.get("tea")
        #expect(got["title"] == .string("Tea"))
        #expect(got["body"] == .string("Green"))
        #expect(got["next_due"] == .string("2030-01-01T10:25:00.000Z"))
        #expect(got["next_due_us"] == .int64(1_893_493_500_000_000))
        #expect(got["recurring"] == .bool(false))

        let call = try service.schedule(["title": .string("Call"), "at": .string("tomorrow 09:00"), "urgency": .string("critical")])
        #expect(try service.get(call)["next_due"] == .string("2030-01-02T09:00:00.000Z"))
        #expect(try service.get(call)["urgency"] == .string("critical"))
        let rfc = try service.schedule(["title": .string("Launch"), "at": .string("2030-06-01T12:00:00Z")])
        #expect(try service.get(rfc)["next_due"] == .string("2030-06-01T12:00:00.000Z"))

        let stretch = try service.schedule(["title": .string("Stretch"), "every": .string("weekday 08:00"), "id": .string("stretch")])
        #expect(try service.get(stretch)["recurring"] == .bool(true))
        #expect(try service.get(stretch)["next_due"] == .string("2030-01-02T08:00:00.000Z"))

        let listed = try service.list().compactMap { item -> String? in if case .string(let id) = item["id"] { id } else { nil } }
        #expect(listed == [tea, stretch, call, rfc])
        #expect(fixture.changes.all == [["tea"], [call], [rfc], ["stretch"]])
    }

    @Test func cancelSaysCancelledThenNotFound() throws {
        let fixture = try Fixture()
        _ = try fixture.service.schedule(["title": .string("Tea"), "in": .string("5m"), "id": .string("tea")])
        #expect(try fixture.service.cancel("tea") == "cancelled")
        let error = #expect(throws: ChimeError.self) { try fixture.service.cancel("tea") }
        #expect(error?.code == .notFound)
        #expect(ChimeBus.errorName(error!.code) == "io.github.chime.Chime.Error.NotFound")
        #expect((try? fixture.service.get("tea")) == nil)
    }

    @Test(
        "bad input: the command line's one line, as .usage (Invalid)",
        arguments: [
            (["in": BusValue.string("5m")], "missing 'title'"),
            (["title": .string("T")], "expected one of 'in' (25m), 'at' (14:30) or 'every' (weekday 08:00), got none"),
            (["title": .string("T"), "in": .string("5m"), "at": .string("14:30")], "got 'in' and 'at'"),
            (["title": .string("T"), "in": .string("5 minutes")], "invalid duration"),
            (["title": .string("T"), "in": .int32(5)], "'in' must be a string (D-Bus type s), not i"),
            (["title": .string("T"), "in": .string("5m"), "urgency": .string("loud")], "invalid urgency 'loud'"),
            (["title": .string("T"), "in": .string("5m"), "colour": .string("red")], "unknown key 'colour'"),
            (["title": .string("T"), "in": .string("5m"), "id": .string("no spaces")], "invalid"),
            (["title": .string(""), "in": .string("5m")], "title"),
            (["title": .string("T"), "at": .string("25:99")], "invalid time"),
            (["title": .string("T"), "every": .string("fortnight")], "invalid recurrence 'fortnight'"),
        ]
    )
    func badInputIsInvalidWithTheCommandLinesLine(fields: [String: BusValue], saying: String) throws {
        let fixture = try Fixture()
        let error = #expect(throws: ChimeError.self) { try fixture.service.schedule(fields) }
        #expect(error?.code == .usage, "\(error?.message ?? "")")
        #expect(error?.message.contains(saying) == true, "\(error?.message ?? "")")
        #expect(try fixture.service.list().isEmpty)
    }

    @Test func randomDictionariesNeverCrashAndFailOnlyWithAChimeError() throws {
        let fixture = try Fixture()
        var generator = SystemRandomNumberGenerator()
        let keys = RemindersService.scheduleKeys + ["", "x", "title\u{0}", "ünïcode", String(repeating: "k", count: 300)]
        let texts = [
            "", "5m", "0s", "-5m", "99999999999999999999d", "tomorrow", "14:30", "2030-13-45T99:00Z", "weekday 08:00", "every",
            "\u{202E}rtl", String(repeating: "x", count: 5000), "low", "critical", "a b", "1h30m", "month on 31 09:00", "0",
        ]
        for _ in 0..<500 {
            var fields: [String: BusValue] = [:]
            for _ in 0..<Int.random(in: 0...5, using: &generator) {
                let value: BusValue =
                    switch Int.random(in: 0..<6, using: &generator) {
                    case 0: .int64(Int64.random(in: .min ... .max, using: &generator))
                    case 1: .bool(Bool.random(using: &generator))
                    case 2: .other(signature: "a(ss)")
                    default: .string(texts.randomElement(using: &generator)!)
                    }
                fields[keys.randomElement(using: &generator)!] = value
            }
            do {
                let id = try fixture.service.schedule(fields)
                #expect(try fixture.service.get(id)["id"] == .string(id))
            } catch {
                #expect(!error.message.isEmpty && !error.message.contains("\n"))
            }
        }
    }

    @Test func aCommandToRunAsTheCommandLineTakesIt() throws {
        let fixture = try Fixture()
        let service = fixture.service
        let backup = try service.schedule([
            "title": .string("Backup"), "in": .string("10m"), "exec": .strings(["/bin/echo", "a b", "$HOME"]),
            "exec-timeout": .string("30s"),
        ])
        let got = try service.get(backup)
        #expect(got["exec"] == .strings(["/bin/echo", "a b", "$HOME"]))
        #expect(got["exec-timeout_s"] == .int64(30))
        let shell = try service.schedule(["title": .string("Site"), "in": .string("10m"), "exec-shell": .string("make -C ~/site")])
        #expect(try service.get(shell)["exec-shell"] == .string("make -C ~/site"))
        #expect(try service.get(shell)["exec-timeout_s"] == .int64(600))

        for (fields, saying) in [
            (["exec": BusValue.strings([])], "missing command"),
            (["exec": .strings(["no-such-program-here"])], "program not found: 'no-such-program-here'"),
            (["exec": .string("/bin/echo")], "'exec' must be an array of strings (D-Bus type as), not s"),
            (["exec": .strings(["/bin/echo"]), "exec-shell": .string("echo")], "both 'exec' and 'exec-shell'"),
            (["exec-timeout": .string("5m")], "'exec-timeout' without a command"),
            (["exec": .strings(["/bin/echo"]), "exec-timeout": .string("2d")], "--exec-timeout"),
        ] {
            let error = #expect(throws: ChimeError.self) {
                try service.schedule(fields.merging(["title": .string("T"), "in": .string("5m")]) { old, _ in old })
            }
            #expect(error?.code == .usage)
            #expect(error?.message.contains(saying) == true, "\(error?.message ?? "") should say \(saying)")
        }
        #expect(try service.list().count == 2)
    }

    @Test func thePropertiesSayWhatIsNextTheFocusSessionAndQuiet() throws {
        let fixture = try Fixture()
        let service = fixture.service
        var properties = try service.properties()
        #expect(properties["NextDue"] == .int64(0))
        #expect(properties["Next"] == .dictionary([:]) && properties["NextDose"] == .dictionary([:]))
        #expect(properties["Focus"] == .dictionary(["state": .string("none")]))
        #expect(properties["Quiet"] == .dictionary(["active": .bool(false)]))

        _ = try service.schedule(["title": .string("Later"), "in": .string("2h"), "id": .string("later")])
        _ = try service.schedule(["title": .string("Tea"), "in": .string("25m"), "id": .string("tea")])
        properties = try service.properties()
        let tea = Self.now.addingTimeInterval(25 * 60)
        #expect(properties["NextDue"] == .int64(RemindersService.micros(tea)))
        #expect(
            properties["Next"]
                == .dictionary([
                    "id": .string("tea"), "title": .string("Tea"), "kind": .string("plain"), "due_us": .int64(RemindersService.micros(tea)),
                ])
        )

        // A focus session of 25 minutes, 5 in: active, 20 left, its end, the tree's stage and its label.
        let timer = FocusTimer(store: fixture.store, clock: ManualMachineClock(wall: fixture.wall))
        let session = try timer.start(minutes: 25, label: "thesis")
        fixture.wall.advance(by: 5 * 60)
        properties = try service.properties()
        guard case .dictionary(let focus) = properties["Focus"] else {
            Issue.record("\(String(describing: properties["Focus"]))")
            return
        }
        #expect(focus["state"] == .string("active") && focus["id"] == .int64(session.id))
        #expect(focus["length_s"] == .int64(1500) && focus["remaining_s"] == .int64(1200))
        #expect(focus["end_us"] == .int64(RemindersService.micros(Self.now.addingTimeInterval(25 * 60))))
        #expect(focus["stage"] == .int32(Int32(TreeStage.stage(remainingSeconds: 1200, lengthSeconds: 1500))))
        #expect(focus["label"] == .string("thesis"))
        // The session's end is a pending reminder too: the soonest is now the focus one's or tea's.
        #expect(properties["NextDue"] == .int64(RemindersService.micros(tea)))

        // Completed (settled by the runner's focus part), the break runs: its kind, time left and end.
        fixture.wall.advance(by: 20 * 60 + 60)
        _ = try timer.settle()
        properties = try service.properties()
        let breakEnd = Self.now.addingTimeInterval(30 * 60)
        #expect(
            properties["Focus"]
                == .dictionary([
                    "state": .string("break"), "id": .int64(1), "kind": .string("short"), "length_s": .int64(300),
                    "remaining_s": .int64(240), "end_us": .int64(RemindersService.micros(breakEnd)),
                ])
        )

        // Quiet for an hour: active, until then, for the manual reason.
        let until = fixture.wall.now().addingTimeInterval(3600)
        _ = try fixture.store.updateQuiet { $0.until = until }
        properties = try service.properties()
        #expect(
            properties["Quiet"]
                == .dictionary(["active": .bool(true), "until_us": .int64(RemindersService.micros(until)), "reasons": .strings(["manual"])])
        )
    }

    @Test func theServedXMLIsTheInstalledFile() throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("packaging/dbus/\(ChimeBus.interface).xml")
        #expect(try String(contentsOf: file, encoding: .utf8) == ChimeBus.introspection)
        #expect(ChimeBus.introspection.contains("<interface name=\"\(ChimeBus.interface)\">"))
        #expect(ChimeBus.objectPath == "/io/github/chime/Chime")
    }
}

/// Whose reminders a caller sees (apps scheduling over D-Bus, a Flatpak sandbox's id from the
/// sandbox), and the actions sent back to the app that scheduled.
struct RemindersOwnershipTests {
    typealias Fixture = RemindersServiceTests.Fixture

    /// A fake `/proc`: process `pid`'s root holds `.flatpak-info` with `text`.
    static func proc(in directory: URL, pid: UInt32, flatpakInfo text: String?) throws -> String {
        let root = directory.appendingPathComponent("proc/\(pid)/root")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        if let text { try text.write(to: root.appendingPathComponent(".flatpak-info"), atomically: true, encoding: .utf8) }
        return directory.appendingPathComponent("proc").path
    }

    @Test func flatpakInfoNamesTheSandboxesApp() throws {
        let info = """
            [Application]
            name=org.example.Notes
            runtime=runtime/org.gnome.Platform/x86_64/45

            [Instance]
            instance-id=123
            """
        #expect(FlatpakInfo.appID(keyfile: info) == "org.example.Notes")
        #expect(FlatpakInfo.appID(keyfile: "# comment\n[Application]\n name = org.example.Spaced \n") == "org.example.Spaced")
        #expect(FlatpakInfo.appID(keyfile: "[Runtime]\nname=org.gnome.Platform\n") == nil)
        #expect(FlatpakInfo.appID(keyfile: "") == nil)

        let fixture = try Fixture()
        let proc = try Self.proc(in: fixture.directory, pid: 42, flatpakInfo: info)
        _ = try Self.proc(in: fixture.directory, pid: 43, flatpakInfo: nil)
        #expect(FlatpakInfo.appID(pid: 42, procRoot: proc) == "org.example.Notes")
        #expect(FlatpakInfo.appID(pid: 43, procRoot: proc) == nil)
        #expect(FlatpakInfo.appID(pid: 44, procRoot: proc) == nil)
    }

    @Test func aSandboxedAppSchedulesAsItselfAndSeesOnlyItsOwn() throws {
        let fixture = try Fixture()
        let proc = try Self.proc(in: fixture.directory, pid: 42, flatpakInfo: "[Application]\nname=org.example.Notes\n")
        _ = try Self.proc(in: fixture.directory, pid: 7, flatpakInfo: nil)
        let service = RemindersService(store: fixture.store, clock: { RemindersServiceTests.now }, poke: {}, procRoot: proc, userID: 1000)

        // Another user's call is refused, whatever it is.
        let other = #expect(throws: BusRefusal.self) { try service.identify(uid: 1001, pid: 7) { _ in false } }
        #expect(other?.name == "org.freedesktop.DBus.Error.AccessDenied")
        #expect(throws: BusRefusal.self) { try service.identify(uid: nil, pid: 7) { _ in false } }

        let notes = try service.identify(uid: 1000, pid: 42) { _ in false }
        #expect(notes == .sandboxed("org.example.Notes"))
        let terminal = try service.identify(uid: 1000, pid: 7) { _ in false }
        #expect(terminal == .everyone)

        // The sandbox's id, not the caller's word.
        _ = try service.schedule(["title": .string("Mine"), "in": .string("5m"), "id": .string("mine")], caller: notes)
        #expect(try service.get("mine")["app-id"] == .string("org.example.Notes"))
        let lying = #expect(throws: ChimeError.self) {
            try service.schedule(["title": .string("T"), "in": .string("5m"), "app-id": .string("org.example.Bank")], caller: notes)
        }
        #expect(lying?.code == .usage && lying?.message.contains("'org.example.Bank'") == true, "\(lying?.message ?? "")")
        _ = try service.schedule(["title": .string("Same"), "in": .string("6m"), "app-id": .string("org.example.Notes")], caller: notes)

        // The command line's reminder and another app's: not listed, not found, not cancelled.
        _ = try service.schedule(["title": .string("Theirs"), "in": .string("5m"), "id": .string("theirs")])
        _ = try service.schedule([
            "title": .string("Bank"), "in": .string("5m"), "id": .string("bank"), "app-id": .string("org.example.Bank"),
        ])
        let ids = { (caller: BusCaller) in
            try service.list(caller: caller).compactMap { item -> String? in
                if case .string(let id) = item["id"] { id } else { nil }
            }
        }
        #expect(try ids(notes).count == 2 && ids(notes).contains("mine"))
        #expect(try ids(.everyone).count == 4)
        for id in ["theirs", "bank", "nothing"] {
            let calls: [() throws -> Void] = [
                { _ = try service.get(id, caller: notes) }, { _ = try service.cancel(id, caller: notes) },
                { try service.done(id, caller: notes) }, { try service.snooze(id, duration: "10m", caller: notes) },
            ]
            for call in calls {
                let error = #expect(throws: ChimeError.self) { try call() }
                #expect(
                    error?.code == .notFound
                        && error?.message == "no pending reminder has the id '\(id)': see 'chime list' for pending reminders"
                )
            }
        }
        // Nor replaced under the same id.
        let taken = #expect(throws: ChimeError.self) {
            try service.schedule(["title": .string("Mine now"), "in": .string("5m"), "id": .string("bank")], caller: notes)
        }
        #expect(taken?.code == .conflict)
        #expect(try service.get("bank")["title"] == .string("Bank"))
        #expect(try service.cancel("mine", caller: notes) == "cancelled")
        #expect(try ids(.everyone).count == 3)
    }

    @Test func anUnsandboxedProgramIsTheAppWhoseNameItOwns() throws {
        let fixture = try Fixture()
        let service = fixture.service
        _ = try service.schedule(["title": .string("A"), "in": .string("5m"), "id": .string("a"), "app-id": .string("org.example.A")])
        _ = try service.schedule(["title": .string("B"), "in": .string("5m"), "id": .string("b"), "app-id": .string("org.example.B")])
        _ = try service.schedule(["title": .string("Plain"), "in": .string("5m"), "id": .string("plain")])
        let uid = getuid()
        let a = try service.identify(uid: uid, pid: nil) { $0 == "org.example.A" }
        #expect(a == BusCaller(scope: ["org.example.A"]))
        #expect(try service.list(caller: a).map { $0["id"] } == [.string("a")])
        #expect(throws: ChimeError.self) { try service.cancel("b", caller: a) }
        #expect(try service.identify(uid: uid, pid: nil) { _ in false } == .everyone)
        // An unsandboxed program is taken at its word for the id it schedules under.
        let c = try service.schedule(["title": .string("C"), "in": .string("5m"), "app-id": .string("org.example.C")], caller: a)
        #expect(try service.get(c)["app-id"] == .string("org.example.C"))
        for bad in ["single", "org..x", "org.9x", "org.ex ample", String(repeating: "a.", count: 130) + "b"] {
            let error = #expect(throws: ChimeError.self) {
                try service.schedule(["title": .string("T"), "in": .string("5m"), "app-id": .string(bad)])
            }
            #expect(error?.code == .usage && error?.message.hasPrefix("invalid app-id") == true, "\(error?.message ?? "")")
        }
    }

    @Test func actionsAreKeptShownAndRoutedToAnActivatableApp() throws {
        let fixture = try Fixture()
        let applications = fixture.directory.appendingPathComponent("data/applications")
        try FileManager.default.createDirectory(at: applications, withIntermediateDirectories: true)
        try "[Desktop Entry]\nType=Application\nName=Notes\nDBusActivatable=true\n"
            .write(to: applications.appendingPathComponent("org.example.Notes.desktop"), atomically: true, encoding: .utf8)
        try "[Desktop Entry]\nType=Application\nName=Plain\nExec=plain\n"
            .write(to: applications.appendingPathComponent("org.example.Plain.desktop"), atomically: true, encoding: .utf8)
        let service = RemindersService(
            store: fixture.store,
            clock: { RemindersServiceTests.now },
            environment: ["XDG_DATA_HOME": fixture.directory.appendingPathComponent("data").path, "XDG_DATA_DIRS": "/nonexistent"],
            poke: {}
        )
        let actions = [Note.Action(key: "open", label: "Open"), Note.Action(key: "later.today", label: "Later today")]
        _ = try service.schedule([
            "title": .string("Notes"), "in": .string("5m"), "id": .string("n"), "app-id": .string("org.example.Notes"),
            "actions": .actions(actions),
        ])
        _ = try service.schedule([
            "title": .string("Plain"), "in": .string("5m"), "id": .string("p"), "app-id": .string("org.example.Plain"),
            "actions": .actions(actions),
        ])
        _ = try service.schedule(["title": .string("Mine"), "in": .string("5m"), "id": .string("m"), "actions": .actions(actions)])
        #expect(try service.get("n")["actions"] == .actions(actions))
        #expect(try fixture.store.reminder(id: "n").presentation.actions == actions)

        // The alert shows them instead of Done and Snooze, each answering as action:KEY.
        var note = Note(id: "n", title: "Notes", postedAt: RemindersServiceTests.now)
        try fixture.store.reminder(id: "n").presentation.apply(to: &note)
        let family = PlainReminders(store: fixture.store)
        family.decorate(
            &note,
            for: PendingOccurrence(
                key: OccurrenceKey(reminderKey: 1, dueMicros: 0),
                reminderID: "n",
                title: "Notes",
                body: "",
                presentation: try fixture.store.reminder(id: "n").presentation
            )
        )
        #expect(note.actions.map(\.key) == ["action:open", "action:later.today"])
        #expect(note.actions.map(\.label) == ["Open", "Later today"])

        // Routed only to an app whose desktop entry is D-Bus activatable, and only its own actions.
        #expect(service.route(id: "n", answer: "action:open").map { "\($0.appID) \($0.action)" } == "org.example.Notes open")
        #expect(service.route(id: "n", answer: "done") == nil)
        #expect(service.route(id: "n", answer: "closed") == nil)
        #expect(service.route(id: "p", answer: "action:open") == nil)
        #expect(service.route(id: "m", answer: "action:open") == nil)
        #expect(ApplicationID.objectPath("org.example.Notes") == "/org/example/Notes")
        #expect(ApplicationID.objectPath("org.example.my-app") == "/org/example/my_app")

        for (value, saying) in [
            (BusValue.actions([]), "0 given; expected 1 to 3"),
            (.actions(Array(repeating: Note.Action(key: "a", label: "A"), count: 4)), "4 given"),
            (.actions([Note.Action(key: "a", label: "A"), Note.Action(key: "a", label: "B")]), "given twice"),
            (.actions([Note.Action(key: "app.open", label: "Open"), Note.Action(key: "-x", label: "X")]), "invalid action key '-x'"),
            (.actions([Note.Action(key: "open now", label: "Open")]), "invalid action key"),
            (.actions([Note.Action(key: "open", label: " ")]), "invalid action label"),
            (.strings(["open"]), "'actions' must be an array of (key, label) pairs (D-Bus type a(ss)), not as"),
        ] {
            let error = #expect(throws: ChimeError.self) {
                try service.schedule(["title": .string("T"), "in": .string("5m"), "actions": value])
            }
            #expect(error?.code == .usage && error?.message.contains(saying) == true, "\(error?.message ?? "") should say \(saying)")
        }
    }
}
