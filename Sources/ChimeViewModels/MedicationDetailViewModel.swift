import ChimeCore
import ChimeDoses
import Foundation
import Synchronization

/// A field of the medication form, as validation names it.
public enum MedicationField: String, Sendable, Hashable, CaseIterable {
    case name, amount, unit, instructions, prescribedBy, startDate, endDate, stock
    /// The schedule's times of day and days (the schedule editor's fields).
    case times, days
    /// After the last dose's interval and the daily maximum (`--after-last`, `--max`).
    case afterLast, maxPerDay
    /// The amounts by date (`--taper`).
    case taper
    /// Who is told when a dose is not taken, and when (`chime med tell CHANNEL --after`).
    case tell, tellAfter
}

/// The schedule as a form (the seed's `ScheduleViewModel` inputs): times as typed, the days
/// as toggles, or as needed.
public struct ScheduleForm: Sendable, Hashable {
    /// `08:00,20:00` (or `8am,8pm`: what `chime med add --at` reads).
    public var times: String
    public var days: WeekdaySet
    /// Doses are logged when taken, with no reminders; times and days are not used.
    public var asNeeded: Bool
    /// Every N days or an on/off cycle (`chime med add --every/--cycle`), kept while the days
    /// are not changed here; choosing days of the week replaces it.
    public var dayRule: DoseDayRule?
    /// Each dose this long after the last one taken (`chime med add --after-last`), kept while
    /// no times are given here; times given replace it.
    public var afterLast: Int? = nil
    /// The after-last interval as typed (`6h`): set, with no times, the doses come this long
    /// after the last one taken; it replaces ``afterLast``.
    public var afterLastText: String? = nil
    /// At most this many doses in 24 hours, as typed (`4/day`, what `--max` reads), for as
    /// needed and after-last schedules; empty: no maximum.
    public var maxPerDay: String = ""
    /// An as-needed schedule's shortest time between doses (`--min-interval`), kept.
    var minInterval: Int? = nil

    /// What the after-last interval accepts: `chime med add --after-last`'s rule.
    public static let afterLastRule = OptionDuration(
        option: "--after-last",
        unit: .second,
        bareNumbers: false,
        range: Int64(ScheduleDraft.afterLastSeconds.lowerBound)...Int64(ScheduleDraft.afterLastSeconds.upperBound)
    )

    public init(times: String = "08:00", days: WeekdaySet = .everyDay, asNeeded: Bool = false, dayRule: DoseDayRule? = nil) {
        self.times = times
        self.days = days
        self.asNeeded = asNeeded
        self.dayRule = dayRule
    }

    /// After-last, with no times typed: doses come after the last one taken.
    public var isAfterLast: Bool {
        (afterLast != nil || afterLastText != nil) && !asNeeded && times.trimmingCharacters(in: .whitespaces).isEmpty
    }

    /// The after-last interval in seconds (the text typed, else the one kept); `.usage` in
    /// `--after-last`'s words.
    func afterLastSeconds() throws(ChimeError) -> Int? {
        guard let text = afterLastText else { return afterLast }
        return Int(try Self.afterLastRule.seconds(text))
    }

    /// The daily maximum typed, or nil when empty; `.usage` in `--max`'s words.
    func maximum() throws(ChimeError) -> Int? {
        maxPerDay.trimmed.isEmpty ? nil : try DoseMaximum.parse(maxPerDay)
    }

    /// The enabled schedule of `detail` as a form.
    public init(_ schedule: DoseSchedule?) {
        self.init(
            times: schedule?.times.map(\.description).joined(separator: ",") ?? "",
            days: schedule?.days ?? .everyDay,
            asNeeded: schedule?.frequency == .asNeeded,
            dayRule: schedule?.dayRule
        )
        afterLast = schedule?.afterLast
        afterLastText = schedule?.afterLast.map { Trigger.formatInterval(Int64($0)) }
        maxPerDay = schedule?.maxPerDay.map { "\($0)/day" } ?? ""
        minInterval = schedule?.minInterval
    }

    /// Day `isoWeekday` (1 Monday … 7 Sunday) on or off.
    public mutating func toggleDay(isoWeekday: Int) {
        guard let day = WeekdaySet(isoWeekday: isoWeekday) else { return }
        dayRule = nil
        if days.contains(day) { days.remove(day) } else { days.insert(day) }
    }

