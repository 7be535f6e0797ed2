import ChimeCore
import Foundation
import Testing

struct TimeTextTests {
    @Test(arguments: [
        (0.0, "1970-01-01T00:00:00.000Z"),
        (-0.001, "1969-12-31T23:59:59.999Z"),
        (1_795_354_200.599, "2026-11-22T13:30:00.599Z"),
        (1_795_354_200.5996, "2026-11-22T13:30:00.600Z"),
        (951_825_599.0, "2000-02-29T11:59:59.000Z"),
        (253_402_300_799.999, "9999-12-31T23:59:59.999Z"),
        (253_402_300_800.0, "10000-01-01T00:00:00.000Z"),
    ])
    func isoIsUTCRoundedToTheMillisecond(seconds: Double, text: String) {
        #expect(TimeText.iso(Date(timeIntervalSince1970: seconds)) == text)
    }

    @Test func clockIsHoursAndMinutesInTheZone() {
        let instant = Date(timeIntervalSince1970: 1_795_354_200)  // 2026-11-22T13:30:00Z
        #expect(TimeText.clock(instant, in: TimeZone(identifier: "UTC")!) == "13:30")
        #expect(TimeText.clock(instant, in: TimeZone(identifier: "Asia/Kolkata")!) == "19:00")
    }

    @Test(arguments: [
        (1_795_354_200.0, "UTC", false, "Sun 2026-11-22 13:30 +00:00"),
        (1_795_354_200.0, "Asia/Kolkata", true, "Sun 2026-11-22 19:00:00 +05:30"),
        (1_795_323_605.0, "America/St_Johns", true, "Sun 2026-11-22 01:30:05 -03:30"),
        (-62_135_596_800.0, "UTC", false, "Mon 0001-01-01 00:00 +00:00"),
        (253_402_300_799.0, "UTC", true, "Fri 9999-12-31 23:59:59 +00:00"),
    ])
    func localIsWeekdayDateTimeAndOffsetPaddedWithZeros(seconds: Double, zone: String, withSeconds: Bool, text: String) {
        let shown = TimeText.local(Date(timeIntervalSince1970: seconds), in: TimeZone(identifier: zone)!, seconds: withSeconds)
        #expect(shown == text)
    }

    @Test func dstNotesNameTheShiftAndTheRepeat() {
        #expect(LocalResolution.exact.note == nil)
        #expect(
            LocalResolution.shiftedForward(seconds: 3_600, requested: LocalTime(hour: 2, minute: 30)!).note
                == "02:30 does not exist that day (clocks go forward): shifted by 1h"
        )
        #expect(
            LocalResolution.shiftedForward(seconds: 1_800, requested: LocalTime(hour: 2, minute: 15)!).note
                == "02:15 does not exist that day (clocks go forward): shifted by 30m"
        )
        #expect(LocalResolution.firstOfRepeated.note == "this time occurs twice that day (clocks go back): fires at the first")
    }
}
