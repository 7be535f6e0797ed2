import ChimeCore
import ChimeStore
import Foundation
import GRDB
import Synchronization

/// What a focus session's live alert shows, as far as updating it goes: it is posted again only
/// when this changes (a stage change, a minute of the time left, a pause, a resume, the Give up
/// question asked or put away), never as the seconds go by.
struct LiveShown: Sendable, Hashable {
    var sessionID: Int64
    var lengthSeconds: Int
    /// The session's label (for the completion alert's command, `--label`).
    var label: String?
    var state: SessionState
    var stage: Int
    /// The whole minutes left, rounded up (see ``FocusLiveAlert/minutesLeft(remainingSeconds:)``).
    var minutes: Int
    /// Whether the alert asks "Give up?" (see ``FocusLiveAlert/giveUpWindow``).
    var askingGiveUp: Bool
    /// The minutes away when the alert asks "Paused while you were away …: resume?" (nil: it does not).
    var awayMinutes: Int?

    init(_ session: FocusSession, at time: MachineTime, askingGiveUp: Bool = false) {
        sessionID = session.id
        lengthSeconds = session.lengthSeconds
        label = session.label
        state = session.state
        stage = session.stage(at: time)
        minutes = FocusLiveAlert.minutes(remainingSeconds: session.remainingSeconds(at: time))
        self.askingGiveUp = askingGiveUp
    }
}

/// A Give up pressed once on the live alert: a second press before `until` gives up.
struct GiveUpAsked: Sendable, Hashable {
    var sessionID: Int64
    var until: Date
}

/// The live alert of an open focus session: the tree at its stage (its icon), the time left in
/// whole minutes with a progress value, and Pause / Resume / Give up; at the end the completion
/// alert "Tree planted!" replaces it in place (it has the same id, `focus-ID`), with "Plant
/// another". Give up asks first: the alert becomes "Give up? …" with Keep going / Give up.
public enum FocusLiveAlert {
    public static let pause = "pause"
    public static let resume = "resume"
    public static let giveUp = "give-up"
    public static let keepGoing = "keep-going"
    public static let plantAnother = "plant-another"
    /// The category of the live alert (the completion alert's is `x-chime.focus`).
    public static let category = "x-chime.focus.live"
    /// How soon to try again when the notifier could not show the alert.
    static let retry: TimeInterval = 10
    /// How long the alert asks "Give up?" after a first Give up: a second Give up within this
    /// gives the session up; after it (or Keep going) the alert is as it was.
    public static let giveUpWindow: TimeInterval = 10
    /// The title of the alert that asks before giving up.
    public static let giveUpQuestion = "Give up? Press again to let the tree wither"

    /// The whole minutes left with `remainingSeconds` (the countdown's, rounded up) to go,
    /// rounded up: 7 from 7:00 down to 6:01, 1 in the last minute (1:00 to 0:01), 0 at the end.
    public static func minutes(remainingSeconds: Int) -> Int { (max(0, remainingSeconds) + 59) / 60 }

    /// `7 min left` from 7:00 down to 6:01 on the countdown (rounded up: never less time than
    /// there is), `less than a minute left` from 1:00 down.
    public static func minutesLeft(remainingSeconds: Int) -> String {
        let minutes = minutes(remainingSeconds: remainingSeconds)
        return minutes <= 1 ? "less than a minute left" : "\(minutes) min left"
    }

    /// The spec's `value` hint, 0 to 100: the part of the focus time done, rounded down (100
    /// only at the end).
    public static func progress(_ session: FocusSession, at time: MachineTime) -> Int {
        guard session.lengthMicros > 0 else { return 100 }
        return Int(session.focusMicros(at: time) * 100 / session.lengthMicros)
    }