    public mutating func selectAllDays() { (days, dayRule) = (.everyDay, nil) }
    public mutating func selectWeekdays() { (days, dayRule) = (.weekdays, nil) }
    public mutating func selectWeekends() { (days, dayRule) = (.weekend, nil) }
    public mutating func clearDays() { (days, dayRule) = ([], nil) }

    public var isEveryday: Bool { days == .everyDay }
    public var isWeekdaysOnly: Bool { days == .weekdays }
    public var isWeekendsOnly: Bool { days == .weekend }

    /// `every day 08:00,20:00`, `as needed`, as `chime med list` words a schedule; nil while
    /// the times do not parse.
    public var summary: String? {
        let maximum = ((try? self.maximum()) ?? nil).map { ", at most \($0) in 24h" } ?? ""
        if asNeeded { return "as needed" + maximum }
        if isAfterLast {
            guard let seconds = (try? afterLastSeconds()) ?? nil else { return nil }
            return "\(Trigger.formatInterval(Int64(seconds))) after each dose taken" + maximum
        }
        guard let times = try? DoseInput.times(self.times), !times.isEmpty, !days.isEmpty else { return nil }
        if let dayRule { return dayRule.summary + " " + times.sorted().map(\.description).joined(separator: ",") }
        return Trigger.weekly(times: times.sorted(), days: days, zone: .floating).summary
    }

    /// The schedule draft, checked by the family's rules; each error named by its field.
    func validated() -> (draft: ScheduleDraft?, errors: [MedicationField: String]) {
        if asNeeded || isAfterLast {
            var errors: [MedicationField: String] = [:]
            var seconds: Int?
            var maximum: Int?
            do { maximum = try self.maximum() } catch { errors[.maxPerDay] = error.message }
            if !asNeeded {
                do { seconds = try afterLastSeconds() } catch { errors[.afterLast] = error.message }
            }
            guard errors.isEmpty else { return (nil, errors) }
            do {
                let draft = ScheduleDraft(
                    times: [],
                    asNeeded: asNeeded,
                    minInterval: asNeeded ? minInterval : nil,
                    afterLast: seconds,
                    maxPerDay: maximum
                )
                return (try draft.validated(), [:])
            } catch {
                return (nil, [asNeeded ? .maxPerDay : .afterLast: error.message])
            }
        }
        var errors: [MedicationField: String] = [:]
        var times: [LocalTime]?
        do {
            let parsed = try DoseInput.times(self.times)
            _ = try ScheduleDraft(times: parsed).validated()
            times = parsed
        } catch {
            errors[.times] = error.message
        }
        do {
            // Checked with a time that is valid, so that the error is the days'.
            _ = try ScheduleDraft(times: [LocalTime(hour: 8, minute: 0)!], days: days).validated()
        } catch {
            errors[.days] = error.message
        }
        guard errors.isEmpty, let times else { return (nil, errors) }
        return (ScheduleDraft(times: times, days: dayRule == nil ? days : .everyDay, dayRule: dayRule), [:])
    }

    /// The change that makes `current` this form; nil when nothing changed.
    func change(from current: ScheduleForm, times: [LocalTime]?) -> ScheduleChange? {
        guard self != current else { return nil }
        if asNeeded || isAfterLast {
            var change = ScheduleChange(asNeeded: asNeeded)
            change.afterLast = asNeeded ? nil : (try? afterLastSeconds()) ?? nil
            change.maxPerDay = (try? maximum()) ?? nil
            return change
        }
        // Days left as they were are not given: an every-N-days or cycle schedule (set with
        // 'chime med add --every/--cycle') keeps its rule when only its times change here.
        let daysChanged = days != current.days || dayRule != current.dayRule || current.asNeeded
        return ScheduleChange(
            times: times,
            days: daysChanged && dayRule == nil ? days : nil,
            dayRule: daysChanged ? dayRule : nil
        )
    }
}

/// A medication as a form (the seed's `MedicationDetailViewModel` inputs), every field as typed.
public struct MedicationForm: Sendable, Hashable {
    public var name: String
    public var amount: String
    public var unit: String
    public var instructions: String
    public var prescribedBy: String
    /// `2026-01-05`.
    public var startDate: String
    /// Empty: no end date (the seed's `hasEndDate` off).
    public var endDate: String
    /// Empty: the stock is not counted.
    public var stock: String
    public var schedule: ScheduleForm
    /// The amounts by date as typed (`10mg until 12-10, 5mg until 12-20, then stop`, what
    /// `--taper` reads); empty: none (the amount every day).
    public var taper: String = ""
    /// A new channel for who is told when a dose is not taken (`ntfy:TOPIC` or a webhook URL,
    /// what `chime med tell` reads); empty: as it is (the one set, or no one).
    public var tellChannel: String = ""
    /// When they are told: `missed`, or a time after the dose such as `30m` (`--after`).
    public var tellWhen: String = "missed"
    /// Tell no one any more (`chime med tell --off`).
    public var tellOff: Bool = false

