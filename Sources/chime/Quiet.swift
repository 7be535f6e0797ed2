import ArgumentParser
import ChimeApp
import ChimeCore
import ChimeFocus
import ChimeLibnotify
import ChimeRunner
import ChimeStore
import Foundation

struct Quiet: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "quiet",
        abstract: "Quiet hours: hold ordinary alerts, then one summary.",
        discussion: """
            While quiet, ordinary alerts are held and come as one summary at the end;
            critical ones always come, doses too unless 'doses wait'. A focus session
            holds plain reminders too (unless 'focus-hold off').
            Examples:
              chime quiet 1h
              chime quiet until 09:00
              chime quiet hours 22:00-07:00
              chime quiet off
              chime quiet status --json
            More: man chime (chime quiet)
            """
    )

    @Argument(
        help: ArgumentHelp("What to do: DURATION, until HH:MM, off, status, hours, doses, focus-hold.", valueName: "words"),
        completion: Completion.quietWords
    )
    var words: [String] = []
    @OptionGroup var global: GlobalOptions

    static let expected =
        "a duration such as 1h, 'until HH:MM', 'off', 'status', 'hours START-END|off', 'doses come|wait' or 'focus-hold on|off'"

    /// A change to the quiet state.
    typealias Change = (inout QuietState) throws(ChimeError) -> Void

    func run() async throws {
        if let url = try global.postgresURL() { return try await runPostgres(url) }
        let now = Date()
        let zone = TimeZone.current
        guard let change = try Self.change(words, now: now, zone: zone) else {
            let store = try global.openStore(.read)
            emit(try QuietReport(store: store, now: now, zone: zone), json: global.json)
            return
        }
        let store = try global.openStore(.create)
        try store.updateQuiet(change)
        if !RunnerControl.poke(storePath: store.path) && !global.json {
            Output.note("No runner is running for this store: the change is saved; a runner follows it once 'chime run' starts.")
        }
        emit(try QuietReport(store: store, now: now, zone: zone), json: global.json)
    }

    /// The change the words ask for, at `now` (the store's clock); nil for `status`.
    static func change(_ words: [String], now: Date, zone: TimeZone) throws(ChimeError) -> Change? {
        func expectCount(_ rest: [String], _ count: Int, what: String = "nothing") throws(ChimeError) {
            try Self.expectCount(words, rest, count, what: what)
        }
        guard let verb = words.first else { throw ChimeError(.usage, "missing what to do: expected \(Self.expected)") }
        let rest = Array(words.dropFirst())
        switch verb {
        case "status":
            try expectCount(rest, 0)
            return nil
        case "until":
            try expectCount(rest, 1, what: "a time HH:MM, 9am or noon")
            let end = try TimeParsing.spoken(rest[0], now: now, zone: zone).instant
            return { $0.until = end }
        case "off":
            try expectCount(rest, 0)
            return { state in
                state.until = nil
                // In the daily window: off for tonight, back at tomorrow's start.
                if let period = state.period(at: now, zone: zone), period.reasons.contains(.hours), let window = state.settings.hours {
                    state.windowOffUntil = QuietState.next(window.end, after: now, zone: zone)
                }
            }
        case "hours":
            try expectCount(rest, 1, what: "a window such as 22:00-07:00, or 'off'")
            let window = rest[0] == "off" ? nil : try QuietSettings.Window.parse(rest[0])
            return {
                $0.settings.hours = window
                $0.windowOffUntil = nil
            }
        case "doses":
            try expectCount(rest, 1, what: "'come' or 'wait'")
            guard let essential = QuietSettings.Essential(rawValue: rest[0]) else {
                throw ChimeError.invalid("doses setting", rest[0], expected: "'come' (doses come through quiet) or 'wait'")
            }
            return { $0.settings.essential = essential }
        case "focus-hold":
            try expectCount(rest, 1, what: "'on' or 'off'")
            guard rest[0] == "on" || rest[0] == "off" else {
                throw ChimeError.invalid("focus-hold setting", rest[0], expected: "'on' (hold plain reminders during focus) or 'off'")
            }
            return { $0.settings.familyHold = rest[0] == "on" }
        default:
            try expectCount(rest, 0)
            let seconds: Int64
            do {
                seconds = try TimeParsing.duration(verb)
            } catch {
                throw ChimeError.invalid("quiet", verb, expected: Self.expected)
            }
            return { $0.until = now.addingTimeInterval(TimeInterval(seconds)) }
        }
    }

    private static func expectCount(_ words: [String], _ rest: [String], _ count: Int, what: String) throws(ChimeError) {
        guard rest.count != count else { return }
        let verb = words[0]
        if rest.count < count { throw ChimeError(.usage, "missing value after 'quiet \(verb)': expected \(what)") }
        throw ChimeError(.usage, "too many words after 'quiet \(verb)': '\(rest.joined(separator: " "))': expected \(what)")
    }

}

