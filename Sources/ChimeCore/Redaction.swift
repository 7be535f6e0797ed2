import Foundation

/// The one place a location that may carry a secret (a store's URL, a webhook's URL) is made fit
/// to show: every message, report, `--json` document and log line that names one shows
/// ``redacted(_:queryValues:)`` of it, never the text as given.
public enum Redaction {
    /// Which query values are secrets.
    public enum QueryValues: Sendable {
        /// Only a `password` parameter's (libpq's URL: its host, port and user stay readable).
        case password
        /// Every one (a webhook's: its query is where a token goes).
        case all
    }

    /// `text` with the password in its user info (`scheme://user:PASSWORD@…`) and the query values
    /// `queryValues` names written as `***`: `postgresql://alice:***@db/chime`,
    /// `…?user=alice&password=***`, `https://hooks.example/h?token=***`.
    ///
    /// By its text, not only through `URLComponents`: a URL that does not parse (a `/` or `?` in
    /// the password) is redacted too, from `://` to its last `@`, erring on hiding more.
    /// - Parameter path: the path written as `/***` too (a webhook's, where services such as
    ///   Slack's and Discord's put the token: `https://hooks.slack.com/***`).
    public static func redacted(_ text: String, queryValues: QueryValues = .password, path: Bool) -> String {
        let shown = redacted(text, queryValues: queryValues)
        guard path, let scheme = shown.range(of: "://") else { return shown }
        let afterScheme = shown[scheme.upperBound...]
        guard let slash = afterScheme.firstIndex(where: { "/?#".contains($0) }), shown[slash] == "/" else { return shown }
        let end = shown[slash...].firstIndex(where: { "?#".contains($0) }) ?? shown.endIndex
        guard shown.distance(from: slash, to: end) > 1 else { return shown }
        return String(shown[..<slash]) + "/***" + shown[end...]
    }

    public static func redacted(_ text: String, queryValues: QueryValues = .password) -> String {
        var head = ""
        var rest = Substring(text)
        if let scheme = text.range(of: "://") {
            if let parts = URLComponents(string: text), parts.string == text {
                if let password = parts.rangeOfPassword {
                    head = String(text[..<password.lowerBound]) + "***"
                    rest = text[password.upperBound...]
                }
            } else {
                let authority = text[scheme.upperBound...]
                let beforeQuery = authority.prefix { $0 != "?" && $0 != "#" }
                if let at = beforeQuery.lastIndex(of: "@") ?? authority.lastIndex(of: "@"),
                    let colon = authority[..<at].firstIndex(of: ":")
                {
                    head = String(text[...colon]) + "***"
                    rest = text[at...]
                }
            }
        }
        guard let question = rest.firstIndex(of: "?") else { return head + rest }
        let fragment = rest[question...].firstIndex(of: "#") ?? rest.endIndex
        let items = rest[rest.index(after: question)..<fragment].split(separator: "&", omittingEmptySubsequences: false).map {
            item -> String in
            guard let equals = item.firstIndex(of: "=") else { return queryValues == .all && !item.isEmpty ? "***" : String(item) }
            let name = item[..<equals]
            let secret = queryValues == .all || (name.removingPercentEncoding ?? String(name)).lowercased() == "password"
            return secret ? String(name) + "=***" : String(item)
        }
        return head + rest[...question] + items.joined(separator: "&") + rest[fragment...]
    }
}
