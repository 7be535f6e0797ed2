import ChimeTesting
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A small HTTP receiver on loopback for the webhook notifier's end-to-end tests: Python's
/// http.server (Debian's python3), started by pid and stopped by pid. It records each POST (path,
/// Idempotency-Key, Authorization, body) as one JSON line and answers with the status in the file `status`
/// (200 unless the test writes another), so a test can make it fail and recover.
final class WebhookReceiver {
    let directory: URL
    let pid: pid_t
    let port: Int

    static let script = #"""
        import http.server, json, os, sys
        directory = sys.argv[1]
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                try:
                    with open(os.path.join(directory, "status")) as f:
                        status = int(f.read().strip() or "200")
                except FileNotFoundError:
                    status = 200
                record = {"path": self.path, "key": self.headers.get("Idempotency-Key"),
                          "type": self.headers.get("Content-Type"), "status": status,
                          "authorization": self.headers.get("Authorization"),
                          "body": json.loads(body or b"null")}
                with open(os.path.join(directory, "requests.jsonl"), "a") as f:
                    f.write(json.dumps(record) + "\n")
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()
            def log_message(self, *args):
                pass
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        with open(os.path.join(directory, "port.tmp"), "w") as f:
            f.write(str(server.server_address[1]))
        os.rename(os.path.join(directory, "port.tmp"), os.path.join(directory, "port"))
        server.serve_forever()
        """#

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("chime-webhook-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let script = directory.appendingPathComponent("receiver.py")
        try Self.script.write(to: script, atomically: true, encoding: .utf8)
        let environment = try IsolatedEnvironment.variables(root: directory)
        guard
            case .success(let pid) = Spawn.start(
                "/usr/bin/python3",
                [script.path, directory.path],
                environment: environment,
                output: directory.appendingPathComponent("log").path
            )
        else { throw ReceiverError(message: "cannot start /usr/bin/python3") }
        self.pid = pid
        let portFile = directory.appendingPathComponent("port")
        var port: Int?
        for _ in 0..<200 where port == nil {
            port = (try? String(contentsOf: portFile, encoding: .utf8)).flatMap { Int($0) }
            if port == nil { usleep(25_000) }
        }
        guard let port else {
            kill(pid, SIGKILL)
            _ = Spawn.wait(pid)
            let log = (try? String(contentsOf: directory.appendingPathComponent("log"), encoding: .utf8)) ?? ""
            throw ReceiverError(message: "the webhook receiver did not start: \(log)")
        }
        self.port = port
    }

    struct ReceiverError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    /// The status the receiver answers from now on.
    func answer(_ status: Int) throws {
        try "\(status)".write(to: directory.appendingPathComponent("status"), atomically: true, encoding: .utf8)
    }

    /// The requests received so far, oldest first.
    var requests: [[String: Any]] {
        let text = (try? String(contentsOf: directory.appendingPathComponent("requests.jsonl"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }

    /// Waits (bounded, 50 ms steps) until `condition` holds for the requests received.
    func wait(timeout: Double = 10, until condition: ([[String: Any]]) -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition(requests) { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return condition(requests)
    }

    func stop() {
        kill(pid, SIGTERM)
        _ = Spawn.wait(pid)
        try? FileManager.default.removeItem(at: directory)
    }
}

@Suite("Webhook notifier: the runner posts to a real HTTP receiver", .serialized)
struct WebhookRunnerTests {
    @Test("chime run --notifier webhook posts each occurrence once with its Idempotency-Key, and retries a receiver that fails")
    func theRunnerPostsToTheWebhook() async throws {
        let receiver = try WebhookReceiver()
        defer { receiver.stop() }
        let sandbox = try Sandbox()
        let url = "http://127.0.0.1:\(receiver.port)/hook?token=s3cret"
        let runner = try sandbox.startRunner("--notifier", "webhook", "--webhook-url", url)
        #expect(await runner.waitUntilStarted(), "\(runner.stderr)")

        let scheduled = try sandbox.chime("in", "1s", "Deploy window", "Check the dashboards", "--id", "deploy", "--json")
        #expect(scheduled.status == 0, "\(scheduled)")
        #expect(await receiver.wait { $0.count == 1 }, "\(runner.stderr)")
        let first = try #require(receiver.requests.first)
        let body = try #require(first["body"] as? [String: Any])
        #expect(first["path"] as? String == "/hook?token=s3cret")
        #expect(first["type"] as? String == "application/json", "\(first)")
        #expect(body["id"] as? String == "deploy" && body["title"] as? String == "Deploy window", "\(body)")
        #expect(body["body"] as? String == "Check the dashboards")
        let due = try #require(body["due_micros"] as? Int)
        #expect(first["key"] as? String == "\"deploy@\(due)\"", "\(first)")

        // A receiver that fails (503): the occurrence stays due and is retried, under the same
        // key, until it takes it; then nothing more.
        try receiver.answer(503)
        #expect(try sandbox.chime("in", "1s", "Second", "--id", "second").status == 0)
        #expect(await receiver.wait { $0.filter { ($0["status"] as? Int) == 503 }.count >= 2 }, "\(runner.stderr)")
        try receiver.answer(200)
        #expect(
            await receiver.wait(timeout: 15) {
                $0.contains { ($0["status"] as? Int) == 200 && ($0["body"] as? [String: Any])?["id"] as? String == "second" }
            },
            "\(runner.stderr)"
        )
        let second = receiver.requests.filter { ($0["body"] as? [String: Any])?["id"] as? String == "second" }
        #expect(Set(second.compactMap { $0["key"] as? String }).count == 1, "one key for every attempt: \(second)")
        #expect(second.filter { ($0["status"] as? Int) == 200 }.count == 1)
        // Delivered once: nothing more comes
        try await Task.sleep(for: .seconds(1.5))
        #expect(receiver.requests.filter { ($0["status"] as? Int) == 200 }.count == 2, "\(receiver.requests)")
        #expect(await runner.terminate() == 0)
        // The URL's token is never printed
        #expect(!runner.stderr.contains("s3cret"), "\(runner.stderr)")
        #expect(runner.stderr.contains("127.0.0.1:\(receiver.port)"), "\(runner.stderr)")
    }
}