/// What `chime quiet` prints: what is in effect now, the settings, what holds alerts and until
/// when, and what is held (each with why).
struct QuietReport: Report {
    var quiet: Bool
    var reasons: [String]
    @Nullable var until: String?
    @Nullable var hours: String?
    /// Where the window comes from: "stored" ('chime quiet hours'), "config" (the config file's
    /// quiet.hours or $CHIME_QUIET_HOURS, while none is stored), or "none".
    var hoursSource: String
    var doses: String
    var focusHold: Bool
    var focusSessionHolds: Bool
    var held: Int
    @Nullable var desktopDoNotDisturb: Bool?
    var desktop: String
    /// What holds alerts now: `source` (quiet, quiet_hours, family, desktop), `reason`, `until`
    /// (null: until it is turned off or the family lets go), `held_by_chime`.
    var holds: [HoldJSON]
    /// The alerts held, each with what holds it.
    var heldAlerts: [HeldJSON]

    struct HoldJSON: Encodable {
        var source: String
        var reason: String
        @Nullable var until: String?
        var heldByChime: Bool
        enum CodingKeys: String, CodingKey {
            case source, reason, until
            case heldByChime = "held_by_chime"
        }
        init(_ hold: AlertHold) {
            source = hold.source.rawValue
            reason = hold.reason
            until = hold.until.map(TimeText.iso)
            heldByChime = hold.heldByChime
        }
    }

    struct HeldJSON: Encodable {
        var id: String
        var kind: String
        var title: String
        var due: String
        var reason: String
        @Nullable var until: String?
        init(_ entry: HoldStatus.Entry) {
            id = entry.alert.occurrence.reminderID
            kind = entry.alert.occurrence.kind
            title = entry.alert.occurrence.title
            due = TimeText.iso(entry.alert.due)
            reason = entry.hold?.reason ?? "quiet"
            until = entry.hold?.until.map(TimeText.iso)
        }
    }

    enum CodingKeys: String, CodingKey {
        case quiet, reasons, until, hours, doses, held, desktop, holds
        case focusHold = "focus_hold"
        case hoursSource = "hours_source"
        case focusSessionHolds = "focus_session_holds"
        case desktopDoNotDisturb = "desktop_do_not_disturb"
        case heldAlerts = "held_alerts"
    }

    private var zone: TimeZone = .current
    private var end: Date?
    private var holdList: [AlertHold] = []
    private var heldList: [HoldStatus.Entry] = []

