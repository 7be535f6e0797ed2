import ChimeCore
import ChimeStore
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Doses in the runner: before each pass the doses are settled (the next ones created and
/// their alerts scheduled, windows that passed marked missed, repeats planned); dose alerts
/// carry the actions "Mark as Taken", "Snooze 10 min" and "Skip", and the answers come back here.
public final class DoseFamily: ReminderFamily {
    public let kind = DoseBook.kind
    public let book: DoseBook
    /// The keys of the alert's actions.
    public static let take = "take"
    public static let snooze = "snooze"
    public static let skip = "skip"

    /// When a settle next has work (nil: not known yet). A plain deadline before it needs no
    /// look at the store: every change to doses pokes the runner.
    private let nextCheck = Mutex<Date?>(nil)
    private let onChange: @Sendable (DoseBook.Settled) -> Void
    private let onAnswer: @Sendable (AnsweredDoseEvent) -> Void
    /// The dose alerts' own icon (a pill, `Resources/icons/dose.svg`), when one is installed.
    public let icon: String?
    /// Sends the messages to someone else about doses not taken (nil: none are sent; they wait).
    public let teller: (any DoseTeller)?
    /// Who takes the medications, as those messages name them ("Alex has not taken …").
    public let person: String
    /// When the next message to someone else falls due (the last settle's), for the runner's wake.
    private let nextTell = Mutex<Date?>(nil)
    /// The messages being sent (at most one task at a time).
    private let sending = Mutex<Task<Void, Never>?>(nil)
    private let onTell: @Sendable (DoseTellEvent) -> Void

    /// - Parameters:
    ///   - onChange: told when a settle marked doses missed or sent a summary (the runner logs it).
    ///   - onAnswer: told when an alert's action answered a dose.
    public init(
        book: DoseBook,
        onChange: @escaping @Sendable (DoseBook.Settled) -> Void = { _ in },
        onAnswer: @escaping @Sendable (AnsweredDoseEvent) -> Void = { _ in },
        icon: String? = DoseFamily.installedIcon(),
        teller: (any DoseTeller)? = nil,
        person: String = DoseFamily.defaultPerson,
        onTell: @escaping @Sendable (DoseTellEvent) -> Void = { _ in }
    ) {
        self.book = book
        self.icon = icon
        self.teller = teller
        self.person = person
        self.onTell = onTell
        self.onChange = onChange
        self.onAnswer = onAnswer
    }

    public func prepare(reason: WakeReason) throws {
        if reason == .deadline, let next = nextCheck.withLock({ $0 }), book.clock.now() < next { return }
        let settled = try book.settle()
        // Nothing to create or end: no settle at plain deadlines until a poke says doses changed.
        nextCheck.withLock { $0 = settled.nextCheck ?? .distantFuture }
        nextTell.withLock { $0 = settled.nextTell }
        if !settled.missed.isEmpty || settled.summaryID != nil { onChange(settled) }
    }

    /// A dose's alert was shown: its repeat is planned and the next dose made now, not at the
    /// next pass.
    public func didPost(_ occurrences: [PendingOccurrence], at instant: Date) throws {
        nextCheck.withLock { $0 = nil }
        try prepare(reason: .poked)
    }

    /// Sends the messages to someone else that fell due (on a task of their own, so a slow
    /// receiver holds up no alert), and asks to be called again when the next falls due: a
    /// dose's, or a failed one's retry (while one is being sent, a minute on, to look again).
    public nonisolated(nonsending) func updateLiveNotes(through notifier: any Notifier, at instant: Date) async -> Date? {
        guard teller != nil else { return nil }
        let waiting: (due: [DoseTell], next: Date?)
        do {
            waiting = try book.dueTells()
        } catch {
            onTell(DoseTellEvent(tell: nil, outcome: .failed(error.message)))
            return instant.addingTimeInterval(60)
        }
        let busy = sending.withLock { task in
            if task == nil, !waiting.due.isEmpty {
                task = Task {
                    await self.sendDueTells()
                    self.sending.withLock { $0 = nil }
                }
            }
            return task != nil
        }
        let again = busy ? instant.addingTimeInterval(60) : nil
        return [waiting.next, nextTell.withLock { $0 }, again].compactMap { $0 }.min()
    }

    /// The runner stops: a message being sent is abandoned (it stays recorded, sent at the next start).
    public nonisolated(nonsending) func closeLiveNotes(through notifier: any Notifier) async {
        let task = sending.withLock { $0 }
        task?.cancel()
        await task?.value
    }

    /// Sends every message to someone else that is due now, each once, through ``teller``, and
    /// returns what became of each (the tests await it; the runner runs it on a task).
    @discardableResult
    public func sendDueTells() async -> [DoseTellEvent] {
        guard let teller else { return [] }
        var events: [DoseTellEvent] = []
        // A sent message may make its follow-up due at once: a second round sends it.
        for _ in 0..<3 {
            guard let due = try? book.dueTells().due, !due.isEmpty else { break }
            for tell in due {
                if Task.isCancelled { return events }
                let event: DoseTellEvent
                do {
                    guard try book.claimTell(tell) else { continue }
                    let text = tell.text(person: person, now: book.clock.now())
                    try await teller.send(tell, title: text.title, message: text.message)
                    try book.tellSent(tell)
                    event = DoseTellEvent(tell: tell, outcome: .sent)
                } catch is CancellationError {
                    return events
                } catch {
                    let reason = (error as? ChimeError)?.message ?? String(describing: error)
                    try? book.tellFailed(tell, reason: reason)
                    event = DoseTellEvent(tell: tell, outcome: .failed(reason))
                }
                onTell(event)
                events.append(event)
            }
        }
        return events
    }

    /// A medication reminder is never dropped: quiet lets dose alerts through unless the person
    /// chose `chime quiet doses wait`, and then they (and their repeats) wait for its end.
    public var isEssential: Bool { true }

    public func decorate(_ note: inout Note, for occurrence: PendingOccurrence) {
        note.category = "x-chime.dose"
        note.icon = icon
        // A missed medication reminder is a real harm: the alert stays until answered.
        note.sticky = true
        guard DoseOccurrenceID.matches(occurrence.reminderID) else { return }
        note.actions = [
            Note.Action(key: Self.take, label: "Mark as Taken"),
            Note.Action(key: Self.snooze, label: "Snooze \(DoseRules.snoozeMinutes) min"),
            Note.Action(key: Self.skip, label: "Skip"),
        ]
        let id = occurrence.reminderID
        note.answerInstead = "Answer: chime dose take \(id) (or snooze, skip)"
    }

    public func respond(to response: NoteResponse, at instant: Date) throws -> Bool {
        try answer(response, at: instant).changed
    }

    /// As ``respond(to:at:)``, and the alert then says what was recorded ("✓ Zinc 25 mg taken at
    /// 16:19"), or, answered already, what the first answer was.
    public func answer(_ response: NoteResponse, at instant: Date) throws -> FamilyAnswer {
        guard case .action(let key) = response.kind else { return FamilyAnswer(changed: false) }
        let outcome = perform(key, on: DoseReference.occurrence(response.noteID))
        let text: Withdrawal.Confirmation
        switch outcome {
        case .success(let event?):
            onAnswer(event)
            guard let entry = event.entry else { return FamilyAnswer(changed: true) }
            text = Self.confirmation(key, entry: entry, refill: event.refill, at: instant)
        case .success(nil):
            return FamilyAnswer(changed: false)
        case .failure(let error):
            // Answered already (from the CLI, or a second click): the first answer stands.
            guard error.code == .conflict || error.code == .notFound else { throw error }
            onAnswer(AnsweredDoseEvent(action: key, entry: nil, refill: nil, refused: error.message))
            let text =
                (try? book.entry(occurrence: response.noteID)).flatMap { $0 }.map(Self.alreadyAnswered)
                ?? Withdrawal.Confirmation(title: "Already answered", body: "Nothing changed: the first answer stands.")
            return FamilyAnswer(
                changed: false,
                confirmation: .confirmation(id: response.noteID, title: text.title, body: text.body, at: instant)
            )
        }
        nextCheck.withLock { $0 = nil }
        return FamilyAnswer(
            changed: true,
            confirmation: .confirmation(id: response.noteID, title: text.title, body: text.body, at: instant)
        )
    }

    /// What a dose's alert reads once answered with `action` (`take`, `skip`, `snooze`, `miss`),
    /// from its buttons or the command line: the medication, what was recorded, and when.
    public static func confirmation(_ action: String, entry: DoseEntry, refill: String?, at instant: Date) -> Withdrawal.Confirmation {
        let zone = entry.dose.timeZone
        switch action {
        case take:
            let taken = entry.dose.takenAt ?? instant
            return Withdrawal.Confirmation(title: "✓ \(entry.title) taken at \(TimeText.clock(taken, in: zone))", body: refill ?? "")
        case skip:
            return Withdrawal.Confirmation(
                title: "\(entry.title) skipped",
                body: "Recorded at \(TimeText.clock(instant, in: zone)); 'chime dose reset \(entry.dose.id)' undoes it."
            )
        case snooze:
            let until = entry.dose.snoozeUntil ?? instant
            return Withdrawal.Confirmation(title: "\(entry.title) snoozed until \(TimeText.clock(until, in: zone))")
        default:
            return Withdrawal.Confirmation(title: "\(entry.title) marked \(entry.dose.status.rawValue)")
        }
    }

    /// What a dose's alert reads when a button is pressed after the dose was answered.
    public static func alreadyAnswered(_ entry: DoseEntry) -> Withdrawal.Confirmation {
        let zone = entry.dose.timeZone
        var status = "already \(entry.dose.status.rawValue)"
        if entry.dose.status == .taken, let taken = entry.dose.takenAt { status += " at \(TimeText.clock(taken, in: zone))" }
        if entry.dose.status == .pending, let until = entry.dose.snoozeUntil { status = "snoozed until \(TimeText.clock(until, in: zone))" }
        return Withdrawal.Confirmation(title: "\(entry.title): \(status)", body: "Nothing changed: the first answer stands.")
    }
}

extension DoseFamily {
    /// The dose icon's file where it is installed (see ``DataDirectories``), or nil.
    public static func installedIcon(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        executable: String = DataDirectories.executablePath
    ) -> String? {
        DataDirectories.search("icons", environment: environment, executable: executable)
            .map { $0 + "/dose.svg" }
            .first { FileManager.default.isReadableFile(atPath: $0) }
    }

    /// Does what the action `key` asks; nil for a key that is not a dose action.
    func perform(_ key: String, on reference: DoseReference) -> Result<AnsweredDoseEvent?, ChimeError> {
        do throws(ChimeError) {
            switch key {
            case Self.take:
                let answered = try book.answer(.take, reference)
                return .success(AnsweredDoseEvent(action: key, entry: answered.entry, refill: answered.refill))
            case Self.skip:
                let answered = try book.answer(.skip, reference)
                return .success(AnsweredDoseEvent(action: key, entry: answered.entry, refill: nil))
            case Self.snooze:
                return .success(AnsweredDoseEvent(action: key, entry: try book.snooze(reference), refill: nil))
            default:
                return .success(nil)
            }
        } catch {
            return .failure(error)
        }
    }
}

/// What became of a message to someone else, for the runner's log.
public struct DoseTellEvent: Sendable {
    public enum Outcome: Sendable, Hashable {
        case sent
        /// Not delivered (tried again later, or given up a day after it was recorded).
        case failed(String)
    }
    /// Nil when the store could not be read.
    public var tell: DoseTell?
    public var outcome: Outcome
}

extension DoseFamily {
    /// Who the messages to someone else name when the config names no one: the account's full
    /// name (its GECOS field), else its login name, else "Someone".
    public static var defaultPerson: String {
        if let entry = getpwuid(getuid()) {
            if let gecos = entry.pointee.pw_gecos {
                let full = String(cString: gecos).split(separator: ",", omittingEmptySubsequences: false).first.map(String.init) ?? ""
                let trimmed = full.trimmingCharacters(in: .whitespaces)
                if !trimmed.isEmpty { return trimmed }
            }
            if let name = entry.pointee.pw_name {
                let login = String(cString: name)
                if !login.isEmpty { return login }
            }
        }
        return "Someone"
    }
}

/// What an alert's action did, for the runner's log.
public struct AnsweredDoseEvent: Sendable {
    public var action: String
    public var entry: DoseEntry?
    public var refill: String?
    /// Why the answer changed nothing (the dose was answered already).
    public var refused: String?
}
