import ChimeCore
import Foundation
import Testing

/// `chime status`'s lines, from a status and a fixed clock.
struct StatusLineTests {
    static let zone = TimeZone(identifier: "Europe/Paris")!
    /// 2026-11-27 16:00:00 in Paris.
    static let now = Date(timeIntervalSince1970: 1_795_791_600)

    static func at(_ seconds: Double) -> Date { now.addingTimeInterval(seconds) }

    static func text(_ status: StatusSnapshot, at time: Date = now) -> String {
        StatusLine.text(status, now: time, zone: zone)
    }

    @Test func theClockIsWhatTheTestsSay() {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = Self.zone
        #expect(calendar.dateComponents([.hour, .minute, .second], from: Self.now) == DateComponents(hour: 16, minute: 0, second: 0))
    }

    @Test func textJoinsNextFocusDoseAndQuiet() {
        let status = StatusSnapshot(
            next: .init(id: "tea", title: "Tea", due: Self.at(25 * 60)),
            dose: .init(id: "med-1", title: "Aspirin", due: Self.at(3 * 3600)),
            focus: .active(end: Self.at(12 * 60)),
            quiet: .init(until: Self.at(2 * 3600), reasons: ["manual"])
        )
        #expect(Self.text(status) == "Tea in 25m · focus 12m left · dose Aspirin at 19:00 · quiet until 18:00")
    }

    @Test func minutesRoundUpAndAnHourOrMoreIsAClockTime() {
        let tea = { (seconds: Double) in StatusSnapshot(next: .init(id: "tea", title: "Tea", due: Self.at(seconds))) }
        #expect(Self.text(tea(24 * 60 + 1)) == "Tea in 25m")
        #expect(Self.text(tea(25 * 60)) == "Tea in 25m")
        #expect(Self.text(tea(1)) == "Tea in 1m")
        #expect(Self.text(tea(0)) == "Tea now")
        #expect(Self.text(tea(59 * 60)) == "Tea in 59m")
        #expect(Self.text(tea(59 * 60 + 1)) == "Tea at 16:59")
        #expect(Self.text(tea(9 * 3600)) == "Tea tomorrow 01:00")
        #expect(Self.text(tea(40 * 3600)) == "Tea 2026-11-29 08:00")
    }

    @Test func aDoseThatIsTheNextReminderIsNamedOnce() {
        let dose = StatusSnapshot.Item(id: "med-1", title: "Aspirin", due: Self.at(300))
        #expect(Self.text(StatusSnapshot(next: dose, dose: dose)) == "Aspirin in 5m")
    }

    @Test func pausedFocusAndLongSessions() {
        #expect(Self.text(StatusSnapshot(focus: .paused(remaining: 61))) == "focus paused, 2m left")
        #expect(Self.text(StatusSnapshot(focus: .active(end: Self.at(65 * 60)))) == "focus 1h05m left")
    }

    @Test func nothingAndNoRunner() {
        #expect(Self.text(StatusSnapshot()) == "no reminders")
        #expect(Self.text(.noRunner) == "no runner")
        #expect(StatusLine.render(.noRunner, format: .json, now: Self.now, zone: Self.zone) == #"{"runner":false}"#)
    }