    public init(
        name: String = "",
        amount: String = "",
        unit: String = "",
        instructions: String = "",
        prescribedBy: String = "",
        startDate: String,
        endDate: String = "",
        stock: String = "",
        schedule: ScheduleForm = ScheduleForm()
    ) {
        self.name = name
        self.amount = amount
        self.unit = unit
        self.instructions = instructions
        self.prescribedBy = prescribedBy
        self.startDate = startDate
        self.endDate = endDate
        self.stock = stock
        self.schedule = schedule
    }

    /// A stored medication as a form.
    public init(_ detail: MedicationDetail) {
        let medication = detail.medication
        self.init(
            name: medication.name,
            amount: Medication.format(amount: medication.amount),
            unit: medication.unit,
            instructions: medication.instructions,
            prescribedBy: medication.prescribedBy,
            startDate: CivilDay.format(medication.startDay),
            endDate: medication.endDay.map(CivilDay.format) ?? "",
            stock: medication.stock.map(String.init) ?? "",
            schedule: ScheduleForm(detail.schedules.last { $0.isEnabled })
        )
        taper = medication.taper?.summary(unit: medication.unit) ?? ""
        tellWhen = detail.tell?.after.map { Trigger.formatInterval(Int64($0)) } ?? "missed"
    }

    /// What the tell's time accepts (`chime med tell --after`).
    public static let tellAfterRule = OptionDuration(option: "--after", unit: .minute, bareNumbers: false, range: DoseTellRule.afterRange)

    /// The tell's time: nil for `missed` (or empty), else seconds; `.usage` in `--after`'s words.
    func tellAfter() throws(ChimeError) -> Int? {
        let text = tellWhen.trimmed
        if text.isEmpty || text.lowercased() == "missed" { return nil }
        do {
            return Int(try Self.tellAfterRule.seconds(text))
        } catch {
            throw ChimeError.invalid("--after", text, expected: "a duration from 1m to 7d such as 30m, or missed")
        }
    }
}

/// The form checked: the drafts when valid, else an error per field (the family's messages,
/// as the CLI prints them: `invalid amount 'abc': expected a plain decimal number …`).
struct CheckedForm {
    var draft: MedicationDraft?
    var schedule: ScheduleDraft?
    var errors: [MedicationField: String]
    /// The taper typed, read (nil: none).
    var taper: DoseTaper?
    /// The channel typed (nil: none typed) and when it is told (nil: when missed).
    var tellChannel: DoseTellChannel?
    var tellAfter: Int?

