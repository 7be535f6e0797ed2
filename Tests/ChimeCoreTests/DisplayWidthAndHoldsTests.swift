import ChimeCore
import Foundation
import Testing

/// Display widths for the human tables, and what holds alerts (`chime quiet status`, `list`).
struct DisplayWidthTests {
    @Test func widthCountsColumnsNotBytesOrCharacters() {
        #expect(DisplayWidth.of("Tea") == 3)
        #expect(DisplayWidth.of("漢字") == 4)
        #expect(DisplayWidth.of("🍵") == 2)
        #expect(DisplayWidth.of("👩‍💻") == 2)
        #expect(DisplayWidth.of("café") == 4)
        #expect(DisplayWidth.of("e\u{301}") == 1)
        #expect(DisplayWidth.of("アスピリン") == 10)
    }

    @Test func truncationCutsWholeCharactersAndEndsInAnEllipsis() {
        #expect(DisplayWidth.truncated("Tea is ready", to: 20) == "Tea is ready")
        #expect(DisplayWidth.truncated("Tea is ready", to: 6) == "Tea i…")
        // A wide character that would straddle the edge is left out whole
        #expect(DisplayWidth.truncated("漢字漢字", to: 6) == "漢字…")
        #expect(DisplayWidth.truncated("漢字漢字", to: 5) == "漢字…")
        #expect(DisplayWidth.truncated("👩‍💻👩‍💻👩‍💻", to: 5) == "👩‍💻👩‍💻…")
        for width in 1...12 {
            let cut = DisplayWidth.truncated("a漢🍵bé\u{301}字c", to: width)
            #expect(DisplayWidth.of(cut) <= width, "\(width): \(cut)")
        }
        #expect(DisplayWidth.padded("漢", to: 4) == "漢  ")
        #expect(DisplayWidth.leftPadded("7", to: 3) == "  7")
    }
}

struct AlertHoldTests {
    /// Monday 2026-01-05 09:00:00 UTC.
    static let t0 = Date(timeIntervalSince1970: 1_767_603_600)
    static let utc = TimeZone(identifier: "UTC")!

    func occurrence(readyAt: Date?, held: Bool = true) -> PendingOccurrence {
        PendingOccurrence(
            key: OccurrenceKey(reminderKey: 1, dueMicros: Self.t0.micros),
            reminderID: "tea",
            title: "Tea",
            body: "",
            readyAt: readyAt,
            heldSince: held ? Self.t0 : nil
        )
    }

    @Test func nothingHoldsWhenNothingIsInEffect() {
        #expect(QuietState().holds(at: Self.t0, zone: Self.utc).isEmpty)
        #expect(QuietState().holds(at: Self.t0, zone: Self.utc, desktopDoNotDisturb: false).isEmpty)
    }

    @Test func eachHoldSaysWhatAndUntilWhen() throws {
        let window = try QuietSettings.Window.parse("08:00-10:00")
        let state = QuietState(settings: QuietSettings(hours: window), until: Self.t0.addingTimeInterval(1_800))
        let focus = FamilyHold(reason: "focus session", detail: "focus session #3", until: Self.t0.addingTimeInterval(600))
        let holds = state.holds(at: Self.t0, zone: Self.utc, families: [focus], desktopDoNotDisturb: true)
        #expect(
            holds == [
                AlertHold(source: .quiet, reason: "quiet (asked)", until: Self.t0.addingTimeInterval(1_800)),
                AlertHold(source: .quietHours, reason: "quiet hours 08:00-10:00", until: Self.t0.addingTimeInterval(3_600)),
                AlertHold(source: .family, reason: "focus session #3", until: Self.t0.addingTimeInterval(600)),
                AlertHold(source: .desktop, reason: "desktop do-not-disturb", until: nil),
            ]
        )
        #expect(holds.map(\.short) == ["quiet", "quiet hours", "focus", "desktop DND"])
        #expect(holds.map(\.heldByChime) == [true, true, true, false])
        // The person turned the families' hold off: the scheduler does not honour it, nor does status
        var off = state
        off.settings.familyHold = false
        #expect(!off.holds(at: Self.t0, zone: Self.utc, families: [focus]).contains { $0.source == .family })
        // Outside the window and after the quiet by hand: nothing
        #expect(state.holds(at: Self.t0.addingTimeInterval(7_200), zone: Self.utc).isEmpty)
    }

    @Test func aHeldAlertSaysWhatHoldsIt() throws {
        let focus = AlertHold(source: .family, reason: "focus session #3", until: Self.t0.addingTimeInterval(600))
        let hours = AlertHold(source: .quietHours, reason: "quiet hours 08:00-10:00", until: Self.t0.addingTimeInterval(3_600))
        // Held with no ready time: a family's hold
        #expect(QuietState.reason(for: occurrence(readyAt: .distantFuture), among: [hours, focus]) == focus)
        // Held until the window's end: the window, until then
        #expect(QuietState.reason(for: occurrence(readyAt: Self.t0.addingTimeInterval(3_600)), among: [hours, focus]) == hours)
        // The hold has ended since (the runner lets it go at its next pass): still says why it waits
        let gone = try #require(QuietState.reason(for: occurrence(readyAt: .distantFuture), among: []))
        #expect(gone.source == .family && gone.until == nil)
        // Not held: no reason
        #expect(QuietState.reason(for: occurrence(readyAt: nil, held: false), among: [focus]) == nil)
    }
}
