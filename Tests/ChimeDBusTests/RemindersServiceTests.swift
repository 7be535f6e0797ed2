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

        // A focus session of 25 minutes, 5 in: active, 20 left, its end and the tree's stage.
        let timer = FocusTimer(store: fixture.store, clock: ManualMachineClock(wall: fixture.wall))
        let session = try timer.start(minutes: 25)
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
        // The session's end is a pending reminder too: the soonest is now the focus one's or tea's.
        #expect(properties["NextDue"] == .int64(RemindersService.micros(tea)))

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
