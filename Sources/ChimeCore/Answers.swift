import Foundation

/// The alert last shown for a reminder id, as `chime done` and `chime snooze` find it.
public struct ShownAlert: Sendable, Hashable {
    /// How long after it was shown an alert counts as still showing (for `chime done`,
    /// `chime snooze`, and `chime cancel` of a one-shot that has fired): a console runner never
    /// hears that an alert was closed, so age is what ends it. The same on both stores.
    public static let showingWindow: TimeInterval = 86_400

    public var reminderID: String
    public var kind: String
    public var title: String
    /// The occurrence's due instant.
    public var due: Date
    public var postedAt: Date
    /// What was done with it so far: an action's key, `closed:<reason>`, or nil.
    public var response: String?
    /// Whether its reminder fires again on its own (recurring and still pending).
    public var recurring: Bool

    public init(reminderID: String, kind: String, title: String, due: Date, postedAt: Date, response: String?, recurring: Bool) {
        self.reminderID = reminderID
        self.kind = kind
        self.title = title
        self.due = due
        self.postedAt = postedAt
        self.response = response
        self.recurring = recurring
    }
}

/// What an answer from the command line did.
public struct AnsweredAlert: Sendable, Hashable {
    public var alert: ShownAlert
    /// The key recorded: `done`, `snooze`.
    public var response: String
    /// When the snoozed alert comes back.
    public var snoozedUntil: Date?

    public init(alert: ShownAlert, response: String, snoozedUntil: Date?) {
        self.alert = alert
        self.response = response
        self.snoozedUntil = snoozedUntil
    }
}

/// What holds alerts now and what waits, with why: `chime quiet status` and `chime list` render it.
public struct HoldStatus: Sendable, Hashable {
    /// What holds ordinary alerts at the instant asked (see ``QuietState/holds(at:zone:families:desktopDoNotDisturb:)``).
    public var holds: [AlertHold]
    /// A snoozed or held alert, and for a held one what holds it.
    public struct Entry: Sendable, Hashable {
        public var alert: WaitingAlert
        public var hold: AlertHold?
    }
    /// The snoozed and held alerts, earliest first.
    public var waiting: [Entry]

    /// The alerts held (not those only snoozed).
    public var held: [Entry] { waiting.filter { $0.alert.isHeld } }

    /// What holds alerts at `now` and why, as the scheduler decides it, from a store's quiet
    /// state and waiting alerts (either store's): the families' holds (each family asked as at
    /// a pass: a read), the desktop's do-not-disturb as read by the caller, and each waiting
    /// alert with the hold that keeps it.
    public init(
        quiet: QuietState,
        waiting: [WaitingAlert],
        families: [any ReminderFamily],
        desktopDoNotDisturb: Bool?,
        now: Date,
        zone: TimeZone
    ) throws {
        let familyHolds = quiet.settings.familyHold ? try families.compactMap { try $0.hold() } : []
        let holds = quiet.holds(at: now, zone: zone, families: familyHolds, desktopDoNotDisturb: desktopDoNotDisturb)
        self.holds = holds
        self.waiting = waiting.map { alert in
            Entry(alert: alert, hold: QuietState.reason(for: alert.occurrence, among: holds))
        }
    }
}
