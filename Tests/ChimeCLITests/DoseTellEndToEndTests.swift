import ChimeCore
import ChimeStore
import Foundation
import GRDB
import Testing

/// `chime med add --tell`: the runner tells someone else, through a real HTTP receiver, once.
@Suite("Someone else told when a dose is not taken", .serialized)
struct DoseTellEndToEndTests {
    @Test(
        "A dose unanswered past med tell --after is told to the webhook once, across a runner restart; taken later, a follow-up says when"
    )
    func theRunnerTellsTheWebhookOnce() async throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let sandbox = try Sandbox()
        let config = sandbox.directory.appendingPathComponent("home/.config/chime")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        try Data("[doses]\nperson_name = \"Alex\"\n".utf8).write(to: config.appendingPathComponent("config.toml"))

        let url = "http://127.0.0.1:\(receiver.port)/tell/alex"
        let base = ["--amount", "500", "--unit", "mg", "--at", "08:00"]
        let added = try sandbox.chime(["med", "add", "Metformin"] + base + ["--tell", url])
        #expect(added.status == 0 && added.stdout.contains("when a dose is missed"), "\(added)")
        #expect(try sandbox.chime("med", "tell", "Metformin", "--after", "1m").status == 0)
        let shown = try sandbox.chime("med", "show", "Metformin")
        #expect(
            shown.stdout.contains("Tells webhook http://127.0.0.1:\(receiver.port), when a dose is unanswered 1m after its time"),
            "\(shown)"
        )
        #expect(!shown.stdout.contains("/tell/alex"), "\(shown)")
        let json = try jsonObject(try sandbox.chime("med", "show", "Metformin", "--json").stdout)
        let tell = try #require((json["medication"] as? [String: Any])?["tell"] as? [String: Any], "\(json)")
        #expect(tell["after_s"] as? Int == 60)

        // Its next dose fell due two minutes ago (after the tell was set): unanswered for more than 1m.
        let occurrence = try nextAlert(of: "Metformin", in: sandbox)
        let due = Date().addingTimeInterval(-120)
        try moveDose(occurrence, to: due, store: sandbox.store)
        let store = try ReminderStore(path: sandbox.store, schemas: chimeSchemas)
        try store.write { db in try db.execute(sql: "UPDATE medication_tell SET since_us = ?", arguments: [due.micros - 1]) }

        var runner = try sandbox.startRunner("--notifier", "console")
        #expect(await runner.waitUntilStarted(), "\(runner.stderr)")
        #expect(await receiver.wait { $0.count == 1 }, "\(runner.stderr)")
        let first = try #require(receiver.requests.first)
        #expect(first["path"] as? String == "/tell/alex")
        let body = try #require(first["body"] as? [String: Any])
        #expect(body["kind"] as? String == "x-chime.dose-tell", "\(body)")
        #expect(body["title"] as? String == "Alex has not taken Metformin 500 mg", "\(body)")
        #expect((body["body"] as? String)?.hasPrefix("Alex has not taken Metformin 500 mg (due ") == true, "\(body)")

        // A restart sends nothing again.
        #expect(await runner.terminate() == 0)
        #expect(runner.stderr.contains("Someone else told about a dose"), "\(runner.stderr)")
        runner = try sandbox.startRunner("--notifier", "console")
        #expect(await runner.waitUntilStarted(), "\(runner.stderr)")
        #expect(await receiver.wait(timeout: 3) { $0.count > 1 } == false, "\(receiver.requests)")

        // Taken now: one follow-up.
        let taken = try sandbox.chime("dose", "take", occurrence)
        #expect(taken.status == 0, "\(taken)")
        #expect(await receiver.wait { $0.count == 2 }, "\(runner.stderr)")
        let second = try #require(receiver.requests.last?["body"] as? [String: Any])
        #expect((second["body"] as? String)?.hasPrefix("Alex took Metformin 500 mg at ") == true, "\(second)")
        #expect(await receiver.wait(timeout: 2) { $0.count > 2 } == false, "\(receiver.requests)")
        #expect(await runner.terminate() == 0)
    }

    @Test("A --tell that is not a channel, or that carries a secret, is refused (exit 64) and nothing is stored")
    func badTellsAreRefused() throws {
        let sandbox = try Sandbox()
        for (value, shown) in [("carers", "'carers'"), ("https://example.com/hook?token=s3cret", "https://example.com/hook?token=***")] {
            let refused = try sandbox.chime("med", "add", "Zinc", "--amount", "25", "--unit", "mg", "--at", "08:00", "--tell", value)
            #expect(refused.status == 64, "\(refused)")
            #expect(refused.stderr.contains(shown) && !refused.stderr.contains("s3cret"), "\(refused)")
        }
        #expect(try sandbox.chime("med", "list").stdout.contains("No medications yet"))
        #expect(try sandbox.chime("med", "add", "Zinc", "--amount", "25", "--unit", "mg", "--at", "08:00").status == 0)
        let edit = try sandbox.chime("med", "tell", "Zinc", "--after", "30m")
        #expect(edit.status == 4 && edit.stderr.contains("Zinc tells no one"), "\(edit)")
        let set = try sandbox.chime("med", "tell", "Zinc", "ntfy:carers-alex")
        #expect(set.status == 0 && set.stdout.contains("Tells ntfy:carers-alex, when a dose is missed"), "\(set)")
        let later = try sandbox.chime("med", "tell", "Zinc", "--after", "45m")
        #expect(later.status == 0 && later.stdout.contains("Tells ntfy:carers-alex, when a dose is unanswered 45m after"), "\(later)")
        let removed = try sandbox.chime("med", "tell", "Zinc", "--off")
        #expect(removed.status == 0 && !removed.stdout.contains("Tells"), "\(removed)")
    }
}
