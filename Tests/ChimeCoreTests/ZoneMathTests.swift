import ChimeCore
import Foundation
import Testing

@Suite("ZoneMath: civil calendar and DST resolution")
struct ZoneMathTests {
    @Test("The test zones exist, including Pacific/Apia's skipped 2011-12-30")
    func zoneDataIsPresent() {
        for id in ["America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "Pacific/Apia"] {
            #expect(TimeZone(identifier: id) != nil, "\(id)")
        }
        #expect(TestZones.apia.secondsFromGMT(for: utcInstant(2011, 12, 29, 12)) == -10 * 3600)
        #expect(TestZones.apia.secondsFromGMT(for: utcInstant(2011, 12, 31, 12)) == 14 * 3600)
    }

    struct ResolveCase: Sendable, CustomTestStringConvertible {
        var zone: String
        var local: CivilDateTime
        var expectedUTC: Date
        var expectedOffset: Int
        var resolution: LocalResolution
        var testDescription: String { "\(zone) \(local)" }
    }

    static let resolveCases: [ResolveCase] = [
        // Spring forward: read with the offset before the gap.
        ResolveCase(
            zone: "America/New_York",
            local: .init(year: 2026, month: 3, day: 8, hour: 2, minute: 30),
            expectedUTC: utcInstant(2026, 3, 8, 7, 30),
            expectedOffset: -4 * 3600,
            resolution: .shiftedForward(seconds: 3600, requested: hm("02:30"))
        ),
        ResolveCase(
            zone: "Europe/Berlin",
            local: .init(year: 2026, month: 3, day: 29, hour: 2, minute: 30),
            expectedUTC: utcInstant(2026, 3, 29, 1, 30),
            expectedOffset: 2 * 3600,
            resolution: .shiftedForward(seconds: 3600, requested: hm("02:30"))
        ),
        ResolveCase(
            zone: "Australia/Lord_Howe",
            local: .init(year: 2026, month: 10, day: 4, hour: 2, minute: 15),
            expectedUTC: utcInstant(2026, 10, 3, 15, 45),
            expectedOffset: 11 * 3600,
            resolution: .shiftedForward(seconds: 1800, requested: hm("02:15"))
        ),
        ResolveCase(
            zone: "Pacific/Apia",
            local: .init(year: 2011, month: 12, day: 30, hour: 8),
            expectedUTC: utcInstant(2011, 12, 30, 18),
            expectedOffset: 14 * 3600,
            resolution: .shiftedForward(seconds: 86_400, requested: hm("08:00"))
        ),
        // Fall back: the first of the two.
        ResolveCase(
            zone: "America/New_York",
            local: .init(year: 2026, month: 11, day: 1, hour: 1, minute: 30),
            expectedUTC: utcInstant(2026, 11, 1, 5, 30),
            expectedOffset: -4 * 3600,
            resolution: .firstOfRepeated
        ),
        ResolveCase(
            zone: "Europe/Berlin",
            local: .init(year: 2026, month: 10, day: 25, hour: 2, minute: 30),
            expectedUTC: utcInstant(2026, 10, 25, 0, 30),
            expectedOffset: 2 * 3600,
            resolution: .firstOfRepeated
        ),
        ResolveCase(
            zone: "Australia/Lord_Howe",
            local: .init(year: 2026, month: 4, day: 5, hour: 1, minute: 45),
            expectedUTC: utcInstant(2026, 4, 4, 14, 45),
            expectedOffset: 11 * 3600,
            resolution: .firstOfRepeated
        ),
        // Ordinary times.
        ResolveCase(
            zone: "America/New_York",
            local: .init(year: 2026, month: 7, day: 1, hour: 12),
            expectedUTC: utcInstant(2026, 7, 1, 16),
            expectedOffset: -4 * 3600,
            resolution: .exact
        ),
        ResolveCase(
            zone: "America/New_York",
            local: .init(year: 2026, month: 3, day: 8, hour: 1, minute: 59),
            expectedUTC: utcInstant(2026, 3, 8, 6, 59),
            expectedOffset: -5 * 3600,
            resolution: .exact
        ),
        ResolveCase(
            zone: "America/New_York",
            local: .init(year: 2026, month: 3, day: 8, hour: 3),
            expectedUTC: utcInstant(2026, 3, 8, 7),
            expectedOffset: -4 * 3600,
            resolution: .exact
        ),
        ResolveCase(
            zone: "America/New_York",
            local: .init(year: 2026, month: 11, day: 1, hour: 2),
            expectedUTC: utcInstant(2026, 11, 1, 7),
            expectedOffset: -5 * 3600,
            resolution: .exact
        ),
        ResolveCase(
            zone: "Europe/Berlin",
            local: .init(year: 2026, month: 1, day: 15, hour: 9),
            expectedUTC: utcInstant(2026, 1, 15, 8),
            expectedOffset: 3600,
            resolution: .exact
        ),
        ResolveCase(
            zone: "Australia/Lord_Howe",
            local: .init(year: 2026, month: 7, day: 1, hour: 9),
            expectedUTC: utcInstant(2026, 6, 30, 22, 30),
            expectedOffset: 10 * 3600 + 1800,
            resolution: .exact
        ),
        ResolveCase(
            zone: "Pacific/Apia",
            local: .init(year: 2011, month: 12, day: 29, hour: 8),
            expectedUTC: utcInstant(2011, 12, 29, 18),
            expectedOffset: -10 * 3600,
            resolution: .exact
        ),
        ResolveCase(
            zone: "Pacific/Apia",
            local: .init(year: 2011, month: 12, day: 31, hour: 8),
            expectedUTC: utcInstant(2011, 12, 30, 18),
            expectedOffset: 14 * 3600,
            resolution: .exact
        ),
    ]

