import ChimeCore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Where `--notifier ntfy` or `--notifier gotify` pushes, from the config file and the
/// environment only: a token on the command line would be in `ps` for every local user.
public struct PushTarget: Sendable, Hashable {
    public var server: WebhookURL
    /// ntfy's topic; nil for Gotify.
    public var topic: String?
    /// The access token (ntfy: optional; Gotify: the application's, required). Never shown.
    public var token: String?
}

extension Config {
    /// The ntfy server, topic and token (`ntfy_url`, `ntfy_topic`, `ntfy_token` or
    /// `ntfy_token_file`, or their variables).
    /// - Throws: ``ChimeError/Code/config``, one line: a key missing, both token keys given, or a
    ///   token file that cannot be read, is not a regular file, other users can read, or holds
    ///   no token.
    public func ntfyTarget() throws(ChimeError) -> PushTarget {
        let server = try server(.ntfyURL, root: true, for: "ntfy", example: "https://ntfy.sh")
        let topic = text(.ntfyTopic)
        guard !topic.isEmpty else {
            throw ChimeError(
                .config,
                "--notifier ntfy needs a topic: set ntfy_topic in the config file (\(path)) or CHIME_NTFY_TOPIC; expected \(PushSettings.topicExpected)"
            )
        }
        return PushTarget(server: server, topic: topic, token: try token(.ntfyToken, file: .ntfyTokenFile))
    }

    /// The Gotify server and application token (`gotify_url`, `gotify_token` or
    /// `gotify_token_file`, or their variables).
    /// - Throws: ``ChimeError/Code/config``, one line, as ``ntfyTarget()`` does; Gotify needs a token.
    public func gotifyTarget() throws(ChimeError) -> PushTarget {
        let server = try server(.gotifyURL, root: false, for: "gotify", example: "https://gotify.example.com")
        guard let token = try token(.gotifyToken, file: .gotifyTokenFile) else {
            throw ChimeError(
                .config,
                "--notifier gotify needs an application token: set gotify_token_file or gotify_token in the config file (\(path)), or CHIME_GOTIFY_TOKEN; expected \(PushSettings.tokenExpected)"
            )
        }
        return PushTarget(server: server, topic: nil, token: token)
    }

    /// The ntfy server and token that the messages to someone else about doses go through
    /// (`chime med add --tell ntfy:TOPIC`): `ntfy_url`, else https://ntfy.sh, and the token
    /// of ``ntfyTarget()`` when one is set.
    /// - Throws: ``ChimeError/Code/config``, one line, as ``ntfyTarget()`` does for the token.
    public func ntfyServerForTells() throws(ChimeError) -> (server: WebhookURL, token: String?) {
        let text = text(.ntfyURL)
        let server: WebhookURL
        do {
            server = try WebhookURL.server(text.isEmpty ? "https://ntfy.sh" : text, root: true)
        } catch {
            throw ChimeError(
                .config,
                "invalid \(ConfigKey.ntfyURL.rawValue) '\(ConfigKey.ntfyURL.shown(text))': expected \(ConfigKey.ntfyURL.accepted)"
            )
        }
        return (server, try token(.ntfyToken, file: .ntfyTokenFile))
    }

    private func server(_ key: ConfigKey, root: Bool, for notifier: String, example: String) throws(ChimeError) -> WebhookURL {
        let text = text(key)
        guard !text.isEmpty else {
            throw ChimeError(
                .config,
                "--notifier \(notifier) needs a server: set \(key.rawValue) = \"\(example)\" in the config file (\(path)) or \(key.environmentVariable)"
            )
        }
        do {
            return try WebhookURL.server(text, root: root)
        } catch {
            // Checked when the config was read; kept for a caller that builds a Config by hand.
            throw ChimeError(.config, "invalid \(key.rawValue) '\(key.shown(text))': expected \(key.accepted)")
        }
    }

    /// The token `key` gives, else the one in the file `fileKey` names, else nil.
    private func token(_ key: ConfigKey, file fileKey: ConfigKey) throws(ChimeError) -> String? {
        let token = text(key)
        let path = text(fileKey)
        if !token.isEmpty && !path.isEmpty {
            throw ChimeError(
                .config,
                "\(key.rawValue) (\(setting(key).source.description)) and \(fileKey.rawValue) (\(setting(fileKey).source.description)) both give the token: keep one, the file"
            )
        }
        if !token.isEmpty { return token }
        guard !path.isEmpty else { return nil }
        return try Self.readToken(path: path, key: fileKey)
    }

    /// The largest token file read.
    static let maxTokenFileBytes = 4096

    /// The token in the file at `path`: one line, its final newline and surrounding blanks
    /// dropped. The file must be a regular file that other users cannot read (mode `o-r`, as
    /// `chmod 600` or `umask 077` leaves it): a token anyone on the machine can read is not a
    /// secret, and refusing it at start is kinder than leaking it.
    /// - Throws: ``ChimeError/Code/config`` naming the key and the path (never the content).
    public static func readToken(path: String, key: ConfigKey) throws(ChimeError) -> String {
        let at = "\(key.rawValue) '\(path)'"
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw ChimeError(.config, "\(at): cannot be read (\(String(cString: strerror(errno)))): expected a file holding the token")
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw ChimeError(
                .config,
                "\(at): is \(FileKind.describe(status.st_mode)), not a regular file: expected a file holding the token"
            )
        }
        guard status.st_mode & S_IROTH == 0 else {
            throw ChimeError(
                .config,
                "\(at): other users can read it (mode \(String(status.st_mode & 0o777, radix: 8))): run chmod 600 '\(path)', so that only you can"
            )
        }
        guard status.st_size <= maxTokenFileBytes else {
            throw ChimeError(.config, "\(at): is \(status.st_size) bytes: expected a file holding the token on one line")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ChimeError(.config, "\(at): cannot be read (\(String(cString: strerror(errno)))): expected a file holding the token")
        }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard PushSettings.isToken(text) else {
            throw ChimeError(.config, "\(at): does not hold a token on one line: expected \(PushSettings.tokenExpected)")
        }
        return text
    }
}
