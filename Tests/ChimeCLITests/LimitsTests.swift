import Foundation
import Testing

/// The far future, a duration's limit, and doctor on a PostgreSQL store.
@Suite("Limits: the far future, a duration over 366 days, doctor on PostgreSQL")
struct LimitsTests {
    @Test("A one-shot in the year 2600 is listed by `next` and `show` (its instant was skipped past about 2550)")
    func farFutureOneShotIsPreviewed() throws {
        let sandbox = try Sandbox()
        #expect(try sandbox.chime("at", "2600-01-01T10:00:00Z", "Far", "--id", "far").status == 0)
        let next = try sandbox.chime("next", "far", "--json")
        #expect(next.status == 0, "\(next.stderr)")
        let occurrences = try #require(try jsonObject(next.stdout)["occurrences"] as? [[String: Any]])
        #expect(occurrences.map { $0["due"] as? String } == ["2600-01-01T10:00:00.000Z"])
        let show = try sandbox.chime("show", "far")
        #expect(show.status == 0, "\(show.stderr)")
        #expect(show.stdout.contains("2600-01-01"), "\(show.stdout)")
    }

    @Test("A duration past 366 days names the limit")
    func durationLimitIsNamed() throws {
        let sandbox = try Sandbox()
        let result = try sandbox.chime("every", "100000d", "Far")
        #expect(result.status == 64)
        #expect(result.stderr == "chime: invalid duration '100000d': expected at most 366 days (52w2d or 366d)\n")
        #expect(try sandbox.chime("in", "367d", "Far").stderr.contains("at most 366 days"))
    }

    @Test("doctor on a PostgreSQL store that cannot be reached reports it, exit 5, as for a SQLite store that cannot be used")
    func doctorOnUnreachablePostgres() throws {
        let sandbox = try Sandbox()
        let url = "postgresql:///chime?host=" + sandbox.directory.path
        let doctor = try sandbox.chime("doctor", "--store", url)
        #expect(doctor.status == 5, "\(doctor)")
        #expect(doctor.stdout.contains("Store:                postgresql:///chime?host="), "\(doctor.stdout)")
        #expect(doctor.stdout.contains("(PostgreSQL): cannot reach the PostgreSQL store"), "\(doctor.stdout)")
        #expect(!doctor.stdout.contains("SQLite store only") && !doctor.stderr.contains("SQLite store only"), "\(doctor)")
    }
}