    @Test("resolve maps local times to instants the RFC 5545 way", arguments: resolveCases)
    func resolve(_ c: ResolveCase) {
        let zone = TestZones.zone(c.zone)
        let r = ZoneMath.resolve(c.local, in: zone)
        #expect(isoZ(r.instant) == isoZ(c.expectedUTC))
        #expect(r.resolution == c.resolution)
        let back = ZoneMath.civil(r.instant, in: zone)
        #expect(back.offsetSeconds == c.expectedOffset)
        switch c.resolution {
        case .exact, .firstOfRepeated:
            #expect(back.local == c.local)
        case .shiftedForward(let seconds, _):
            #expect(back.local.naiveSeconds == c.local.naiveSeconds + seconds)
        }
    }

    @Test("Day numbers round-trip through civil dates")
    func civilRoundTrip() {
        #expect(ZoneMath.daysFromCivil(year: 1970, month: 1, day: 1) == 0)
        #expect(ZoneMath.daysFromCivil(year: 2000, month: 3, day: 1) == 11_017)
        #expect(ZoneMath.daysFromCivil(year: 1969, month: 12, day: 31) == -1)
        for days in stride(from: -800_000, through: 800_000, by: 997) {
            let c = ZoneMath.civilFromDays(days)
            #expect(ZoneMath.daysFromCivil(year: c.year, month: c.month, day: c.day) == days)
            #expect((1...ZoneMath.daysInMonth(year: c.year, month: c.month)).contains(c.day))
        }
    }

    @Test(
        "ISO weekday",
        arguments: [
            (2026, 3, 8, 7), (2011, 12, 30, 5), (2000, 2, 29, 2), (1970, 1, 1, 4), (1969, 12, 31, 3), (2026, 6, 1, 1),
        ]
    )
    func weekday(_ y: Int, _ m: Int, _ d: Int, _ expected: Int) {
        #expect(ZoneMath.isoWeekday(year: y, month: m, day: d) == expected)
    }

    @Test(
        "Offsets format as ±HH:MM",
        arguments: [
            (3600, "+01:00"), (-4 * 3600, "-04:00"), (10 * 3600 + 1800, "+10:30"), (14 * 3600, "+14:00"),
            (0, "+00:00"), (-(9 * 3600 + 1800), "-09:30"),
        ]
    )
    func formatOffset(_ seconds: Int, _ expected: String) {
        #expect(ZoneMath.formatOffset(seconds) == expected)
    }

    @Test("civil reads the wall clock and offset of an instant, truncating fractions")
    func civilOfInstant() {
        let r = ZoneMath.civil(utcInstant(2026, 3, 8, 7, 30).addingTimeInterval(0.75), in: TestZones.newYork)
        #expect(r.local == CivilDateTime(year: 2026, month: 3, day: 8, hour: 3, minute: 30))
        #expect(r.offsetSeconds == -4 * 3600)
        let before = ZoneMath.civil(utcInstant(1969, 12, 31, 23, 59, 59).addingTimeInterval(0.5), in: TestZones.utc)
        #expect(before.local == CivilDateTime(year: 1969, month: 12, day: 31, hour: 23, minute: 59, second: 59))
    }
}
