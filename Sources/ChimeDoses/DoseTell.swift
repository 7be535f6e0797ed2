import ChimeCore
import Foundation

/// Where someone else is told about a medication's doses (Medisafe's Medfriend): an ntfy topic
/// their phone subscribes to, or a webhook. What is stored and shown holds no token: an ntfy
/// token comes from the config file or the environment when the tell is sent (`ntfy_token`),
/// and a webhook's URL may carry no user info or query.
public enum DoseTellChannel: Sendable, Hashable {
    /// A topic on the config's ntfy server (`ntfy_url`, else https://ntfy.sh).
    case ntfy(topic: String)
    /// A URL the tell is posted to as JSON (as `--notifier webhook` posts an alert).
    case webhook(WebhookURL)

    /// What `--tell` accepts.
    public static let expected =
        "ntfy:TOPIC (a topic of 1 to 64 letters, digits, - or _) or an http:// or https:// webhook URL without user info or a query"

    /// `ntfy:TOPIC` or `http(s)://…`.
    /// - Throws: `.usage` naming the value (a URL redacted) and what is accepted.
    public static func parse(_ text: String) throws(ChimeError) -> DoseTellChannel {
        if text.lowercased().hasPrefix("ntfy:") {
            let topic = String(text.dropFirst("ntfy:".count))
            guard PushSettings.isTopic(topic) else { throw ChimeError.invalid("--tell", text, expected: expected) }
            return .ntfy(topic: topic)
        }
        let lowered = text.lowercased()
        guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://"), let url = try? WebhookURL(text) else {
            throw ChimeError.invalid("--tell", WebhookURL.redacted(text), expected: expected)
        }
        guard !url.carriesSecret, !text.contains("#") else {
            throw ChimeError(
                .usage,
                "invalid --tell '\(url.redacted)': a URL with user info or a query would be stored and shown with the medication; "
                    + "expected \(expected)"
            )
        }
        return .webhook(url)
    }

    /// The stored form, which ``parse(_:)`` reads back.
    public var stored: String {
        switch self {
        case .ntfy(let topic): "ntfy:\(topic)"
        case .webhook(let url): url.text
        }
    }

    /// As `chime med show` and the app show it: `ntfy:TOPIC`, or a webhook's origin (its path
    /// may carry a token, as Slack's and Discord's do).
    public var shown: String {
        switch self {
        case .ntfy(let topic): "ntfy:\(topic)"
        case .webhook(let url): "webhook \(url.origin)"
        }
    }
}

/// Who is told about a medication's doses, and when: a dose still unanswered ``after`` its time,
/// or (nil) once it is missed.
public struct DoseTellRule: Sendable, Hashable {
    public var channel: DoseTellChannel
    /// Seconds after the dose's time; nil: when the dose is missed (its `--missed-after`).
    public var after: Int?

    /// What `--tell-after` accepts, in seconds.
    public static let afterRange: ClosedRange<Int64> = 60...604_800

    public init(channel: DoseTellChannel, after: Int? = nil) {
        self.channel = channel
        self.after = after
    }

    /// "ntfy:carers-alex, when a dose is missed" / "…, when a dose is unanswered 30m after its time".
    public var summary: String {
        guard let after else { return "\(channel.shown), when a dose is missed" }
        return "\(channel.shown), when a dose is unanswered \(Trigger.formatInterval(Int64(after))) after its time"
    }
}

/// One message to the other person about one dose, waiting in the store until it is sent:
/// "Alex has not taken Metformin 500 mg (due 08:00)", and after it, when the dose is answered,
/// "Alex took Metformin 500 mg at 09:12 (due 08:00)".
public struct DoseTell: Sendable, Hashable, Identifiable {
    public enum Kind: String, Sendable, Hashable {
        /// The dose is unanswered past its medication's `--tell-after`, or missed.
        case notTaken = "not_taken"
        /// A dose told as not taken was taken or skipped afterwards.
        case answered
    }

    public var id: Int64
    public var doseID: Int64
    public var kind: Kind
    public var channel: DoseTellChannel
    /// "Metformin 500 mg".
    public var medication: String
    public var scheduled: Date
    public var zone: TimeZone
    /// The dose's status now (for ``Kind/answered``: taken or skipped).
    public var status: DoseStatus
    public var takenAt: Date?
    /// When it was recorded: its webhook's idempotency key.
    public var recordedAt: Date
    /// Failed attempts so far.
    public var attempts: Int

    /// The title and the message the other person reads, `person` naming the one who takes the
    /// medication; a time on another day than `now`'s says the day.
    public func text(person: String, now: Date) -> (title: String, message: String) {
        let due = "due " + Self.when(scheduled, in: zone, now: now)
        switch (kind, status) {
        case (.answered, .taken):
            let taken = takenAt.map { " at " + Self.when($0, in: zone, now: now) } ?? ""
            return ("\(person) took \(medication)", "\(person) took \(medication)\(taken) (\(due)).")
        case (.answered, .skipped):
            return ("\(person) skipped \(medication)", "\(person) skipped \(medication) (\(due)).")
        default:
            return ("\(person) has not taken \(medication)", "\(person) has not taken \(medication) (\(due)).")
        }
    }

    /// `08:00` on `now`'s day, else `Mon 2026-11-23 08:00`.
    static func when(_ instant: Date, in zone: TimeZone, now: Date) -> String {
        if CivilDay.of(instant, in: zone) == CivilDay.of(now, in: zone) { return TimeText.clock(instant, in: zone) }
        let local = TimeText.local(instant, in: zone)
        return local.split(separator: " ").prefix(3).joined(separator: " ")
    }
}

/// Sends a tell to the other person (ChimeWebhook's ntfy and webhook posting, in `chime run`).
public protocol DoseTeller: Sendable {
    /// Sends `tell` as `title` and `message`.
    /// - Throws: ``ChimeError`` `.delivery` when it did not arrive; it is tried again later.
    func send(_ tell: DoseTell, title: String, message: String) async throws
}

/// How tells are sent and given up.
public enum DoseTellRules {
    /// A tell whose time passed more than this long ago when Chime first looks (the runner was
    /// down, the machine off) is not sent: the other person gets no stale news.
    public static let catchUpLimit: TimeInterval = 12 * 3600
    /// A tell not delivered within this long after it was recorded is given up.
    public static let giveUpAfter: TimeInterval = 24 * 3600

    /// The wait before trying again after `attempts` failed attempts: 1 min, doubled, at most 1 h.
    public static func retryDelay(afterAttempts attempts: Int) -> TimeInterval {
        min(60 * pow(2, Double(max(attempts - 1, 0))), 3600)
    }
}

extension DoseTellRules {
    /// The migration that made the tables of tells (one constant: the lead renumbers on merge).
    public static let migration = "v20: someone else told about a medication's doses"
}
