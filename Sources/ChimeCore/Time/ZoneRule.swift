import Foundation

/// The zone a recurring rule's local times are read in.
public enum ZoneRule: Sendable, Hashable, Codable {
    /// The system zone at evaluation time: "08:00 stays 08:00" after travel.
    case floating
    /// A fixed IANA zone identifier.
    case fixed(String)

    /// An IANA identifier such as "Europe/Berlin". "floating" and "local" (any case) give `.floating`.
    public static func parse(_ identifier: String) throws(ChimeError) -> ZoneRule {
        let s = identifier.trimmingWhitespace()
        if ["floating", "local"].contains(s.lowercased()) { return .floating }
        guard !s.isEmpty, let zone = TimeZone(identifier: s) else {
            throw ChimeError(.usage, "unknown time zone '\(identifier)': expected an IANA name such as Europe/Berlin or America/New_York")
        }
        return .fixed(zone.identifier)
    }

    /// The zone to compute in. A fixed identifier this system no longer knows falls back to `system`.
    public func resolve(system: TimeZone) -> TimeZone {
        switch self {
        case .floating: system
        case .fixed(let id): TimeZone(identifier: id) ?? system
        }
    }
}
