import ChimeCore
import ChimeDBus
import Foundation
import Testing

/// When the carry-over of GNOME notification settings reads nothing (the end-to-end tests, with
/// real GSettings, are in ChimeCLITests).
struct NotificationSettingsMigrationGuardTests {
    @Test func theMarkerIsInChimesStateDirectory() {
        #expect(
            NotificationSettingsMigration.markerPath(environment: ["XDG_STATE_HOME": "/s", "HOME": "/h"])
                == "/s/chime/notification-settings-carried-over"
        )
        #expect(
            NotificationSettingsMigration.markerPath(environment: ["XDG_STATE_HOME": "relative", "HOME": "/h"])
                == "/h/.local/state/chime/notification-settings-carried-over"
        )
    }

    /// GNOME's dconf backend writes through the session bus: without one nothing would be kept,
    /// so nothing is read, and nothing marked (the next start tries again).
    @Test func aGNOMESessionWithoutABusIsLeftForLater() throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("chime-carry-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: state) }
        let environment = ["XDG_CURRENT_DESKTOP": "ubuntu:GNOME", "XDG_STATE_HOME": state.path, "XDG_RUNTIME_DIR": state.path]
        #expect(NotificationSettingsMigration.runOnce(environment: environment) == .notApplicable)
        #expect(!FileManager.default.fileExists(atPath: NotificationSettingsMigration.markerPath(environment: environment)))
    }

    @Test func aMarkerMeansItRanBefore() throws {
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("chime-carry-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: state) }
        let environment = ["XDG_STATE_HOME": state.path, "GSETTINGS_BACKEND": "keyfile"]
        let marker = NotificationSettingsMigration.markerPath(environment: environment)
        try FileManager.default.createDirectory(atPath: state.path + "/chime", withIntermediateDirectories: true)
        try "done\n".write(toFile: marker, atomically: true, encoding: .utf8)
        #expect(NotificationSettingsMigration.runOnce(environment: environment) == .ranBefore)
    }
}