    /// The live alert of `session` at `time`: `Focusing: 20 min left` / `Tree stage 2 of 5,
    /// ends at 14:32`; paused, `Paused: 18:32 left` (the time left stands still). Its text is
    /// what it is when posted: it is posted again when the minutes left change (see
    /// ``nextMinuteChange(_:at:)``), not every second; the end time tells the rest. A labelled
    /// session's body ends with its label: `… ends at 14:32. Label: thesis.`
    public static func note(
        _ session: FocusSession,
        at time: MachineTime,
        postedAt: Date,
        icon: String?,
        zone: TimeZone = .current
    ) -> Note {
        let stage = session.stage(at: time)
        let label = session.label.map { " Label: \($0)." } ?? ""
        var note: Note
        if session.state == .paused {
            let left = FocusTimer.countdown(session.remainingSeconds(at: time))
            note = Note(
                id: session.reminderID,
                title: "Paused: \(left) left",
                body: "Tree stage \(stage) of 5. Paused as long as you like: resume to go on.\(label)",
                actions: [Action(key: resume, label: "Resume"), Action(key: giveUp, label: "Give up")],
                postedAt: postedAt
            )
            note.answerInstead = "Resume: chime focus resume. Give up: chime focus give-up --yes"
        } else {
            let end = FocusTimer.expectedEnd(session, at: time)
            note = Note(
                id: session.reminderID,
                title: "Focusing: \(minutesLeft(remainingSeconds: session.remainingSeconds(at: time)))",
                body: "Tree stage \(stage) of 5, ends at \(TimeText.clock(end, in: zone)).\(label)",
                actions: [Action(key: pause, label: "Pause"), Action(key: giveUp, label: "Give up")],
                postedAt: postedAt
            )
            note.answerInstead = "Pause: chime focus pause. Give up: chime focus give-up --yes"
        }
        dress(&note, session, at: time, icon: icon)
        return note
    }

    /// The live alert of `session` after a first Give up: the question, the time left, Keep
    /// going / Give up (a second Give up within ``giveUpWindow`` gives the session up).
    public static func giveUpNote(
        _ session: FocusSession,
        at time: MachineTime,
        postedAt: Date,
        icon: String?
    ) -> Note {
        let remaining = session.remainingSeconds(at: time)
        let left = session.state == .paused ? "Paused: \(FocusTimer.countdown(remaining)) left" : minutesLeft(remainingSeconds: remaining)
        var note = Note(
            id: session.reminderID,
            title: giveUpQuestion,
            body: "\(left.prefix(1).uppercased() + left.dropFirst()). Keep going, or press Give up again within \(Int(giveUpWindow)) s.",
            actions: [Action(key: keepGoing, label: "Keep going"), Action(key: giveUp, label: "Give up")],
            postedAt: postedAt
        )
        note.answerInstead = "Give up: chime focus give-up --yes"
        dress(&note, session, at: time, icon: icon)
        return note
    }

    /// What every live alert of `session` carries: its look, the progress value, and how the
    /// server keeps it.
    private static func dress(_ note: inout Note, _ session: FocusSession, at time: MachineTime, icon: String?) {
        note.icon = icon
        note.category = category
        note.transient = true
        note.progress = progress(session, at: time)
        // A runner killed mid-session cannot close its alert, and the next one does not know its
        // server id: servers that stack by tag (dunst; notify-osd's synchronous hint) replace it
        // with the new one rather than show two.
        note.hints["x-dunst-stack-tag"] = "chime-\(session.reminderID)"
        note.hints["x-canonical-private-synchronous"] = "chime-\(session.reminderID)"
        // Up until the session ends or a person closes it (it is replaced, never stacked).
        note.sticky = true
    }

    private typealias Action = Note.Action

    /// The wall-clock instant the active `session`'s stage next changes, read at `time`; at
    /// stage 5, its end (so the live alert is closed at the end even when the completion alert
    /// was cancelled); nil when not active. Stage s + 1 begins when the elapsed whole seconds
    /// reach ⌈s × length ÷ 5⌉ (``TreeStage/stage(remainingSeconds:lengthSeconds:)``), that is
    /// when the focus time left reaches length − that, exactly.
    public static func nextStageChange(_ session: FocusSession, at time: MachineTime) -> Date? {
        guard session.state == .active else { return nil }
        let stage = session.stage(at: time)
        guard stage < TreeStage.grown else { return FocusTimer.expectedEnd(session, at: time) }
        let length = session.lengthSeconds
        let elapsedAtChange = (stage * length + 4) / 5
        let remainingAtChange = Int64(length - elapsedAtChange) * 1_000_000
        return Date(micros: time.wall.micros + max(0, session.remainingMicros(at: time) - remainingAtChange))
    }

