import ChimeCore
import Foundation

/// Where the webhook notifier posts: an `http://` or `https://` URL with a host, checked once
/// up front so a typo fails at start-up in one line rather than at the first alert.
public struct WebhookURL: Sendable, Hashable, CustomStringConvertible {
    /// The URL as given (the scheme as typed; async-http-client takes either case).
    public let text: String
    /// `http` or `https`.
    public let scheme: String
    /// The host as written between `//` and the port or path (IPv6 in brackets).
    public let host: String
    public let port: Int?

    /// What the one-line error says is accepted.
    public static let expected = "an http:// or https:// URL with a host, such as http://127.0.0.1:8080/hook"

    /// - Throws: ``ChimeError`` `.usage` naming `text` and what is accepted.
    public init(_ text: String) throws {
        func bad() -> ChimeError { ChimeError.invalid("webhook URL", text, expected: Self.expected) }
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
    }

    /// `scheme://host[:port]`: what the runner shows as the destination, without the path and
    /// query, which may carry a token.
    public var origin: String {
        "\(scheme)://\(host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host)" + (port.map { ":\($0)" } ?? "")
    }

    public var description: String { text }
}