    /// Each field is checked on its own against a draft whose other fields are valid, so
    /// that every field with a problem is named, not only the first.
    init(_ form: MedicationForm, today: Int) {
        var errors: [MedicationField: String] = [:]
        func check(_ field: MedicationField, _ body: () throws(ChimeError) -> Void) {
            do { try body() } catch { errors[field] = error.message }
        }
        var startDay: Int?
        check(.startDate) { () throws(ChimeError) in startDay = try CivilDay.parse(form.startDate.trimmed, field: "start date") }
        let valid = MedicationDraft(name: "Medication", amount: "1", unit: "mg", startDay: startDay ?? today)
        func checkDraft(_ field: MedicationField, _ change: (inout MedicationDraft) -> Void) {
            check(field) { () throws(ChimeError) in
                var draft = valid
                change(&draft)
                _ = try draft.validated()
            }
        }
        checkDraft(.name) { $0.name = form.name }
        var taper: DoseTaper?
        if !form.taper.trimmed.isEmpty {
            // Read as `--taper` reads it (MM-DD from the start date), then checked against the
            // unit and the start date as `chime med add` checks it.
            check(.taper) { () throws(ChimeError) in
                let read = try DoseTaper.parse(form.taper, from: startDay ?? today)
                var draft = valid
                draft.amount = ""
                // The unit's own problem is named under the unit, not here.
                var withUnit = valid
                withUnit.unit = form.unit
                if (try? withUnit.validated()) != nil { draft.unit = form.unit }
                draft.taper = read
                _ = try draft.validated()
                taper = read
            }
        }
        // With a taper the amount may be left empty: the taper gives each day's.
        if form.taper.trimmed.isEmpty || !form.amount.trimmed.isEmpty {
            check(.amount) { () throws(ChimeError) in _ = try MedicationDraft.amount(form.amount) }
        }
        checkDraft(.unit) { $0.unit = form.unit }
        checkDraft(.instructions) { $0.instructions = form.instructions }
        checkDraft(.prescribedBy) { $0.prescribedBy = form.prescribedBy }
        var endDay: Int?
        if !form.endDate.trimmed.isEmpty {
            check(.endDate) { () throws(ChimeError) in
                let end = try CivilDay.parse(form.endDate.trimmed, field: "end date")
                var draft = valid
                draft.endDay = end
                _ = try draft.validated()
                endDay = end
            }
        }
        var stock: Int?
        if !form.stock.trimmed.isEmpty {
            check(.stock) { () throws(ChimeError) in
                guard let count = Int(form.stock.trimmed) else {
                    throw ChimeError.invalid("stock", form.stock, expected: "a count of doses, 0 or more")
                }
                var draft = valid
                draft.stock = count
                _ = try draft.validated()
                stock = count
            }
        }
        let schedule = form.schedule.validated()
        errors.merge(schedule.errors) { first, _ in first }
        var channel: DoseTellChannel?
        var after: Int?
        if !form.tellOff {
            if !form.tellChannel.trimmed.isEmpty {
                check(.tell) { () throws(ChimeError) in channel = try DoseTellChannel.parse(form.tellChannel.trimmed) }
            }
            check(.tellAfter) { () throws(ChimeError) in after = try form.tellAfter() }
        }
        tellChannel = channel
        tellAfter = after
        self.errors = errors
        self.schedule = schedule.draft
        self.taper = taper
        guard errors.isEmpty, let startDay else { return }
        var draft = MedicationDraft(name: form.name, amount: form.amount, unit: form.unit, startDay: startDay)
        draft.taper = taper
        draft.instructions = form.instructions
        draft.prescribedBy = form.prescribedBy
        draft.endDay = endDay
        draft.stock = stock
        self.draft = draft
    }
}

/// What the medication detail shows and edits (the seed's `MedicationDetailViewModel` outputs).
public struct MedicationDetailState: Sendable, Hashable {
    /// nil: a new medication, not saved yet.
    public var medicationID: Int64?
    public var form: MedicationForm
    /// The problems of the form by field (the seed's `validationErrors`), the family's words.
    public var fieldErrors: [MedicationField: String]
    /// The medication as `chime med show` prints it (empty for a new one).
    public var lines: [String]
    /// `Adherence, last 30 days: 50% (1 taken, 0 missed, 1 skipped)`, as `chime med show`.
    public var adherenceText: String?
    public var isActive: Bool
    /// Who is told when a dose is not taken, as stored (nil: no one).
    public var tell: DoseTellRule? = nil
    /// A save or another action failed (not a field's problem): as the CLI words it.
    public var error: ChimeError?

    /// The seed's `isValid`.
    public var isValid: Bool { fieldErrors.isEmpty }
    public func validationError(for field: MedicationField) -> String? { fieldErrors[field] }
    public func hasError(for field: MedicationField) -> Bool { fieldErrors[field] != nil }

    /// Who is told, as `chime med show` shows it (a webhook by its origin: no token):
    /// "ntfy:carers-alex, when a dose is missed", or "No one is told".
    public var tellText: String { tell.map { "Tells " + $0.summary } ?? "No one is told" }

    /// The taper typed, read back in full (`10 mg until 2026-12-10, then stop`), or nil while
    /// it is empty or has a problem.
    public var taperSummary: String? {
        guard !form.taper.trimmed.isEmpty, fieldErrors[.taper] == nil,
            let taper = try? DoseTaper.parse(form.taper, from: (try? CivilDay.parse(form.startDate.trimmed, field: "start date")) ?? 0)
        else { return nil }
        return taper.summary(unit: form.unit.trimmed)
    }
}

