import ChimeCore
import Foundation

/// A taper: the amount of a dose changes on dates (`--taper "10mg until 12-10, 5mg until 12-20,
/// then stop"`). Each step's amount holds up to and including its last day (local, in the
/// person's zone); after the last step the schedule stops (``stops``: the medication ends and is
/// deactivated) or the last amount goes on.
public struct DoseTaper: Sendable, Hashable {
    public struct Step: Sendable, Hashable {
        public var amount: Double
        /// The last day of this amount (a civil day number); nil only for a last step that goes on.
        public var until: Int?
        /// The unit as typed ("mg"), checked against the medication's; not stored.
        public var unit: String?

        public init(amount: Double, until: Int?, unit: String? = nil) {
            (self.amount, self.until, self.unit) = (amount, until, unit)
        }
    }

    public var steps: [Step]
    /// "then stop": no doses after the last step's day.
    public var stops: Bool

    public init(steps: [Step], stops: Bool) {
        (self.steps, self.stops) = (steps, stops)
    }

    static let expected =
        "pieces 'AMOUNT[UNIT] until DATE' separated by commas, dates YYYY-MM-DD or MM-DD in order, "
        + "optionally ending 'then stop', such as \"10mg until 12-10, 5mg until 12-20, then stop\""

    /// The amount of a dose on `day`; nil after the last day of a taper that stops.
    public func amount(on day: Int) -> Double? {
        for step in steps where step.until.map({ day <= $0 }) ?? true { return step.amount }
        return stops ? nil : steps.last?.amount
    }

    /// The last day with doses, for a taper that stops.
    public var lastDay: Int? { stops ? steps.last?.until : nil }

    /// "10 mg until 2026-12-10, 5 mg until 2026-12-20, then stop" in `unit`.
    public func summary(unit: String) -> String {
        var pieces = steps.map { step in
            "\(Medication.format(amount: step.amount)) \(unit)" + (step.until.map { " until \(CivilDay.format($0))" } ?? "")
        }
        if stops { pieces.append("then stop") }
        return pieces.joined(separator: ", ")
    }

    /// As stored: "10@20432,5@20442,stop".
    public var stored: String {
        var pieces = steps.map { Medication.format(amount: $0.amount) + ($0.until.map { "@\($0)" } ?? "") }
        if stops { pieces.append("stop") }
        return pieces.joined(separator: ",")
    }

    /// Reads ``stored``; nil for text it does not know.
    public init?(stored text: String) {
        var steps: [Step] = []
        var stops = false
        for piece in text.split(separator: ",") {
            if piece == "stop" {
                stops = true
                continue
            }
            let parts = piece.split(separator: "@")
            guard let amount = Double(parts[0]) else { return nil }
            steps.append(Step(amount: amount, until: parts.count > 1 ? Int(parts[1]) : nil))
        }
        guard !steps.isEmpty else { return nil }
        self.init(steps: steps, stops: stops)
    }

