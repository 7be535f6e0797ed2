import Foundation

/// One alert handed to a ``Notifier``: what to show, and which occurrences it delivers.
public struct Note: Sendable, Hashable {
    public enum Urgency: String, Sendable, Hashable, Codable, CaseIterable {
        case low, normal, critical
    }

    /// A button on the alert: `key` comes back in a ``NoteResponse``.
    public struct Action: Sendable, Hashable, Codable {
        public var key: String
        public var label: String
        public init(key: String, label: String) {
            self.key = key
            self.label = label
        }
    }

    /// One occurrence this note delivers. A summary note carries several.
    public struct Delivery: Sendable, Hashable {
        public var reminderID: String
        public var title: String
        public var body: String
        public var due: Date
        /// Earlier occurrences of the same recurring reminder folded into this one (missed while down).
        public var missedCount: Int
        /// The reminder's kind (`plain`, or the family that owns it), for a channel that says it.
        public var kind: String
        /// Which post of this occurrence this is: 1 the first time, 2 after one failed post, …
        public var attempt: Int

        public init(
            reminderID: String,
            title: String,
            body: String = "",
            due: Date,
            missedCount: Int = 0,
            kind: String = "plain",
            attempt: Int = 1
        ) {
            self.reminderID = reminderID
            self.title = title
            self.body = body
            self.due = due
            self.missedCount = missedCount
            self.kind = kind
            self.attempt = attempt
        }
    }

    /// Chime's identifier for the alert: the reminder's id, or `summary` for a summary alert.
    public var id: String
    public var title: String
    public var body: String
    public var urgency: Urgency
    public var actions: [Action]
    /// How long the alert stays up; `nil` leaves it to the notification server.
    public var timeout: Duration?
    /// Stays up until answered (as critical urgency does).
    public var sticky: Bool = false
    /// The spec's `transient` hint: the server keeps it out of its history (a live status
    /// that is replaced in place, such as a focus session's tree and time left).
    public var transient: Bool = false
    /// An icon name from the icon theme, or an absolute path.
    public var icon: String?
    /// A sound-theme name (`bell`): the `sound-name` hint on a server that plays sounds, a
    /// console bell (on a terminal) elsewhere.
    public var sound: String?
    /// The spec's category (`x-chime.reminder` when nil).
    public var category: String?
    /// The spec's `value` hint, 0 to 100: how far along what the alert shows is (a focus
    /// session's time); nil sends none.
    public var progress: Int?
    /// Extra string hints for the server.
    public var hints: [String: String] = [:]
    /// How to answer the alert without its ``actions`` (the commands that do what the buttons
    /// do): a notifier that cannot show buttons (a server without `actions`, the console)
    /// shows this instead.
    public var answerInstead: String?
    public var deliveries: [Delivery]
    /// When the scheduler handed the note over; lateness is measured from each delivery's due time.
    public var postedAt: Date

    public init(
        id: String,
        title: String,
        body: String = "",
        urgency: Urgency = .normal,
        actions: [Action] = [],
        timeout: Duration? = nil,
        deliveries: [Delivery] = [],
        postedAt: Date
    ) {
        self.id = id
        self.title = title
        self.body = body
        self.urgency = urgency
        self.actions = actions
        self.timeout = timeout
        self.deliveries = deliveries
        self.postedAt = postedAt
    }

    /// True when the note stands for several occurrences at once.
    public var isSummary: Bool { deliveries.count > 1 }

    /// How long a confirmation stays up: long enough to read a short line, then gone by itself.
    public static let confirmationTimeout: Duration = .seconds(5)

    /// What replaces alert `id` once a person's answer to it is handled ("✓ Zinc 25 mg taken at
    /// 16:19", "Snoozed until 16:29"): no buttons, nothing to answer, gone after
    /// ``confirmationTimeout`` (see ``Notifier/confirm(_:with:)``).
    public static func confirmation(id: String, title: String, body: String = "", at instant: Date) -> Note {
        var note = Note(id: id, title: title, body: body, urgency: .normal, timeout: confirmationTimeout, postedAt: instant)
        note.category = "x-chime.confirmation"
        return note
    }

