import Foundation
import Testing

/// What a start of chime loads (issue 19): libnotify and GLib are opened with dlopen by the
/// commands that show or close alerts, not mapped by the dynamic loader at every start.
struct StartupTests {
    @Test(arguments: [["--version"], ["list"], ["in", "5m", "tea"], ["cancel", "nothing-here"]])
    func commandsThatShowNoAlertLoadNeitherLibnotifyNorGLib(arguments: [String]) throws {
        let sandbox = try Sandbox()
        var environment = sandbox.environment
        environment["LD_DEBUG"] = "libs"  // the loader names each library it maps, on stderr
        let result = try runProcess(ChimeExecutable.url.path, arguments, environment: environment, timeout: 30)
        #expect(result.status == 0 || arguments[0] == "cancel", "\(result.stderr.suffix(500))")
        #expect(result.stderr.contains("libsqlite3.so.0"), "the loader's report is missing")
        for library in ["libnotify", "libglib-2.0", "libgio-2.0", "libgdk_pixbuf"] {
            #expect(!result.stderr.contains(library), "chime \(arguments.joined(separator: " ")) loaded \(library)")
        }
    }
}