    @Test func jsonHasEveryKeyWithTimesInRFC3339() throws {
        let status = StatusSnapshot(
            next: .init(id: "tea", title: "Tea", due: Self.at(25 * 60)),
            focus: .active(end: Self.at(12 * 60 + 30)),
            quiet: .init(until: Self.at(2 * 3600), reasons: ["manual"])
        )
        let line = StatusLine.render(status, format: .json, now: Self.now, zone: Self.zone)
        #expect(!line.contains("\n"))
        let object = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["runner"] as? Bool == true)
        #expect(object["dose"] is NSNull)
        let next = try #require(object["next"] as? [String: Any])
        #expect(next["id"] as? String == "tea" && next["title"] as? String == "Tea")
        #expect(next["due"] as? String == "2026-11-27T16:25:00+01:00")
        let focus = try #require(object["focus"] as? [String: Any])
        #expect(focus["state"] as? String == "active" && focus["remaining_s"] as? Int == 750)
        #expect(focus["end"] as? String == "2026-11-27T16:12:30+01:00")
        let quiet = try #require(object["quiet"] as? [String: Any])
        #expect(quiet["active"] as? Bool == true && quiet["until"] as? String == "2026-11-27T18:00:00+01:00")
        #expect(quiet["reasons"] as? [String] == ["manual"])
    }

    @Test func waybarAndI3barAreTheirBarsJSON() throws {
        let status = StatusSnapshot(
            next: .init(id: "tea", title: "Tea \"green\"", due: Self.at(25 * 60)),
            focus: .active(end: Self.at(600))
        )
        let waybar = try #require(
            JSONSerialization.jsonObject(with: Data(StatusLine.render(status, format: .waybar, now: Self.now, zone: Self.zone).utf8))
                as? [String: String]
        )
        #expect(waybar["text"] == "Tea \"green\" in 25m · focus 10m left")
        #expect(waybar["class"] == "focus" && waybar["alt"] == "focus")
        #expect(waybar["tooltip"] == "Next: Tea \"green\" at 16:25 (in 25m)\nFocus: 10m left, ends 16:10")
        let block = try #require(
            JSONSerialization.jsonObject(with: Data(StatusLine.render(status, format: .i3bar, now: Self.now, zone: Self.zone).utf8))
                as? [String: Any]
        )
        #expect(block["full_text"] as? String == "Tea \"green\" in 25m · focus 10m left")
        #expect(block["short_text"] as? String == "focus 10m")
        #expect(block["name"] as? String == "chime")
        #expect(StatusLine.render(status, format: .text, now: Self.now, zone: Self.zone) == "Tea \"green\" in 25m · focus 10m left")
    }

    @Test func statesForStyling() {
        #expect(StatusLine.state(.noRunner) == "no-runner")
        #expect(StatusLine.state(StatusSnapshot()) == "idle")
        #expect(StatusLine.state(StatusSnapshot(next: .init(id: "a", title: "A", due: Self.now))) == "next")
        #expect(StatusLine.state(StatusSnapshot(quiet: .init(until: Self.now, reasons: []))) == "quiet")
        #expect(StatusLine.state(StatusSnapshot(focus: .paused(remaining: 5), quiet: .init(until: Self.now, reasons: []))) == "paused")
    }

    @Test func theOnlyTimerIsTheNextMinuteOfACountdown() {
        // Nothing counts down: no timer.
        #expect(StatusLine.nextBoundary(StatusSnapshot(), now: Self.now) == nil)
        #expect(StatusLine.nextBoundary(.noRunner, now: Self.now) == nil)
        #expect(StatusLine.nextBoundary(StatusSnapshot(focus: .paused(remaining: 300)), now: Self.now) == nil)
        #expect(StatusLine.nextBoundary(StatusSnapshot(quiet: .init(until: Self.at(60), reasons: [])), now: Self.now) == nil)
        // Focus ends at 12m30s: 12m30s → 13m left, 12m from 30 s on.
        #expect(StatusLine.nextBoundary(StatusSnapshot(focus: .active(end: Self.at(750))), now: Self.now) == Self.at(30))
        // At the boundary itself, the next one is a minute on.
        #expect(StatusLine.nextBoundary(StatusSnapshot(focus: .active(end: Self.at(720))), now: Self.now) == Self.at(60))
        // A reminder 3 h away: when it comes within the counted 59 minutes.
        let far = StatusSnapshot(next: .init(id: "a", title: "A", due: Self.at(3 * 3600)))
        #expect(StatusLine.nextBoundary(far, now: Self.now) == Self.at(3 * 3600 - 59 * 60))
        // The soonest of the focus and the reminder's minutes.
        let both = StatusSnapshot(next: .init(id: "a", title: "A", due: Self.at(25 * 60 + 10)), focus: .active(end: Self.at(750)))
        #expect(StatusLine.nextBoundary(both, now: Self.now) == Self.at(10))
        // Each boundary changes the text, and just before it does not.
        let tea = StatusSnapshot(next: .init(id: "a", title: "A", due: Self.at(25 * 60 + 10)))
        let boundary = StatusLine.nextBoundary(tea, now: Self.now)!
        #expect(Self.text(tea, at: boundary.addingTimeInterval(-0.01)) == Self.text(tea))
        #expect(Self.text(tea, at: boundary.addingTimeInterval(0.01)) != Self.text(tea))
    }
}