    init(store: ReminderStore, now: Date, zone: TimeZone) throws(ChimeError) {
        let state: QuietState
        let status: HoldStatus
        let dnd = DesktopDoNotDisturb.read()
        // The focus family asked as the runner asks it at each pass (a read).
        let families: [any ReminderFamily] =
            store.isFile ? ChimeApp.holdingFamilies(store: store, focusBreaks: Settings.ifValid?.focusBreaks ?? FocusBreaks()) : []
        let stored: QuietSettings.Window?
        do {
            state = try store.quietState()
            status = try store.holdStatus(families: families, desktopDoNotDisturb: dnd.active, now: now, zone: zone)
            stored = try store.storedQuietHours()
        } catch let error as ChimeError {
            throw error
        } catch {
            throw ChimeError(.store, String(describing: error))
        }
        self.init(state: state, status: status, stored: stored, desktop: dnd, now: now, zone: zone)
    }

    /// The report from a store's quiet state, what holds and waits, and the window stored.
    init(state: QuietState, status: HoldStatus, stored: QuietSettings.Window?, desktop dnd: DesktopDoNotDisturb, now: Date, zone: TimeZone)
    {
        let period = state.period(at: now, zone: zone)
        quiet = period != nil
        reasons = period?.reasons.map(\.rawValue) ?? []
        until = period.map { TimeText.iso($0.end) }
        end = period?.end
        hours = state.settings.hours?.description
        hoursSource = stored != nil ? "stored" : (state.settings.hours != nil ? "config" : "none")
        doses = state.settings.essential.rawValue
        focusHold = state.settings.familyHold
        focusSessionHolds = status.holds.contains { $0.source == .family }
        self.held = status.held.count
        desktopDoNotDisturb = dnd.active
        desktop = dnd.summary
        holds = status.holds.map(HoldJSON.init)
        heldAlerts = status.held.map(HeldJSON.init)
        holdList = status.holds
        heldList = status.held
        self.zone = zone
    }

    /// "until 14:30" (today) or "until Tue 2026-05-12 14:30 +02:00"; "until it ends" with none.
    private func untilText(_ date: Date?, otherwise: String) -> String {
        guard let date else { return otherwise }
        return "until " + TimeText.local(date, in: zone)
    }

    var lines: [String] {
        var lines: [String] = []
        if let end {
            let why = reasons.map { $0 == "hours" ? "quiet hours" : "asked" }.joined(separator: ", ")
            lines.append("Quiet:        until \(TimeText.local(end, in: zone)) (\(why))")
        } else {
            lines.append("Quiet:        off")
        }
        lines.append("Quiet hours:  " + (hours ?? "none") + (hoursSource == "config" ? " (the config file's; 'chime config show')" : ""))
        lines.append("Doses:        " + (doses == "wait" ? "wait for the end of quiet" : "come through quiet"))
        lines.append(
            "Focus hold:   " + (focusHold ? (focusSessionHolds ? "on (a focus session is running: plain reminders held)" : "on") : "off")
        )
        if holdList.isEmpty {
            lines.append("Holding:      nothing")
        } else {
            for (index, hold) in holdList.enumerated() {
                let label = index == 0 ? "Holding:      " : "              "
                let text: String
                switch hold.source {
                case .quiet, .quietHours:
                    text = "\(hold.reason), \(untilText(hold.until, otherwise: "until it ends")): ordinary alerts, then one summary"
                case .family:
                    text = "\(hold.reason), \(untilText(hold.until, otherwise: "until it ends")): plain reminders, then one summary"
                case .desktop:
                    text = "desktop do-not-disturb, until it is turned off: the desktop keeps the banners (Chime posts as usual)"
                }
                lines.append(label + text)
            }
        }
        lines.append("Held:         \(held) alert\(held == 1 ? "" : "s")")
        for entry in heldList {
            let occurrence = entry.alert.occurrence
            let why = entry.hold.map { "by \($0.reason), \(untilText($0.until, otherwise: "until it ends"))" } ?? "by quiet"
            lines.append(
                "  \(occurrence.reminderID): \(UserText.oneLine(occurrence.title)) (due \(TimeText.local(entry.alert.due, in: zone)); held \(why))"
            )
        }
        lines.append("Desktop DND:  " + desktop)
        return lines
    }
}