/// A medication's detail and its editor, with the schedule editor (the seed's
/// `MedicationDetailViewModel` and `ScheduleViewModel`) over ``DoseBook``: the form is checked
/// as it changes, field by field, by the family's rules; save adds or edits through the
/// family's use cases.
public final class MedicationDetailViewModel: Sendable {
    public let book: DoseBook
    private let current: Mutex<MedicationDetailState>
    /// The form as last loaded, to save only what changed.
    private let loaded: Mutex<MedicationForm?>
    /// A new medication's grace window and missed-after, in seconds (the config's
    /// `doses.grace` and `doses.missed_after`, as `chime med add`); nil: the family's defaults.
    public let newGrace: Int?
    public let newMissedAfter: Int?

    /// A new medication (starting today).
    /// - Parameter grace: a new medication's grace window (nil: the family's default).
    /// - Parameter missedAfter: when a new medication's pending dose counts as missed (nil: the default).
    public init(book: DoseBook, grace: Int? = nil, missedAfter: Int? = nil) {
        self.book = book
        newGrace = grace
        newMissedAfter = missedAfter
        let today = CivilDay.format(CivilDay.of(book.clock.now(), in: book.systemZone()))
        current = Mutex(
            MedicationDetailState(
                medicationID: nil,
                form: MedicationForm(startDate: today),
                fieldErrors: [:],
                lines: [],
                adherenceText: nil,
                isActive: true,
                error: nil
            )
        )
        loaded = Mutex(nil)
        revalidate()
    }

    /// The medication `id`, to show and edit.
    public convenience init(book: DoseBook, medicationID id: Int64) {
        self.init(book: book)
        current.withLock { $0.medicationID = id }
        refresh(reloadForm: true)
    }

    public var state: MedicationDetailState { current.withLock { $0 } }

    /// A person types: the form changes and is checked again (the seed validates as you type).
    @discardableResult
    public func edit(_ change: (inout MedicationForm) -> Void) -> MedicationDetailState {
        current.withLock { change(&$0.form) }
        return revalidate()
    }

    /// Saves the form: adds the medication with its schedule, or saves what changed of it.
    /// Returns nil (and names the fields in ``MedicationDetailState/fieldErrors``, or the
    /// failure in ``MedicationDetailState/error``) when it was not saved.
    @discardableResult
    public func save() -> MedicationDetail? {
        let (form, id) = current.withLock { ($0.form, $0.medicationID) }
        let checked = CheckedForm(form, today: today)
        current.withLock {
            $0.fieldErrors = checked.errors
            $0.error = nil
        }
        guard let draft = checked.draft, let schedule = checked.schedule else { return nil }
        // A time to tell with no one to tell: refused before anything is written.
        let currentTell = state.tell
        if checked.tellChannel == nil, currentTell == nil, !form.tellOff, checked.tellAfter != nil {
            current.withLock {
                $0.fieldErrors[.tell] = "missing a channel: who is told, such as ntfy:carers-alex (or a webhook URL)"
            }
            return nil
        }
        do {
            var detail: MedicationDetail
            if let id {
                if let changes = changes(from: loaded.withLock({ $0 }), to: form, draft: draft, schedule: schedule, taper: checked.taper) {
                    detail = try book.editMedication(String(id), changes)
                } else {
                    detail = try book.medication(String(id))
                }
            } else {
                var draft = draft
                draft.grace = newGrace ?? draft.grace
                draft.missedAfter = newMissedAfter ?? draft.missedAfter
                detail = try book.addMedication(draft, schedule: schedule)
                current.withLock { $0.medicationID = detail.medication.id }
            }
            // Who is told, in its own transaction after the medication, as `chime med add --tell`
            // and `chime med tell` (a new channel keeps the time unless another is given).
            let reference = String(detail.medication.id)
            if form.tellOff {
                if detail.tell != nil { detail = try book.setTell(reference, nil) }
            } else if let channel = checked.tellChannel {
                detail = try book.setTell(reference, DoseTellRule(channel: channel, after: checked.tellAfter))
            } else if let rule = detail.tell, rule.after != checked.tellAfter {
                detail = try book.setTell(reference, DoseTellRule(channel: rule.channel, after: checked.tellAfter))
            }
            refresh(reloadForm: true)
            return detail
        } catch {
            current.withLock { $0.error = error }
            return nil
        }
    }

    @discardableResult
    public func deactivate() -> MedicationDetailState { setActive(false) }

    @discardableResult
    public func reactivate() -> MedicationDetailState { setActive(true) }