    /// The wall-clock instant the whole minutes left of the active `session` next change, read
    /// at `time` (when the time left reaches the next whole minute; in the last minute, the
    /// end); nil when not active.
    public static func nextMinuteChange(_ session: FocusSession, at time: MachineTime) -> Date? {
        guard session.state == .active else { return nil }
        let remaining = session.remainingMicros(at: time)
        guard remaining > 0 else { return nil }
        let minute: Int64 = 60_000_000
        let target = (remaining + minute - 1) / minute * minute - minute
        return Date(micros: time.wall.micros + remaining - target)
    }
}

extension FocusFamily {
    /// Keeps the live alert in step with the open session.
    ///
    /// Exactly once, across restarts: what the alert shows (``LiveShown``) is kept in this
    /// process's memory only, and the alert is posted when that differs from what the session
    /// shows now. A runner restarted mid-session has shown nothing yet, so it posts the alert
    /// once, at the stage the session is at; the same process posts again only when the whole
    /// minutes left, the stage or the state change, or the Give up question is asked or put
    /// away. Nothing is written to the store (no migration, no ledger rows): a live alert is a
    /// view of the session, which the store already holds, not an occurrence that must not be
    /// lost. The next wake is the next whole minute left (which includes the stage changes of
    /// sessions of whole minutes), the next stage change, or the end of the Give up question's
    /// window: a 25-minute session wakes the runner 25 times for its alert, at 24:00 … 1:00
    /// left and at the end (the runner never ticks); a paused one never.
    public nonisolated(nonsending) func updateLiveNotes(through notifier: any Notifier, at instant: Date) async -> Date? {
        guard liveAlert else {
            await postAwayReturn(through: notifier, at: instant)
            return nil
        }
        let shown = live.withLock { $0 }
        // No session open at the last settle and no alert up: no look at the store (an idle runner).
        if knownOpen == false && shown == nil { return nil }
        // The Give up question's window is over: the alert is as it was.
        let asked = giveUpAsked.withLock { asked in
            if let until = asked?.until, instant >= until { asked = nil }
            return asked
        }
        let step: LiveStep
        do {
            step = try liveStep(shown: shown, asked: asked, at: instant)
        } catch {
            return instant.addingTimeInterval(FocusLiveAlert.retry)
        }
        if let ended = step.ended {
            // Completed with its completion alert shown (or to be shown): that alert replaced the
            // live one in place, under the same id. Otherwise (given up, abandoned, its alert
            // cancelled) the live alert is closed.
            if !ended.handedOver { try? await notifier.withdraw(PostedNote(id: FocusSession.reminderID(ended.sessionID))) }
            live.withLock { $0 = nil }
        }
        guard let (note, key) = step.show else { return step.next }
        do {
            _ = try await notifier.post(note)
            live.withLock { $0 = key }
            return step.next
        } catch {
            return min(step.next ?? .distantFuture, instant.addingTimeInterval(FocusLiveAlert.retry))
        }
    }

