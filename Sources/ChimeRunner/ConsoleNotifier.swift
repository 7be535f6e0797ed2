import ChimeCore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The headless runner's notifier: one human line, or one JSON object per line, per alert.
///
/// Writes go straight to the file descriptor (no buffering), so a reader of the stream sees
/// each alert the moment it fires. A failed write throws: the scheduler keeps the occurrence
/// and retries.
public struct ConsoleNotifier: Notifier {
    public enum Format: String, Sendable, CaseIterable {
        case human = "console"
        case json
    }

    public let format: Format
    private let fd: Int32
    private let zone: @Sendable () -> TimeZone
    private let stream: AsyncStream<NoteResponse>

    /// - Parameter fd: where lines go; standard output by default.
    public init(format: Format, fd: Int32 = STDOUT_FILENO, zone: @escaping @Sendable () -> TimeZone = { TimeZone.current }) {
        self.format = format
        self.fd = fd
        self.zone = zone
        // A console has no buttons: nothing ever responds.
        self.stream = AsyncStream { $0.finish() }
    }

    public func post(_ note: Note) async throws -> PostedNote {
        let line = format == .json ? Self.json(note) : Self.human(note, zone: zone())
        // A sound on a console: the terminal's bell, never in the JSON stream or a file.
        let bell = format == .human && note.sound != nil && isatty(fd) == 1 ? ConsoleBell.character : ""
        try writeAll(line + bell + "\n")
        return PostedNote(id: note.id, via: format == .json ? "json" : "console")
    }

    public func withdraw(_ shown: PostedNote) async throws {
        if format == .json {
            try writeAll(#"{"event":"withdrawn","id":\#(Self.quote(shown.id))}"# + "\n")
        }
    }

    public var responses: AsyncStream<NoteResponse> { stream }

    /// `console` or `json`: standard output (or the descriptor it was given).
    public var destination: String? { format.rawValue }

    /// `[Sun 2026-11-22 14:30:00 +01:00] Tea is ready — body (tea)` (each line of the body after a
    /// dash of its own) and, when late,
    /// `(tea, due 14:00:00, late by 30m)`.
    public static func human(_ note: Note, zone: TimeZone) -> String {
        let stamp = "[\(TimeText.local(note.postedAt, in: zone, seconds: true))]"
        guard note.isSummary else {
            var text = "\(stamp) \(oneLine(note.title))"
            // Each line of the body after a dash: "Zinc (25 mg) — after lunch", not "Zinc (25 mg) after lunch".
            for line in note.body.split(whereSeparator: \.isNewline) where !line.allSatisfy(\.isWhitespace) {
                text += " — \(oneLine(String(line)))"
            }
            if let answer = note.answerInstead { text += " — \(oneLine(answer))" }
            if let delivery = note.deliveries.first {
                text += " (\(describe(delivery, in: note, zone: zone)))"
            } else {
                text += " (\(note.id))"
            }
            return text
        }
        let items = note.deliveries.map { "\($0.reminderID) \"\(oneLine($0.title))\" \(describe($0, in: note, zone: zone, withID: false))" }
        return "\(stamp) \(note.title): " + items.joined(separator: "; ")
    }

    private static func describe(_ delivery: Note.Delivery, in note: Note, zone: TimeZone, withID: Bool = true) -> String {
        var parts: [String] = withID ? [delivery.reminderID] : []
        let late = note.lateness(of: delivery)
        if late >= .seconds(1) {
            parts.append("due \(TimeText.local(delivery.due, in: zone, seconds: true)), late by \(formatDuration(late))")
        }
        if delivery.missedCount > 0 {
            parts.append("\(delivery.missedCount) earlier occurrence\(delivery.missedCount == 1 ? "" : "s") missed")
        }
        return parts.joined(separator: ", ")
    }

    /// One JSON object: `event` (`reminder` or `summary`), `id`, `title`, `body`, `posted`, and per
    /// occurrence its `id`, `due`, `late_ms` and `missed`. A single reminder's occurrence fields
    /// are repeated at the top level.
    public static func json(_ note: Note) -> String {
        var fields: [(String, String)] = [
            ("event", quote(note.isSummary ? "summary" : "reminder")),
            ("id", quote(note.id)),
            ("title", quote(note.title)),
            ("body", quote(note.body)),
            ("posted", quote(TimeText.iso(note.postedAt))),
        ]
        if !note.actions.isEmpty {
            fields.append(("actions", "[" + note.actions.map { quote($0.key) }.joined(separator: ",") + "]"))
        }
        if let answer = note.answerInstead { fields.append(("answer", quote(answer))) }
        let occurrences = note.deliveries.map { delivery in
            let lateMs =
                Double(note.lateness(of: delivery).components.attoseconds) / 1e15
                + Double(note.lateness(of: delivery).components.seconds) * 1000
            return [
                ("id", quote(delivery.reminderID)),
                ("title", quote(delivery.title)),
                ("due", quote(TimeText.iso(delivery.due))),
                ("late_ms", String(format: "%.3f", lateMs)),
                ("missed", String(delivery.missedCount)),
            ]
        }
        if note.isSummary {
            fields.append(("ids", "[" + note.deliveries.map { quote($0.reminderID) }.joined(separator: ",") + "]"))
            fields.append(("count", String(note.deliveries.count)))
            fields.append(("occurrences", "[" + occurrences.map(object).joined(separator: ",") + "]"))
        } else if let only = occurrences.first {
            fields.append(contentsOf: only.filter { $0.0 != "id" && $0.0 != "title" })
        }
        return object(fields)
    }

    private static func object(_ fields: [(String, String)]) -> String {
        "{" + fields.map { "\(quote($0.0)):\($0.1)" }.joined(separator: ",") + "}"
    }

    /// A JSON string literal with every control character escaped (``JSONText/quote(_:)``):
    /// written by hand, as the runner writes a handful of fields per line on its firing path.
    static func quote(_ string: String) -> String { JSONText.quote(string) }

    /// Text from a reminder never breaks the line format or drives the terminal: control
    /// characters (C0, DEL, C1) become spaces, bidirectional controls are dropped.
    static func oneLine(_ text: String) -> String { UserText.oneLine(text) }

    private func writeAll(_ text: String) throws {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                throw ChimeError(.delivery, "cannot write to the console: \(String(cString: strerror(errno)))")
            }
            offset += written
        }
        bytes.removeAll()
    }
}