    /// "Delete Aspirin with its 1 schedule and 12 dose records?", as `chime med delete` asks;
    /// nil for a new medication or when it cannot be read (``MedicationDetailState/error``).
    public func deletionQuestion() -> String? {
        guard let id = state.medicationID else { return nil }
        do {
            let impact = try book.deletionImpact(String(id))
            func count(_ n: Int, _ word: String) -> String { "\(n) \(word)\(n == 1 ? "" : "s")" }
            let name = UserText.oneLine(impact.medication.name)
            return "Delete \(name) with its \(count(impact.schedules, "schedule")) and \(count(impact.doses, "dose record"))?"
        } catch {
            current.withLock { $0.error = error }
            return nil
        }
    }

    /// Deletes the medication with its schedules and history. - Returns: whether it was deleted.
    @discardableResult
    public func delete() -> Bool {
        guard let id = state.medicationID else { return false }
        do {
            _ = try book.deleteMedication(String(id))
            return true
        } catch {
            current.withLock { $0.error = error }
            return false
        }
    }

    /// Reads the medication again (its lines, adherence and active state; the form only
    /// with `reloadForm`, so that what a person typed is kept).
    @discardableResult
    public func refresh(reloadForm: Bool = false) -> MedicationDetailState {
        guard let id = state.medicationID else { return state }
        do {
            let detail = try book.medication(String(id))
            let reference = String(id)
            let nextBySchedule = try book.nextDoseBySchedule(reference)
            let now = book.clock.now()
            let zone = book.systemZone()
            let range = DoseRange.last(days: 30, now: now, zone: zone)
            let adherence = try book.adherence(from: range.from, to: range.to, medication: reference).overall
            let lines = MedicationText.lines(detail, full: true, nextBySchedule: nextBySchedule, now: now, zone: zone)
            current.withLock { state in
                state.lines = lines
                state.adherenceText = MedicationText.adherence30Days(adherence)
                state.isActive = detail.medication.isActive
                state.tell = detail.tell
                if reloadForm { state.form = MedicationForm(detail) }
                state.error = nil
            }
            if reloadForm { loaded.withLock { $0 = MedicationForm(detail) } }
        } catch {
            current.withLock { $0.error = error }
        }
        return revalidate()
    }

    // MARK: - Helpers

    private var today: Int { CivilDay.of(book.clock.now(), in: book.systemZone()) }

    @discardableResult
    private func revalidate() -> MedicationDetailState {
        let form = state.form
        let errors = CheckedForm(form, today: today).errors
        current.withLock { $0.fieldErrors = errors }
        return state
    }

    private func setActive(_ active: Bool) -> MedicationDetailState {
        guard let id = state.medicationID else { return state }
        do {
            _ = try book.setActive(String(id), active)
        } catch {
            current.withLock { $0.error = error }
            return state
        }
        return refresh()
    }

    /// Only the fields that differ from `old`; nil when none does.
    private func changes(
        from old: MedicationForm?,
        to form: MedicationForm,
        draft: MedicationDraft,
        schedule: ScheduleDraft,
        taper: DoseTaper?
    )
        -> MedicationChanges?
    {
        var changes = MedicationChanges()
        if form.name != old?.name { changes.name = form.name }
        if form.amount != old?.amount { changes.amount = form.amount }
        if form.unit != old?.unit { changes.unit = form.unit }
        if form.instructions != old?.instructions { changes.instructions = form.instructions }
        if form.prescribedBy != old?.prescribedBy { changes.prescribedBy = form.prescribedBy }
        if form.startDate != old?.startDate { changes.startDay = draft.startDay }
        if form.endDate != old?.endDate { changes.endDay = .some(draft.endDay) }
        if form.stock != old?.stock { changes.stock = .some(draft.stock) }
        if form.taper != old?.taper { changes.taper = .some(taper) }
        if let oldSchedule = old?.schedule {
            if !oldSchedule.maxPerDay.trimmed.isEmpty && form.schedule.maxPerDay.trimmed.isEmpty
                && (schedule.asNeeded || schedule.afterLast != nil)
            {
                // A maximum taken away: the whole schedule, as a change keeps the one set.
                changes.schedule = schedule
            } else {
                changes.scheduleChange = form.schedule.change(
                    from: oldSchedule,
                    times: schedule.asNeeded || schedule.afterLast != nil ? nil : schedule.times
                )
            }
        }
        return changes.isEmpty ? nil : changes
    }
}

extension String {
    var trimmed: String { trimmingCharacters(in: .whitespacesAndNewlines) }
}