    /// What the live alert must do now, read from the store (settled first), with the Give up
    /// question `asked` (until the end of its window).
    private func liveStep(shown: LiveShown?, asked: GiveUpAsked?, at instant: Date) throws(ChimeError) -> LiveStep {
        let settled = try timer.current()
        let time = timer.clock.now()
        var step = LiveStep()
        if let shown, shown.sessionID != settled.openSession?.id {
            step.ended = (shown.sessionID, try completionShown(sessionID: shown.sessionID))
        }
        guard let session = settled.openSession else {
            giveUpAsked.withLock { $0 = nil }
            awayReturn.withLock { $0 = nil }
            return step
        }
        let asking = asked?.sessionID == session.id
        var key = LiveShown(session, at: time, askingGiveUp: asking)
        // Back from being away: the alert asks to resume until the session is resumed or given up
        // (read from the session: a restarted runner asks the same).
        key.awayMinutes = asking ? nil : session.awayMinutes
        if key != (step.ended == nil ? shown : nil) {
            let icon = stageIcon(key.stage)
            let note =
                asking
                ? FocusLiveAlert.giveUpNote(session, at: time, postedAt: instant, icon: icon)
                : key.awayMinutes.map { FocusLiveAlert.awayNote(session, minutes: $0, at: time, postedAt: instant, icon: icon) }
                    ?? FocusLiveAlert.note(session, at: time, postedAt: instant, icon: icon, zone: zone())
            step.show = (note, key)
        }
        step.next = [
            FocusLiveAlert.nextStageChange(session, at: time), FocusLiveAlert.nextMinuteChange(session, at: time),
            asking ? asked?.until : nil,
        ].compactMap { $0 }.min()
        return step
    }

    /// Without a live alert (a console, a JSON stream, a phone): the person back from being
    /// away gets "Paused while you were away 12 min: resume?" once, as an alert of its own.
    private nonisolated(nonsending) func postAwayReturn(through notifier: any Notifier, at instant: Date) async {
        let taken = awayReturn.withLock { back in
            defer { back = nil }
            return back
        }
        guard let back = taken,
            let session = try? timer.openWithoutSettling(), session.id == back.sessionID, session.state == .paused,
            session.pauseReason == .idle
        else { return }
        let note = FocusLiveAlert.awayNote(session, minutes: back.minutes, at: timer.clock.now(), postedAt: instant, icon: icon)
        _ = try? await notifier.post(note)
    }

    private struct LiveStep {
        var ended: (sessionID: Int64, handedOver: Bool)?
        var show: (Note, LiveShown)?
        var next: Date?
    }

    /// Whether session `id` completed and its completion alert was shown or is still to be
    /// (it replaces the live alert in place, or has already); not when it was cancelled.
    private func completionShown(sessionID id: Int64) throws(ChimeError) -> Bool {
        try timer.store.read { db in
            guard try FocusTimer.fetch(id: id, in: db)?.state == .completed else { return false }
            let alert = FocusSession.reminderID(id)
            return try ReminderStore.wasShown(id: alert, in: db) || ReminderStore.pendingDue(id: alert, in: db) != nil
        }
    }

    /// The runner stops: the live alert is closed (its buttons would reach no one); a runner
    /// started again shows it once more.
    public nonisolated(nonsending) func closeLiveNotes(through notifier: any Notifier) async {
        guard let shown = live.withLock({ $0 }) else { return }
        try? await notifier.withdraw(PostedNote(id: FocusSession.reminderID(shown.sessionID)))
        live.withLock { $0 = nil }
    }

    public func ownsLiveNote(_ noteID: String) -> Bool {
        guard let id = Self.sessionID(noteID) else { return false }
        return live.withLock { $0?.sessionID == id }
    }

