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
}
