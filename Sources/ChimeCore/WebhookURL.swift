import Foundation

/// Where the webhook notifier posts: an `http://` or `https://` URL with a host, checked once
/// up front so a typo fails at start-up in one line rather than at the first alert. Here, not in
/// ChimeWebhook, so that the config file's `webhook_url` is checked when it is read.
///
/// Its query and user info may carry a secret (a token, a password): it is shown only
/// ``redacted`` (``description`` is that), and credentials in the user info are sent as HTTP
/// Basic authorization (``authorization``), not left in the URL.
public struct WebhookURL: Sendable, Hashable, CustomStringConvertible {
    /// The URL as given (the scheme as typed; libcurl takes either case). Never show it:
    /// show ``redacted``.
    public let text: String
    /// `http` or `https`.
    public let scheme: String
    /// The host as written between `//` and the port or path (IPv6 in brackets).
    public let host: String
    public let port: Int?
    /// The URL the request goes to: ``text`` without its user info.
    public let requestURL: String
    /// `Basic base64(user:password)` (RFC 7617) from the URL's user info, percent-decoded; nil
    /// when the URL has none.
    public let authorization: String?
    /// Whether the URL carries a secret: user info or a query (what a person should not put on a
    /// command line, where every local user reads it in `ps`).
    public let carriesSecret: Bool

    /// What the one-line error says is accepted.
    public static let expected = "an http:// or https:// URL with a host, such as http://127.0.0.1:8080/hook"

    /// - Throws: ``ChimeError`` `.usage` naming `text`, redacted, and what is accepted.
    public init(_ text: String) throws(ChimeError) {
        func bad() -> ChimeError { ChimeError.invalid("webhook URL", Self.redacted(text), expected: Self.expected) }
        // Whitespace or control characters inside a URL are a pasting mistake, never a host.
        guard !text.isEmpty, !text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) else {
            throw bad()
        }
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty,
            // `http:host/path` parses with no authority: ask for the `//`.
            text.dropFirst(scheme.count).hasPrefix("://")
        else { throw bad() }
        if let port = components.port, !(1...65_535).contains(port) { throw bad() }
        self.text = text
        self.scheme = scheme
        self.host = host
        self.port = components.port
        if let user = components.user {
            let credentials = user + ":" + (components.password ?? "")
            authorization = "Basic " + Data(credentials.utf8).base64EncodedString()
            var withoutUser = components
            withoutUser.percentEncodedUser = nil
            withoutUser.percentEncodedPassword = nil
            requestURL = withoutUser.string ?? text
        } else {
            authorization = nil
            requestURL = text
        }
        carriesSecret = components.percentEncodedUser != nil || components.percentEncodedQuery != nil
    }

    /// `text` as it may be shown: the password in the user info and every query value `***`.
    public static func redacted(_ text: String) -> String { Redaction.redacted(text, queryValues: .all) }

    /// ``text`` as it may be shown (``redacted(_:)``).
    public var redacted: String { Self.redacted(text) }

    /// `scheme://host[:port]`: what the runner shows as the destination, without the path and
    /// query, which may carry a token.
    public var origin: String {
        "\(scheme)://\(host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host)" + (port.map { ":\($0)" } ?? "")
    }

    /// ``redacted``: a URL interpolated into a message shows no secret.
    public var description: String { redacted }
}
