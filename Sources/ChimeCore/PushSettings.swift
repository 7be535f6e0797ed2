import Foundation

/// The rules of the push notifiers' settings (`--notifier ntfy`, `--notifier gotify`): a server's
/// URL, an ntfy topic, an access token. Here, not in ChimeWebhook, so that the config file's
/// values are checked when it is read.
public enum PushSettings {
    /// What the one-line error says a topic may be.
    public static let topicExpected = "a topic of 1 to 64 letters, digits, - or _, such as chime-alerts"

    /// What the one-line error says a token may be (the token itself is never shown).
    public static let tokenExpected = "a token of 1 to 512 printable ASCII characters without spaces"

    /// An ntfy topic: 1 to 64 of `A-Z a-z 0-9 - _` (ntfy's own rule, `[-_A-Za-z0-9]{1,64}`).
    public static func isTopic(_ text: String) -> Bool {
        (1...64).contains(text.utf8.count)
            && text.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                    true
                default: false
                }
            }
    }

    /// A token fit for a header field: printable ASCII, no space, at most 512 bytes (ntfy's are
    /// `tk_` and 29 more, Gotify's 15).
    public static func isToken(_ text: String) -> Bool {
        (1...512).contains(text.utf8.count) && text.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }

    /// A token as a message, `chime config show` or a log may show it: `***` (nothing for none).
    public static func redactedToken(_ text: String) -> String { text.isEmpty ? "" : "***" }
}

extension WebhookURL {
    /// What the one-line error says a push server's URL may be: with `root`, the server's root
    /// (ntfy publishes JSON there only; a path would be taken as a topic).
    public static func serverExpected(root: Bool) -> String {
        root
            ? "an http:// or https:// URL of the server's root, with no path, user info or query, such as https://ntfy.sh"
            : "an http:// or https:// URL with a host and no user info or query, such as https://gotify.example.com"
    }

    /// A push server's URL (ntfy's, Gotify's): an http:// or https:// URL with a host, and none
    /// of the user info, query or fragment that would carry a credential beside the token; with
    /// `root`, no path but `/` either.
    /// - Throws: ``ChimeError`` `.usage` naming `text`, redacted, and what is accepted.
    public static func server(_ text: String, root: Bool) throws(ChimeError) -> WebhookURL {
        let bad = ChimeError.invalid("server URL", redacted(text), expected: serverExpected(root: root))
        guard let url = try? WebhookURL(text), !url.carriesSecret, !text.contains("#") else { throw bad }
        if root, let path = URLComponents(string: text)?.percentEncodedPath, !path.isEmpty, path != "/" { throw bad }
        return url
    }

    /// The URL of `path` (`message`) under this one: `https://push.example/gotify/` and
    /// `https://push.example/gotify` both give `https://push.example/gotify/message`.
    public func appending(path: String) -> String {
        (requestURL.hasSuffix("/") ? requestURL : requestURL + "/") + path
    }
}

extension ConfigKey {
    /// The ntfy server `--notifier ntfy` publishes to.
    public static let ntfyURL = ConfigKey(
        "ntfy_url",
        environment: "CHIME_NTFY_URL",
        summary: "The ntfy server --notifier ntfy publishes to",
        rule: .serverURL(root: true),
        redact: { WebhookURL.redacted($0) },
        builtInDefault: { _ in .text("") }
    )

    /// The ntfy topic, which the phone subscribes to.
    public static let ntfyTopic = ConfigKey(
        "ntfy_topic",
        environment: "CHIME_NTFY_TOPIC",
        summary: "The ntfy topic your phone subscribes to (on ntfy.sh, anyone who knows it reads it); shown as ***",
        rule: .topic,
        // On a public server the topic is the password: config show hides it as a token.
        secret: true,
        builtInDefault: { _ in .text("") }
    )

    /// The ntfy access token, sent as `Authorization: Bearer`.
    public static let ntfyToken = ConfigKey(
        "ntfy_token",
        environment: "CHIME_NTFY_TOKEN",
        summary: "An ntfy access token (tk_…), if the topic needs one; shown as ***",
        rule: .token,
        redact: { PushSettings.redactedToken($0) },
        builtInDefault: { _ in .text("") }
    )

    /// A file holding the ntfy access token instead.
    public static let ntfyTokenFile = ConfigKey(
        "ntfy_token_file",
        environment: "CHIME_NTFY_TOKEN_FILE",
        summary: "Or a file holding the ntfy token, which other users must not be able to read",
        rule: .path,
        builtInDefault: { _ in .text("") }
    )

    /// The Gotify server `--notifier gotify` posts to.
    public static let gotifyURL = ConfigKey(
        "gotify_url",
        environment: "CHIME_GOTIFY_URL",
        summary: "The Gotify server --notifier gotify posts to",
        rule: .serverURL(root: false),
        redact: { WebhookURL.redacted($0) },
        builtInDefault: { _ in .text("") }
    )

    /// The Gotify application token, sent as `X-Gotify-Key`.
    public static let gotifyToken = ConfigKey(
        "gotify_token",
        environment: "CHIME_GOTIFY_TOKEN",
        summary: "The Gotify application's token; shown as ***",
        rule: .token,
        redact: { PushSettings.redactedToken($0) },
        builtInDefault: { _ in .text("") }
    )

    /// A file holding the Gotify application token instead.
    public static let gotifyTokenFile = ConfigKey(
        "gotify_token_file",
        environment: "CHIME_GOTIFY_TOKEN_FILE",
        summary: "Or a file holding the Gotify token, which other users must not be able to read",
        rule: .path,
        builtInDefault: { _ in .text("") }
    )

    /// The push notifiers' keys, in the file's order.
    public static let pushKeys: [ConfigKey] = [
        .ntfyURL, .ntfyTopic, .ntfyToken, .ntfyTokenFile, .gotifyURL, .gotifyToken, .gotifyTokenFile,
    ]
}
