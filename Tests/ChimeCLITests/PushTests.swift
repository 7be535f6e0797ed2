import ChimeTesting
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A loopback server that answers as ntfy (`POST /`, JSON publish, `Authorization: Bearer`) or
/// Gotify (`POST /message`, `X-Gotify-Key`) document it: Python's http.server, started and
/// stopped by pid. A request without the right token is answered 401 with the server's JSON
/// error; the file `status` makes it answer another status (a 503) until it is removed. Each
/// request is recorded as one JSON line (method, path, the auth headers, body, status).
final class PushReceiver {
    let directory: URL
    let pid: pid_t
    let port: Int

    static let script = #"""
        import http.server, json, os, sys
        directory, kind, token = sys.argv[1], sys.argv[2], sys.argv[3]
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                try:
                    with open(os.path.join(directory, "status")) as f:
                        status = int(f.read().strip())
                except FileNotFoundError:
                    status = None
                message = json.loads(body or b"null")
                if kind == "ntfy":
                    authorized = self.headers.get("Authorization") == "Bearer " + token
                    path_ok = self.path == "/"
                    error = {"code": 40101, "http": 401, "error": "unauthorized"}
                else:
                    authorized = self.headers.get("X-Gotify-Key") == token
                    path_ok = self.path == "/message"
                    error = {"error": "Unauthorized", "errorCode": 401, "errorDescription": "you need to provide a valid access token or user credentials to access this api"}
                if status is not None:
                    answer = {"error": "unavailable"}
                elif not path_ok:
                    status, answer = 404, {"error": "not found"}
                elif not authorized:
                    status, answer = 401, error
                else:
                    status, answer = 200, dict(message, id="m1", event="message")
                record = {"method": "POST", "path": self.path, "status": status,
                          "authorization": self.headers.get("Authorization"),
                          "gotify_key": self.headers.get("X-Gotify-Key"),
                          "type": self.headers.get("Content-Type"), "body": message}
                with open(os.path.join(directory, "requests.jsonl"), "a") as f:
                    f.write(json.dumps(record) + "\n")
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            def log_message(self, *args):
                pass
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        with open(os.path.join(directory, "port.tmp"), "w") as f:
            f.write(str(server.server_address[1]))
        os.rename(os.path.join(directory, "port.tmp"), os.path.join(directory, "port"))
        server.serve_forever()
        """#

    init(_ kind: String, token: String) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("chime-push-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let script = directory.appendingPathComponent("receiver.py")
        try Self.script.write(to: script, atomically: true, encoding: .utf8)
        let environment = try IsolatedEnvironment.variables(root: directory)
        guard
            case .success(let pid) = Spawn.start(
                "/usr/bin/python3",
                [script.path, directory.path, kind, token],
                environment: environment,
                output: directory.appendingPathComponent("log").path
            )
        else { throw WebhookReceiver.ReceiverError(message: "cannot start /usr/bin/python3") }
        self.pid = pid
        var port: Int?
        for _ in 0..<200 where port == nil {
            port = (try? String(contentsOf: directory.appendingPathComponent("port"), encoding: .utf8)).flatMap { Int($0) }
            if port == nil { usleep(25_000) }
        }
        guard let port else {
            kill(pid, SIGKILL)
            _ = Spawn.wait(pid)
            let log = (try? String(contentsOf: directory.appendingPathComponent("log"), encoding: .utf8)) ?? ""
            throw WebhookReceiver.ReceiverError(message: "the push receiver did not start: \(log)")
        }
        self.port = port
    }

    /// Answers `status` to every request from now on (nil: as the server would).
    func answer(_ status: Int?) throws {
        let file = directory.appendingPathComponent("status")
        if let status {
            try "\(status)".write(to: file, atomically: true, encoding: .utf8)
        } else {
            try? FileManager.default.removeItem(at: file)
        }
    }

    var requests: [[String: Any]] {
        let text = (try? String(contentsOf: directory.appendingPathComponent("requests.jsonl"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
    }

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

@Suite("Push to a phone: the runner pushes to ntfy and Gotify", .serialized)
struct PushTests {
    static let ntfyToken = "tk_AgQdq7mVBoFD37zQVN29RhuMzNIz2"
    static let gotifyToken = "AWH1dDpZ5bh.MaT"

    func configure(_ sandbox: borrowing Sandbox, _ text: String) throws {
        let config = sandbox.directory.appendingPathComponent("home/.config/chime")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: config.appendingPathComponent("config.toml"))
    }

    /// The token in a file of `mode` in the sandbox.
    func tokenFile(_ sandbox: borrowing Sandbox, _ token: String, mode: Int = 0o600) throws -> String {
        let path = sandbox.directory.appendingPathComponent("token-\(UUID().uuidString)").path
        try Data((token + "\n").utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        return path
    }

    @Test(
        "chime run --notifier ntfy pushes a reminder to the topic with the token from a file; a 503 is retried by the runner, the token never shown"
    )
    func theRunnerPushesToNtfy() async throws {
        let receiver = try PushReceiver("ntfy", token: Self.ntfyToken)
        defer { receiver.stop() }
        let sandbox = try Sandbox()
        let path = try tokenFile(sandbox, Self.ntfyToken)
        try configure(
            sandbox,
            "ntfy_url = \"http://127.0.0.1:\(receiver.port)\"\nntfy_topic = \"chime-alerts\"\nntfy_token_file = \"\(path)\"\n"
        )
        let shown = try sandbox.chime("config", "show")
        #expect(shown.status == 0 && shown.stdout.contains("ntfy_token_file") && !shown.stdout.contains(Self.ntfyToken), "\(shown)")

        let runner = try sandbox.startRunner("--notifier", "ntfy", "--log-level", "debug")
        #expect(await runner.waitUntilStarted(), "\(runner.stderr)")
        #expect(runner.stderr.contains("ntfy (http://127.0.0.1:\(receiver.port))"), "\(runner.stderr)")
        #expect(try sandbox.chime("in", "1s", "Tea is ready", "Green, 3 minutes", "--id", "tea").status == 0)
        #expect(await receiver.wait { $0.count == 1 }, "\(runner.stderr)")
        let first = try #require(receiver.requests.first)
        #expect(first["path"] as? String == "/" && first["status"] as? Int == 200, "\(first)")
        #expect(first["authorization"] as? String == "Bearer \(Self.ntfyToken)")
        #expect(first["type"] as? String == "application/json")
        let body = try #require(first["body"] as? [String: Any])
        #expect(body["topic"] as? String == "chime-alerts")
        #expect(body["title"] as? String == "Tea is ready")
        #expect((body["message"] as? String)?.hasPrefix("Green, 3 minutes\n\nAnswer: chime done tea") == true, "\(body)")
        #expect(body["priority"] as? Int == 3)
        #expect(body["actions"] == nil)

        // The server fails (503), then takes it: the runner retries the occurrence until then.
        try receiver.answer(503)
        #expect(try sandbox.chime("in", "1s", "Stretch", "--id", "stretch").status == 0)
        #expect(await receiver.wait { $0.filter { ($0["status"] as? Int) == 503 }.count >= 2 }, "\(runner.stderr)")
        try receiver.answer(nil)
        #expect(
            await receiver.wait(timeout: 15) {
                $0.contains {
                    ($0["status"] as? Int) == 200
                        && ($0["body"] as? [String: Any])?["message"] as? String
                            == "Stretch\n\nAnswer: chime done stretch (or chime snooze stretch)"
                }
            },
            "\(receiver.requests) \(runner.stderr)"
        )
        #expect(await runner.terminate() == 0)
        #expect(runner.stderr.contains("answered HTTP 503"), "\(runner.stderr)")
        #expect(!runner.stderr.contains(Self.ntfyToken), "\(runner.stderr)")
    }

    @Test("chime notify --notifier gotify posts to /message with X-Gotify-Key; a wrong token is one delivery error without the token")
    func notifyPushesToGotify() async throws {
        let receiver = try PushReceiver("gotify", token: Self.gotifyToken)
        defer { receiver.stop() }
        let sandbox = try Sandbox()
        try configure(
            sandbox,
            "notifier = \"gotify\"\ngotify_url = \"http://127.0.0.1:\(receiver.port)/\"\ngotify_token = \"\(Self.gotifyToken)\"\n"
        )
        let result = try sandbox.chime("notify", "Backup done", "42 files", "--urgency", "critical", "--notifier", "gotify", "--json")
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("\"notifier\":\"gotify\""), "\(result)")
        let request = try #require(receiver.requests.first)
        #expect(request["path"] as? String == "/message" && request["gotify_key"] as? String == Self.gotifyToken, "\(request)")
        let body = try #require(request["body"] as? [String: Any])
        #expect(body["title"] as? String == "Backup done" && body["message"] as? String == "42 files" && body["priority"] as? Int == 8)
        let shown = try sandbox.chime("config", "show")
        #expect(shown.stdout.contains("***") && !shown.stdout.contains(Self.gotifyToken), "\(shown)")

        try configure(sandbox, "gotify_url = \"http://127.0.0.1:\(receiver.port)\"\ngotify_token = \"Awrong.token12\"\n")
        let refused = try sandbox.chime("notify", "Backup done", "--notifier", "gotify")
        #expect(refused.status != 0 && refused.stderr.contains("HTTP 401 Unauthorized"), "\(refused)")
        #expect(!refused.stderr.contains("Awrong.token12"), "\(refused)")
    }

    @Test("A token file other users can read, a missing topic, a token given twice: one line each, exit 78, no token shown")
    func badPushSettingsAreConfigErrors() throws {
        let sandbox = try Sandbox()
        let open = try tokenFile(sandbox, Self.ntfyToken, mode: 0o644)
        try configure(sandbox, "ntfy_url = \"https://ntfy.sh\"\nntfy_topic = \"chime-alerts\"\nntfy_token_file = \"\(open)\"\n")
        let readable = try sandbox.chime("notify", "Tea", "--notifier", "ntfy")
        #expect(readable.status == 78, "\(readable)")
        #expect(
            readable.stderr
                == "chime: ntfy_token_file '\(open)': other users can read it (mode 644): run chmod 600 '\(open)', so that only you can\n"
        )

        try configure(sandbox, "ntfy_url = \"https://ntfy.sh\"\n")
        let noTopic = try sandbox.chime("notify", "Tea", "--notifier", "ntfy")
        #expect(noTopic.status == 78 && noTopic.stderr.contains("needs a topic"), "\(noTopic)")

        try configure(sandbox, "ntfy_url = \"https://ntfy.sh/chime-alerts\"\n")
        let path = try sandbox.chime("run", "--notifier", "ntfy")
        #expect(path.status == 78 && path.stderr.contains("invalid ntfy_url \"https://ntfy.sh/chime-alerts\""), "\(path)")

        try configure(
            sandbox,
            "ntfy_url = \"https://ntfy.sh\"\nntfy_topic = \"t\"\nntfy_token = \"\(Self.ntfyToken)\"\nntfy_token_file = \"\(open)\"\n"
        )
        let twice = try sandbox.chime("notify", "Tea", "--notifier", "ntfy")
        #expect(twice.status == 78 && twice.stderr.contains("both give the token"), "\(twice)")
        #expect(!twice.stderr.contains(Self.ntfyToken))

        // No flag takes a token.
        let flag = try sandbox.chime("run", "--notifier", "ntfy", "--ntfy-token", Self.ntfyToken)
        #expect(flag.status == 64, "\(flag)")
    }
}
