import ChimeCore
import ChimeGateway
import ChimeStore
import ChimeTesting
import Foundation
import Testing

/// `chime gate edit`'s use case, which the app's Gateway form saves through: a change read from
/// text by the family's parsers, applied to a gated program's rule; refused for a program that
/// is not gated, with nothing written.
struct GateRuleChangeTests {
    @Test func optionsAreReadByTheFamilysParsersAndKeepWhatIsNotGiven() throws {
        let change = try GateRuleChange.parse(hours: "22:00-06:00", budgets: ["60m/day", "3/day"])
        #expect(change.days == nil && change.remindAfter == nil)
        let before = GateRule(programID: "firefox.desktop", days: .weekend, remindAfter: 20)
        let after = change.applied(to: before)
        #expect(after.label == "22:00-06:00 sat,sun, budget 3/day and 60m/day, reminder after 20 min")
        // Every day is no limit; `.some(nil)` clears.
        var clearing = try GateRuleChange.parse(days: "every day")
        clearing.remindAfter = .some(nil)
        #expect(clearing.applied(to: after).label == "22:00-06:00, budget 3/day and 60m/day")
        #expect(GateRuleChange(setting: GateRule(programID: "x")).applied(to: after) == GateRule(programID: "firefox.desktop"))
        #expect(GateRuleChange().isEmpty && !clearing.isEmpty)
    }

    @Test func aBadValueIsRefusedInTheWordsOfItsOption() {
        #expect(throws: ChimeError.invalid("hours", "9-25", expected: GateHours.expected)) { try GateRuleChange.parse(hours: "9-25") }
        #expect(throws: ChimeError.invalid("days", "someday", expected: WeekdaySet.spokenExpected)) {
            try GateRuleChange.parse(days: "someday")
        }
        #expect(throws: ChimeError(.usage, "--budget 4/day: an opens budget is given twice")) {
            try GateRuleChange.parse(budgets: ["3/day", "4/day"])
        }
        #expect(throws: ChimeError.invalid("remind-after", "0m", expected: GateRule.remindExpected)) {
            try GateRuleChange.parse(remindAfter: "0m")
        }
    }

    @Test func editChangesAGatedProgramsRuleAndRefusesOneNotGated() throws {
        let root = FileManager.default.temporaryDirectory.path + "/chime-rule-change-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: root) }
        for directory in [root + "/home/.local/share", root + "/usr/share/applications", root + "/usr/bin"] {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        let entry = "[Desktop Entry]\nType=Application\nName=Firefox\nExec=firefox %u\n"
        try Data(entry.utf8).write(to: URL(fileURLWithPath: root + "/usr/share/applications/firefox.desktop"))
        let overrides = LauncherOverrides(data: XDGDataDirectories(home: root + "/home/.local/share", directories: [root + "/usr/share"]))
        let book = GateBook(
            store: try ReminderStore(path: root + "/chime.sqlite", schemas: [.gateway]),
            clock: ManualWallClock(now: Date(timeIntervalSince1970: 1_767_603_600))
        )
        let firefox = try DesktopFileID("firefox")
        let change = try GateRuleChange.parse(hours: "09:00-17:00", days: "mon-fri", budgets: ["45m/day"])

        #expect(throws: ChimeError(.notFound, "'firefox.desktop' is not gated: 'chime gate add firefox.desktop' gates it")) {
            try book.edit(firefox, change, overrides: overrides)
        }
        #expect(try book.rules().isEmpty)

        _ = try overrides.gate(firefox, chime: root + "/usr/bin/chime")
        let (gated, rule) = try book.edit(firefox, change, overrides: overrides)
        #expect(gated.id == firefox)
        #expect(rule.label == "09:00-17:00 mon-fri, budget 45m/day")
        #expect(try book.rule(programID: "firefox.desktop") == rule)
        // A change that leaves nothing: the rule is forgotten.
        try book.edit(firefox, GateRuleChange(setting: GateRule(programID: "firefox.desktop")), overrides: overrides)
        #expect(try book.rules().isEmpty)
    }
}
