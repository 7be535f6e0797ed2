import ChimeCore
import ChimeRunner
import Foundation
import Testing

/// What the console notifier prints never carries a raw control character: a JSON line escapes
/// DEL and the C1 controls (U+0080–U+009F: U+0085 is a line break to some readers, U+009B a
/// terminal's CSI), and a human line shows them as spaces.
struct ConsoleTextTests {
    static let hostile = "a\u{7F}b\u{85}c\u{9B}31md\u{1B}[2Je\u{0}f"

    @Test("A JSON line escapes DEL and C1 controls as \\u007f, \\u0085, \\u009b, and reads back as the same text")
    func jsonLineEscapesDELAndC1() throws {
        let note = Note(id: "x", title: Self.hostile, body: Self.hostile, postedAt: Date(timeIntervalSince1970: 0))
        let line = ConsoleNotifier.json(note)
        #expect(line.contains(#"a\u007fb\u0085c\u009b31md\u001b[2Je\u0000f"#), "\(line)")
        #expect(!line.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }, "\(line.debugDescription)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["title"] as? String == Self.hostile)
    }

    @Test("A human line shows C0, DEL and C1 controls and bidirectional overrides as spaces")
    func humanLineNeutralisesControls() {
        let note = Note(id: "x", title: Self.hostile + "\u{202E}gnp", body: "\u{2066}b\u{2069}", postedAt: Date(timeIntervalSince1970: 0))
        let line = ConsoleNotifier.human(note, zone: TimeZone(identifier: "UTC")!)
        #expect(
            !line.unicodeScalars.contains {
                $0.properties.generalCategory == .control || (0x202A...0x202E).contains($0.value) || (0x2066...0x2069).contains($0.value)
            },
            "\(line.debugDescription)"
        )
    }

    @Test("A human line separates the body's lines with a dash: a dose's instructions apart from its medication")
    func humanLineSeparatesBodyLines() {
        let note = Note(
            id: "med-3-20260105-0800",
            title: "Medication Reminder",
            body: "Zinc (25 mg)\nafter lunch\r\n\nDue at 08:00",
            postedAt: Date(timeIntervalSince1970: 0)
        )
        let line = ConsoleNotifier.human(note, zone: TimeZone(identifier: "UTC")!)
        #expect(line.hasSuffix("] Medication Reminder — Zinc (25 mg) — after lunch — Due at 08:00 (med-3-20260105-0800)"), "\(line)")
        let plain = Note(id: "tea", title: "Tea", body: "ready", postedAt: Date(timeIntervalSince1970: 0))
        #expect(ConsoleNotifier.human(plain, zone: TimeZone(identifier: "UTC")!).hasSuffix("] Tea — ready (tea)"))
    }
}
