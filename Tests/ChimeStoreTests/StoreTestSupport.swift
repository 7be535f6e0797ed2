import ChimeCore
import ChimeStore
import Foundation

/// A fresh directory under the system's temporary directory; every test removes its own.
struct TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("chime-store-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    var path: String { url.path }

    /// A path inside the directory.
    func file(_ name: String) -> String { url.appendingPathComponent(name).path }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

enum Fixture {
    static let utc = TimeZone(identifier: "UTC")!
    static let berlin = TimeZone(identifier: "Europe/Berlin")!
    /// Monday 2026-01-05 09:00:00 UTC.
    static let t0 = Date(timeIntervalSince1970: 1_767_603_600)

    /// `seconds` after ``t0``.
    static func at(_ seconds: TimeInterval) -> Date { t0.addingTimeInterval(seconds) }

    static func once(_ id: String?, at seconds: TimeInterval, title: String? = nil) -> NewReminder {
        NewReminder(id: id, title: title ?? "Reminder \(id ?? "generated")", trigger: .once(at(seconds)))
    }
}

/// An instant given as a UTC wall-clock time.
func utcInstant(_ y: Int, _ mo: Int, _ d: Int, _ h: Int = 0, _ mi: Int = 0) -> Date {
    Date(timeIntervalSince1970: TimeInterval(CivilDateTime(year: y, month: mo, day: d, hour: h, minute: mi).naiveSeconds))
}

/// The mode bits (permissions) of the file at `path`, or nil when it does not exist.
func permissions(of path: String) -> mode_t? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    return info.st_mode & 0o777
}
