import ChimeCore
import Foundation

/// The tree as text art, stages 1 to 5: six lines of twelve columns, the ground on the last.
public enum TreeArt {
    public static let width = 12
    public static let height = 6

    static let stages: [[String]] = [
        [
            "            ",
            "            ",
            "            ",
            "            ",
            "     .      ",
            "  ~~~~~~~~  ",
        ],
        [
            "            ",
            "            ",
            "            ",
            "    \\ /     ",
            "     |      ",
            "  ~~~~~~~~  ",
        ],
        [
            "            ",
            "            ",
            "    .oo.    ",
            "   (oooo)   ",
            "     ||     ",
            "  ~~~~~~~~  ",
        ],
        [
            "            ",
            "    .@@.    ",
            "   (@@@@)   ",
            "  (@@@@@@)  ",
            "     ||     ",
            "  ~~~~~~~~  ",
        ],
        [
            "   .@@@@.   ",
            "  (@@@@@@)  ",
            " (@@@@@@@@) ",
            "  `(@@@@)'  ",
            "     ||     ",
            "  ~~~~~~~~  ",
        ],
    ]

    /// The art of `stage` (clamped to 1…5).
    public static func lines(stage: Int) -> [String] { stages[min(max(stage, 1), 5) - 1] }
}

/// Terminal text for focus sessions: the countdown, the forest grid, the trees-per-day chart.
public enum FocusText {
    /// `[##########..........]`: `done` of `total` in `width` cells.
    public static func progressBar(done: Int64, total: Int64, width: Int = 30) -> String {
        let filled = total > 0 ? Int(min(max(done, 0), total) * Int64(width) / total) : width
        return "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "]"
    }

    /// The narrowest terminal the countdown fits: every line of ``frame(_:at:)`` and
    /// ``watch(_:at:zone:)`` is at most this many columns.
    public static let narrowest = 40

    /// What `chime focus status` shows of an open session at `time`: the tree, MM:SS and a bar,
    /// the stage (at most ``narrowest`` columns).
    public static func frame(_ session: FocusSession, at time: MachineTime) -> [String] {
        let remaining = session.remainingSeconds(at: time)
        let stage = session.stage(at: time)
        let state = session.state == .paused ? "paused" : "focusing"
        var lines = TreeArt.lines(stage: stage).map { "    " + $0 }
        lines.append("")
        lines.append(
            "    \(FocusTimer.countdown(remaining))  "
                + progressBar(done: session.focusMicros(at: time), total: session.lengthMicros, width: 20)
        )
        lines.append("    stage \(stage) of 5, \(state)")
        return lines
    }

    /// What `chime focus status --watch` draws at `time`: a heading, the frame, what to do next;
    /// at most ``narrowest`` columns (ids up to 8 digits).
    public static func watch(_ session: FocusSession, at time: MachineTime, zone: TimeZone) -> [String] {
        var lines = ["Focus session #\(session.id), started \(TimeText.clock(session.startedAt, in: zone))"]
        lines += frame(session, at: time)
        if session.state == .paused {
            lines.append("    Paused: 'chime focus resume'")
            lines.append("    goes on. Ctrl-C stops watching.")
        } else {
            lines.append("    Ctrl-C stops watching; the")
            lines.append("    session goes on.")
        }
        return lines
    }

    /// The forest as a grid that fits `width` columns (the seed's adaptive grid): each cell the
    /// grown tree, its number in the forest (1 for the first tree planted; `trees` are the
    /// newest first, the first of them numbered `newest`; or each numbered by `numbers`, for a
    /// forest filtered by label) and its completion day in `zone`.
    public static func grid(_ trees: [FocusSession], newest: Int? = nil, numbers: [Int]? = nil, width: Int, zone: TimeZone) -> [String] {
        let newest = newest ?? trees.count
        let cell = TreeArt.width + 2
        let columns = max(1, width / cell)
        var lines: [String] = []
        let art = TreeArt.lines(stage: TreeStage.grown)
        var index = 0
        while index < trees.count {
            let row = trees[index..<min(index + columns, trees.count)]
            for line in art {
                lines.append(String(repeating: line + "  ", count: row.count).trimmedRight())
            }
            let rowNumbers = row.indices.map { numbers?[$0] ?? newest - $0 }
            lines.append(rowNumbers.map { pad(centered("#\($0)", TreeArt.width), cell) }.joined().trimmedRight())
            lines.append(row.map { pad(centered(shortDay($0.endedAt!, zone: zone), TreeArt.width), cell) }.joined().trimmedRight())
            lines.append("")
            index += columns
        }
        return lines
    }

    /// Trees per day for the `count` days up to `today`, as columns of block characters
    /// (`height` rows), a day-of-month axis under them, and the peak on the left.
    public static func chart(days: [Int: DayTotals], today: Int, count: Int = 30, height: Int = 5) -> [String] {
        let range = (today - count + 1)...today
        let values = range.map { days[$0]?.trees ?? 0 }
        let peak = max(values.max() ?? 0, 1)
        let blocks: [Character] = [" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]
        let label = String(peak)
        let margin = label.count + 1
        var lines: [String] = []
        for level in stride(from: height, through: 1, by: -1) {
            var line =
                level == height ? label.padding(toLength: margin, withPad: " ", startingAt: 0) : String(repeating: " ", count: margin)
            line += "│"
            for value in values {
                // Eighths of a row: the column's height is value / peak of `height` rows.
                let eighths = value * height * 8 / peak - (level - 1) * 8
                let block = blocks[min(max(eighths, value > 0 && level == 1 ? 1 : 0), 8)]
                line += String(repeating: block, count: 2)
            }
            lines.append(line.trimmedRight())
        }
        lines.append(String(repeating: " ", count: margin) + "└" + String(repeating: "─", count: count * 2))
        // Day-of-month labels every 7 days, ending with today.
        var axis = Array(repeating: Character(" "), count: count * 2 + 1)
        for offset in stride(from: count - 1, through: 0, by: -7) {
            let day = ZoneMath.civilFromDays(range.lowerBound + offset).day
            let text = Array(String(day))
            let at = offset * 2 + 1
            for (i, c) in text.enumerated() where at + i < axis.count { axis[at + i] = c }
        }
        lines.append(String(repeating: " ", count: margin) + String(axis).trimmedRight())
        return lines
    }

    /// How an ended session ended, in a sentence (`chime focus status`, the app's timer); nil
    /// for an open one.
    public static func outcome(_ session: FocusSession, zone: TimeZone) -> String? {
        let ended = session.endedAt.map { TimeText.local($0, in: zone) } ?? "at an unknown time"
        switch (session.state, session.endReason) {
        case (.completed, _):
            return "The last one, #\(session.id), was completed \(ended): \(minutes(session.focusMicros)) of focus."
        case (.abandoned, .restarted?):
            return "The last one, #\(session.id), was abandoned: the machine restarted during it (by \(ended)), "
                + "so its focus time since the last start or resume is unknown; \(minutes(session.focusMicros)) counted."
        case (.abandoned, _):
            return "The last one, #\(session.id), was given up \(ended) after \(minutes(session.focusMicros)) of focus."
        default:
            return nil
        }
    }

    /// ` (thesis)` after a session's number when it has a label, else nothing.
    public static func labelled(_ session: FocusSession) -> String {
        session.label.map { " (\($0))" } ?? ""
    }

    /// The empty forest (the seed's empty state): a title and a line under it.
    public static let emptyForestTitle = "Plant your first tree"
    public static let emptyForestMessage = "Start a 25-minute focus session to grow your forest"

    /// The forest's heading: `My Forest: 3 trees planted`.
    public static func forestHeading(count: Int) -> String {
        "My Forest: \(count) \(count == 1 ? "tree" : "trees") planted"
    }

    /// A forest filtered by label: `My Forest: 2 trees labelled thesis`.
    public static func forestHeading(count: Int, label: String) -> String {
        "My Forest: \(count) \(count == 1 ? "tree" : "trees") labelled \(label)"
    }

    /// A tree's heading: `Tree #3 (focus session #12)` (`chime forest show`, the app's detail).
    public static func treeTitle(_ session: FocusSession, number: Int) -> String {
        "Tree #\(number) (focus session #\(session.id))"
    }

    /// A tree's details (the seed's detail view), labelled: Completed, Focus Time, Started,
    /// Paused when it was paused a minute or more, and Label when it has one; times local in `zone`.
    public static func treeDetail(_ session: FocusSession, zone: TimeZone) -> [(label: String, value: String)] {
        var rows = [
            ("Completed", session.endedAt.map { TimeText.local($0, in: zone) } ?? "Unknown"),
            ("Focus Time", minutes(session.focusMicros)),
            ("Started", TimeText.local(session.startedAt, in: zone)),
        ]
        if session.pausedMicros >= 60_000_000 { rows.append(("Paused", minutes(session.pausedMicros))) }
        if let label = session.label { rows.append(("Label", label)) }
        return rows
    }

    /// `Nov 22` in `zone`.
    public static func shortDay(_ date: Date, zone: TimeZone) -> String {
        let (local, _) = ZoneMath.civil(date, in: zone)
        return "\(monthNames[local.month - 1]) \(local.day)"
    }

    static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `25 minutes` (the seed's detail view), `1 minute`.
    public static func minutes(_ micros: Int64) -> String {
        let minutes = micros / 60_000_000
        return minutes == 1 ? "1 minute" : "\(minutes) minutes"
    }

    private static func centered(_ text: String, _ width: Int) -> String {
        let space = max(0, width - text.count)
        return String(repeating: " ", count: space / 2) + text + String(repeating: " ", count: space - space / 2)
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}

extension String {
    func trimmedRight() -> String {
        var copy = self
        while copy.last == " " { copy.removeLast() }
        return copy
    }
}
