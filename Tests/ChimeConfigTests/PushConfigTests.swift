import ChimeConfig
import ChimeCore
import Foundation
import Testing

/// Where --notifier ntfy and gotify push, from the file and the environment; tokens never shown.
struct PushConfigTests {
    static let path = "/c/config.toml"

    func config(_ contents: String?, _ environment: [String: String] = [:]) throws(ChimeError) -> Config {
        try Config(path: Self.path, contents: contents, environment: ["HOME": "/h"].merging(environment) { $1 })
    }

    /// A file in a directory of its own, with `mode`.
    func tokenFile(_ text: String, mode: Int) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chime-token-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("token").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        return path
    }

    @Test func ntfyComesFromTheFileAndTheEnvironmentBeatsIt() throws {
        let file = "ntfy_url = \"https://ntfy.sh\"\nntfy_topic = \"chime-alerts\"\nntfy_token = \"tk_file\"\n"
        let target = try config(file).ntfyTarget()
        #expect(target.server.requestURL == "https://ntfy.sh" && target.topic == "chime-alerts" && target.token == "tk_file")
        let overridden = try config(file, ["CHIME_NTFY_TOKEN": "tk_env", "CHIME_NTFY_TOPIC": "other"]).ntfyTarget()
        #expect(overridden.token == "tk_env" && overridden.topic == "other")
        #expect(try config("ntfy_url = \"https://ntfy.sh\"\nntfy_topic = \"t\"\n").ntfyTarget().token == nil)
    }

    @Test func aTokenFileOnlyYouCanReadIsReadOnce() throws {
        let path = try tokenFile("AWH1dDpZ5bh.MaT\n", mode: 0o600)
        let target = try config("gotify_url = \"https://push.example/gotify\"\ngotify_token_file = \"\(path)\"\n").gotifyTarget()
        #expect(target.token == "AWH1dDpZ5bh.MaT")
        #expect(target.server.appending(path: "message") == "https://push.example/gotify/message")
    }

    @Test func aTokenFileOtherUsersCanReadIsRefused() throws {
        let path = try tokenFile("AWH1dDpZ5bh.MaT\n", mode: 0o644)
        let error = try #require(throws: ChimeError.self) {
            try config("gotify_url = \"https://g.example\"\ngotify_token_file = \"\(path)\"\n").gotifyTarget()
        }
        #expect(error.code == .config)
        #expect(
            error.message
                == "gotify_token_file '\(path)': other users can read it (mode 644): run chmod 600 '\(path)', so that only you can"
        )
    }

    @Test(arguments: ["two words\n", "", "a\nb\n"])
    func aTokenFileWithoutATokenIsRefusedWithoutShowingIt(_ text: String) throws {
        let path = try tokenFile(text, mode: 0o600)
        let error = try #require(throws: ChimeError.self) {
            try config("ntfy_url = \"https://ntfy.sh\"\nntfy_topic = \"t\"\nntfy_token_file = \"\(path)\"\n").ntfyTarget()
        }
        #expect(error.code == .config && error.message.contains("does not hold a token on one line"), "\(error)")
        #expect(!error.message.contains("words"))
    }

    @Test func bothATokenAndATokenFileIsRefused() throws {
        let path = try tokenFile("tk_x\n", mode: 0o600)
        let error = try #require(throws: ChimeError.self) {
            try config("ntfy_url = \"https://ntfy.sh\"\nntfy_topic = \"t\"\nntfy_token_file = \"\(path)\"\n", ["CHIME_NTFY_TOKEN": "tk_y"])
                .ntfyTarget()
        }
        #expect(
            error.message.hasPrefix("ntfy_token (env CHIME_NTFY_TOKEN) and ntfy_token_file (file /c/config.toml:3) both give the token")
        )
        #expect(!error.message.contains("tk_y"))
    }

    @Test func whatIsMissingIsNamed() throws {
        let noServer = try #require(throws: ChimeError.self) { try config(nil).ntfyTarget() }
        #expect(noServer.code == .config && noServer.message.contains("set ntfy_url = \"https://ntfy.sh\""), "\(noServer)")
        let noTopic = try #require(throws: ChimeError.self) { try config("ntfy_url = \"https://ntfy.sh\"\n").ntfyTarget() }
        #expect(noTopic.message.contains("needs a topic"))
        let noToken = try #require(throws: ChimeError.self) { try config("gotify_url = \"https://g.example\"\n").gotifyTarget() }
        #expect(noToken.code == .config && noToken.message.contains("needs an application token"), "\(noToken)")
    }

    @Test func badValuesAreOneLineAndATokenIsNeverEchoed() {
        #expect(
            throws: ChimeError(
                .config,
                "config file /c/config.toml:1: invalid ntfy_url \"https://ntfy.sh/alerts\": expected an http:// or https:// URL of the server's root, with no path, user info or query, such as https://ntfy.sh, or \"\" for none"
            )
        ) { try config("ntfy_url = \"https://ntfy.sh/alerts\"\n") }
        #expect(
            throws: ChimeError(
                .config,
                "invalid CHIME_NTFY_TOPIC 'my topic': expected a topic of 1 to 64 letters, digits, - or _, such as chime-alerts, or \"\" for none"
            )
        ) { try config(nil, ["CHIME_NTFY_TOPIC": "my topic"]) }
        #expect(
            throws: ChimeError(
                .config,
                "config file /c/config.toml:1: invalid gotify_token \"***\": expected a token of 1 to 512 printable ASCII characters without spaces, or \"\" for none"
            )
        ) { try config("gotify_token = \"secret token\"\n") }
        #expect(ConfigKey.ntfyToken.shown("tk_secret") == "***")
    }
}
