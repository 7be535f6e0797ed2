import ChimeCore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// An optional value that `--json` prints as `null` when it is absent, where a synthesized
/// `Encodable` would leave the key out: scripts read every key of a document, always.
@propertyWrapper
struct Nullable<Value: Encodable>: Encodable {
    var wrappedValue: Value?

    init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
    }
}

/// What a command prints: its `Encodable` self as one JSON document with `--json`, else
/// ``lines`` for a person, then ``notes``.
protocol Report: Encodable {
    /// The human text, one element a line, on standard output.
    var lines: [String] { get }
    /// Human notes (warnings, hints), one element a line, on standard error after ``lines``;
    /// `--json` leaves them out.
    var notes: [String] { get }
}

extension Report {
    var notes: [String] { [] }
}

/// Prints `report`: one JSON document when `json`, else its lines, then its notes.
func emit(_ report: some Report, json: Bool) {
    if json {
        Output.json(report)
    } else {
        for line in report.lines { Output.line(line) }
        for note in report.notes { Output.note(note) }
    }
}

/// Asks a yes/no question on the terminal; without one, `--yes` is required (exit 64).
func confirm(_ question: String, what: String, yes: Bool) throws(ChimeError) -> Bool {
    if yes { return true }
    guard isatty(STDIN_FILENO) == 1 else {
        throw ChimeError(.usage, "\(what) needs a confirmation: run it in a terminal to answer, or pass --yes")
    }
    FileHandle.standardError.write(Data("\(question) [y/N] ".utf8))
    let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
    return answer == "y" || answer == "yes"
}