    /// The live alert's Pause / Resume / Give up, and the completion alert's Plant another:
    /// the same use cases as `chime focus pause` …, acting only on the session the alert is
    /// about (an old alert's button never touches a newer session). A move the session cannot
    /// make now (already paused, already over) changes nothing.
    ///
    /// Give up asks first, as `chime focus give-up` does: the first press (at `instant`) turns
    /// the alert into the question (the runner, poked, posts it); a second within
    /// ``FocusLiveAlert/giveUpWindow`` gives the session up; Keep going, or the window's end,
    /// puts the alert back as it was.
    public func respond(to response: NoteResponse, at instant: Date) throws -> Bool {
        guard case .action(let key) = response.kind else { return false }
        if let breakID = FocusBreak.breakID(response.noteID) { return try respondToBreakOver(breakID, key: key) }
        guard let id = Self.sessionID(response.noteID) else { return false }
        do {
            if key == FocusTimer.skipBreakAction {
                // Only the break that follows this session (an old alert never ends a newer break).
                guard try timer.runningBreak()?.sessionID == id else { return false }
                _ = try timer.skipBreak()
                return true
            }
            if key == FocusLiveAlert.plantAnother {
                guard let done = try timer.store.read({ db in try FocusTimer.fetch(id: id, in: db) }), !done.state.isOpen else {
                    return false
                }
                _ = try timer.start(minutes: done.lengthSeconds / 60, label: done.label)
                return true
            }
            guard try timer.current().openSession?.id == id else { return false }
            // Whether Give up was pressed on this session's alert within the window; any answer
            // puts the question away.
            let (pending, asked) = giveUpAsked.withLock { asked in
                defer { asked = nil }
                guard let until = asked?.until, asked?.sessionID == id else { return (false, false) }
                return (true, instant < until)
            }
            switch key {
            case FocusLiveAlert.pause: _ = try timer.pause()
            case FocusLiveAlert.resume: _ = try timer.resume()
            case FocusLiveAlert.giveUp where asked: _ = try timer.giveUp()
            case FocusLiveAlert.giveUp:
                giveUpAsked.withLock { $0 = GiveUpAsked(sessionID: id, until: instant.addingTimeInterval(FocusLiveAlert.giveUpWindow)) }
            case FocusLiveAlert.keepGoing: return pending
            default: return false
            }
            return true
        } catch {
            guard error.code == .conflict || error.code == .notFound || error.code == .usage else { throw error }
            return false
        }
    }

    /// "Break over"'s Start: the next session, as long as the one before the break and with its
    /// label, when none is open; Skip changes nothing (the next session waits for 'chime focus start').
    private func respondToBreakOver(_ breakID: Int64, key: String) throws -> Bool {
        guard key == FocusTimer.startAction else { return false }
        do {
            let before = try timer.store.read { db -> FocusSession? in
                guard let ended = try FocusTimer.fetchBreak(id: breakID, in: db) else { return nil }
                return try FocusTimer.fetch(id: ended.sessionID, in: db)
            }
            guard let before else { return false }
            _ = try timer.start(minutes: before.lengthSeconds / 60, label: before.label)
            return true
        } catch {
            guard error.code == .conflict || error.code == .notFound || error.code == .usage else { throw error }
            return false
        }
    }

    /// ` --minutes N` for the completion alert of a session whose length is known here and is
    /// not the default, and ` --label 'thesis'` for one with a label (as Plant another keeps it);
    /// otherwise nothing.
    func plantAnotherMinutes(_ reminderID: String) -> String {
        guard let id = Self.sessionID(reminderID), let shown = live.withLock({ $0 }), shown.sessionID == id else { return "" }
        let minutes = shown.lengthSeconds / 60
        let label = shown.label.map { " --label '" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" } ?? ""
        return (minutes == FocusTimer.defaultMinutes ? "" : " --minutes \(minutes)") + label
    }

    /// 12 for `focus-12`.
    static func sessionID(_ noteID: String) -> Int64? {
        guard noteID.hasPrefix("focus-") else { return nil }
        return Int64(noteID.dropFirst("focus-".count)).flatMap { $0 > 0 ? $0 : nil }
    }
}

extension FocusFamily {
    /// As ``respond(to:at:)``; the completion alert, once Plant another has started the next
    /// session, says so in its place (it is kept after the press, and would otherwise stay
    /// with its button). The live alert's answers change the live alert itself.
    public func answer(_ response: NoteResponse, at instant: Date) throws -> FamilyAnswer {
        let changed = try respond(to: response, at: instant)
        guard changed, case .action(let key) = response.kind,
            key == FocusLiveAlert.plantAnother || key == FocusTimer.startAction,
            let session = try timer.current().openSession
        else { return FamilyAnswer(changed: changed) }
        let minutes = session.lengthSeconds / 60
        return FamilyAnswer(
            changed: true,
            confirmation: .confirmation(
                id: response.noteID,
                title: "✓ Another tree planted",
                body: "A \(minutes)-minute session has begun.",
                at: instant
            )
        )
    }
}