    /// `--taper`: pieces "AMOUNT[UNIT] until DATE" separated by commas, each date after the one
    /// before (MM-DD: the first such date on or after `from`, then after the date before), the
    /// last piece may be "then stop" or an amount alone (it goes on). Units are checked against
    /// the medication's by ``MedicationDraft/validated()``.
    /// - Throws: `.usage` naming the bad piece and the accepted form.
    public static func parse(_ text: String, from firstDay: Int) throws(ChimeError) -> DoseTaper {
        let pieces = text.split(separator: ",", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        guard !text.trimmingCharacters(in: .whitespaces).isEmpty else { throw ChimeError.invalid("taper", text, expected: expected) }
        var steps: [Step] = []
        var stops = false
        var earliest = firstDay
        for (index, piece) in pieces.enumerated() {
            let isLast = index == pieces.count - 1
            let lower = piece.lowercased()
            if lower == "then stop" || lower == "stop" {
                guard isLast, !steps.isEmpty else { throw ChimeError.invalid("taper piece", piece, expected: expected) }
                stops = true
                continue
            }
            var words = lower.split(separator: " ").map(String.init)
            if words.first == "then" { words.removeFirst() }
            guard let untilIndex = words.firstIndex(of: "until") else {
                // An amount alone: the last piece, which goes on.
                guard isLast, !steps.isEmpty, let read = amountAndUnit(words.joined(separator: " ")) else {
                    throw ChimeError.invalid("taper piece", piece, expected: expected)
                }
                steps.append(Step(amount: read.amount, until: nil, unit: read.unit))
                continue
            }
            guard untilIndex + 2 == words.count, let read = amountAndUnit(words[..<untilIndex].joined(separator: " ")),
                let day = date(words[untilIndex + 1], onOrAfter: earliest)
            else { throw ChimeError.invalid("taper piece", piece, expected: expected) }
            guard day >= earliest else {
                throw ChimeError.invalid(
                    "taper piece",
                    piece,
                    expected:
                        "a date on or after \(CivilDay.format(earliest)) (the \(steps.isEmpty ? "first day" : "day after the date before"))"
                )
            }
            steps.append(Step(amount: read.amount, until: day, unit: read.unit))
            earliest = day + 1
        }
        return DoseTaper(steps: steps, stops: stops)
    }

    /// "10mg", "10 mg", "2.5": the amount (as ``MedicationDraft/amount(_:)`` reads it) and the unit typed, if any.
    static func amountAndUnit(_ text: String) -> (amount: Double, unit: String?)? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let number = trimmed.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
        let unit = trimmed.dropFirst(number.count).trimmingCharacters(in: .whitespaces)
        guard let amount = try? MedicationDraft.amount(String(number)) else { return nil }
        guard unit.count <= 20, !unit.contains(" ") else { return nil }
        return (amount, unit.isEmpty ? nil : unit)
    }

    /// YYYY-MM-DD, or MM-DD: the first such date on or after `earliest`.
    static func date(_ text: String, onOrAfter earliest: Int) -> Int? {
        if let day = try? CivilDay.parse(text, field: "date") { return day }
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 2, parts[1].count == 2, let month = Int(parts[0]), let day = Int(parts[1]),
            (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        let start = ZoneMath.civilFromDays(earliest).year
        for year in start...(start + 8) where day <= ZoneMath.daysInMonth(year: year, month: month) {
            let number = ZoneMath.daysFromCivil(year: year, month: month, day: day)
            if number >= earliest { return number }
        }
        return nil
    }
}

/// `--max 4/day`: at most this many doses taken in any 24 hours (a rolling window, as a
/// label's "no more than 4 in 24 hours" means).
public enum DoseMaximum {
    /// What `--max` accepts.
    public static let counts = 1...100
    static let expected = "a count of doses in 24 hours from 1 to 100, such as 4/day (or 4)"

    /// "4/day", "4/24h", "4": the count. - Throws: `.usage` naming the value.
    public static func parse(_ text: String) throws(ChimeError) -> Int {
        var rest = text.trimmingCharacters(in: .whitespaces).lowercased()
        for suffix in ["/day", "/24h", " per day", "/d"] where rest.hasSuffix(suffix) {
            rest = String(rest.dropLast(suffix.count)).trimmingCharacters(in: .whitespaces)
            break
        }
        guard !rest.isEmpty, rest.count <= 3, rest.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let count = Int(rest),
            counts.contains(count)
        else { throw ChimeError.invalid("max", text, expected: expected) }
        return count
    }
}

extension Medication {
    /// The amount of a dose on `day` (a civil day number): its taper's, else ``amount``; nil
    /// after the last day of a taper that stops.
    public func amount(on day: Int) -> Double? {
        guard let taper else { return amount }
        return taper.amount(on: day)
    }

    /// The medication as it is on `day`: its amount that day's (the last step's after a taper
    /// that stops), for the labels and titles of that day's doses.
    public func on(day: Int) -> Medication {
        guard let taper else { return self }
        var copy = self
        copy.amount = taper.amount(on: day) ?? taper.steps.last?.amount ?? amount
        return copy
    }
}