    /// How late the note is for `delivery`: `postedAt − due`, never negative.
    public func lateness(of delivery: Delivery) -> Duration {
        let seconds = max(0, postedAt.timeIntervalSince(delivery.due))
        return .nanoseconds(Int64((seconds * 1e9).rounded()))
    }
}

/// What the notifier reports back after posting.
public struct PostedNote: Sendable, Hashable {
    public var id: String
    /// The notification server's own id, where there is one.
    public var serverID: UInt32?
    /// The channel that showed it, for the ledger: "desktop", "console", "json" (nil: not said).
    /// A notifier that hands a note to another passes that one's answer through.
    public var via: String?
    public init(id: String, serverID: UInt32? = nil, via: String? = nil) {
        self.id = id
        self.serverID = serverID
        self.via = via
    }
}

/// Something a person did with an alert.
public struct NoteResponse: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        case action(String)
        case closed(CloseReason)
    }
    public enum CloseReason: String, Sendable, Hashable {
        case expired, dismissed
        case closedByCall = "closed"
        case undefined
    }
    public var noteID: String
    public var kind: Kind
    public init(noteID: String, kind: Kind) {
        self.noteID = noteID
        self.kind = kind
    }
}

/// Where alerts go: the desktop, a console stream, or a recording double in tests.
public protocol Notifier: Sendable {
    /// Shows `note`. Throws when it could not be delivered; the scheduler then retries later.
    func post(_ note: Note) async throws -> PostedNote
    /// Closes a shown alert (cancel by identifier): the one this notifier showed under
    /// `shown.id`, else (shown by another process, or before a restart) by the server's id.
    func withdraw(_ shown: PostedNote) async throws
    /// Replaces a shown alert in place by `confirmation` (``Note/confirmation(id:title:body:at:)``):
    /// what a person sees once their answer to it is handled, from its buttons or from the
    /// command line. Only an alert still on screen is replaced (one the person closed does not
    /// come back as a confirmation); one this notifier cannot replace (shown by another process)
    /// is closed. The confirmation's own closing is not an answer: it never comes back on
    /// ``responses``. By default the alert is withdrawn (a channel with nothing on screen).
    func confirm(_ shown: PostedNote, with confirmation: Note) async throws
    /// Actions invoked and alerts closed.
    var responses: AsyncStream<NoteResponse> { get }
    /// Where alerts go now, in a few words ("desktop (dunst 1.9.0)", "console"), or nil while
    /// this notifier can deliver nowhere (it throws ``NotifierUnavailable``): what the runner
    /// publishes for `chime doctor`.
    var destination: String? { get }
    /// Yields true each time the notifier can deliver again after it could not (a notification
    /// server appeared on the bus), false each time it no longer can (the server left). The
    /// scheduler retries at once what waited for it. Finishes at once for a notifier whose
    /// reach never changes.
    var availability: AsyncStream<Bool> { get }
}

extension Notifier {
    public var destination: String? { "other" }
    public func confirm(_ shown: PostedNote, with confirmation: Note) async throws { try await withdraw(shown) }
    public var availability: AsyncStream<Bool> { AsyncStream { $0.finish() } }
}

/// Thrown by a notifier that cannot deliver now and will say on ``Notifier/availability``
/// when it can again (no notification server on the bus). The scheduler keeps the occurrence
/// due without a retry timer (an idle runner does not wake for it) and retries it the moment
/// the notifier says it is available: it is shown then, once.
public struct NotifierUnavailable: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// A human duration: `45s`, `3m 12s`, `2h 5m`, `3d 4h`.
public func formatDuration(_ duration: Duration) -> String {
    let total = Int64(duration.components.seconds)
    if total < 1 {
        let ms = Double(duration.components.attoseconds) / 1e15
        return String(format: "%.1fms", ms)
    }
    let days = total / 86_400
    let hours = total % 86_400 / 3_600
    let minutes = total % 3_600 / 60
    let seconds = total % 60
    if days > 0 { return hours > 0 ? "\(days)d \(hours)h" : "\(days)d" }
    if hours > 0 { return minutes > 0 ? "\(hours)h \(minutes)m" : "\(hours)h" }
    if minutes > 0 { return seconds > 0 ? "\(minutes)m \(seconds)s" : "\(minutes)m" }
    return "\(seconds)s"
}
