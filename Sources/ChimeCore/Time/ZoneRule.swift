import Foundation

/// The zone a recurring rule's local times are read in.
public enum ZoneRule: Sendable, Hashable, Codable {
    /// The system zone at evaluation time: "08:00 stays 08:00" after travel.
    case floating
    /// A fixed IANA zone identifier.
    case fixed(String)

    /// What a zone may be named, for error messages.
    public static let expected =
        "an IANA zone name from tzdata such as Europe/Berlin, America/New_York or UTC (for a fixed offset, Etc/GMT-5 is UTC+5: the sign is inverted)"

    /// An IANA identifier such as "Europe/Berlin". "floating" and "local" (any case) give `.floating`.
    ///
    /// Only zones tzdata has are accepted (Foundation's known zones, or a zone file under
    /// /usr/share/zoneinfo): Foundation alone would also read "GMT+5" as UTC+5, the opposite
    /// sign of tzdata's "Etc/GMT+5", and "CEST" or "UTC+1" in ways people do not expect.
    public static func parse(_ identifier: String) throws(ChimeError) -> ZoneRule {
        let s = identifier.trimmingWhitespace()
        if ["floating", "local"].contains(s.lowercased()) { return .floating }
        guard isInTzdata(s), let zone = TimeZone(identifier: s) else {
            throw ChimeError(.usage, "unknown time zone '\(identifier)': expected \(expected)")
        }
        return .fixed(zone.identifier)
    }

    /// Foundation's known zones, read once.
    private static let known = Set(TimeZone.knownTimeZoneIdentifiers)

    /// Whether `name` is a zone of tzdata: one of Foundation's known zones, or the name of a
    /// TZif file under /usr/share/zoneinfo (not `posix/` or `right/`, no `.` or `..` parts).
    static func isInTzdata(_ name: String, directory: String = "/usr/share/zoneinfo") -> Bool {
        if known.contains(name) { return true }
        let parts = name.split(separator: "/", omittingEmptySubsequences: false)
        guard !parts.isEmpty, parts.count <= 3, parts[0] != "posix", parts[0] != "right" else { return false }
        for part in parts {
            guard !part.isEmpty, part.first != ".", part.first != "-",
                part.utf8.allSatisfy({ byte in
                    (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                        || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+")
                })
            else { return false }
        }
        // A zone file starts with the magic "TZif" (zone.tab, tzdata.zi and leapseconds do not).
        guard let handle = FileHandle(forReadingAtPath: directory + "/" + name) else { return false }
        defer { try? handle.close() }
        return (try? handle.read(upToCount: 4)) == Data("TZif".utf8)
    }

    /// The zone to compute in. A fixed identifier this system no longer knows falls back to `system`.
    public func resolve(system: TimeZone) -> TimeZone {
        switch self {
        case .floating: system
        case .fixed(let id): TimeZone(identifier: id) ?? system
        }
    }
}
