import ChimeCore
import Foundation

/// Helpers shared by the time-engine tests.
enum TestZones {
    static func zone(_ id: String) -> TimeZone {
        guard let z = TimeZone(identifier: id) else { fatalError("time zone \(id) missing on this machine") }
        return z
    }
    static let newYork = zone("America/New_York")
    static let berlin = zone("Europe/Berlin")
    static let lordHowe = zone("Australia/Lord_Howe")
    static let apia = zone("Pacific/Apia")
    static let utc = zone("UTC")
}

/// An instant given as a UTC wall-clock time.
func utcInstant(_ y: Int, _ mo: Int, _ d: Int, _ h: Int = 0, _ mi: Int = 0, _ s: Int = 0) -> Date {
    Date(timeIntervalSince1970: TimeInterval(CivilDateTime(year: y, month: mo, day: d, hour: h, minute: mi, second: s).naiveSeconds))
}

/// An instant given as a local wall-clock time (must be unambiguous).
func localInstant(_ zone: TimeZone, _ y: Int, _ mo: Int, _ d: Int, _ h: Int = 0, _ mi: Int = 0) -> Date {
    ZoneMath.resolve(CivilDateTime(year: y, month: mo, day: d, hour: h, minute: mi), in: zone).instant
}

func hm(_ s: String) -> LocalTime {
    guard let t = try? LocalTime.parse(s) else { fatalError("bad test time \(s)") }
    return t
}

func isoZ(_ date: Date) -> String {
    ZoneMath.civil(date, in: TestZones.utc).local.description + "Z"
}
