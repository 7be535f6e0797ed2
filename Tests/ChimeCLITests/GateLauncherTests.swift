import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `chime gate add`, `list`, `doctor`, `remove` and `off` on a sandbox's launchers: what they say,
/// and that commands run at once never lose a person's entry.
@Suite struct GateLauncherTests {
    static let own = "[Desktop Entry]\nType=Application\nName=Mine\nExec=mine %U\n# mine\n"

    /// The sandbox's data home, with `applications/` made.
    static func applications(_ sandbox: borrowing Sandbox) throws -> String {
        let path = sandbox.environment["XDG_DATA_HOME"]! + "/applications"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func offWithEveryGateRefusedSaysOnlyWhy() throws {
        // Given a gated program whose override the person edited
        let sandbox = try Sandbox()
        let mine = try Self.applications(sandbox) + "/mine.desktop"
        try Self.own.write(toFile: mine, atomically: true, encoding: .utf8)
        #expect(try sandbox.chime("gate", "add", "mine").status == 0)
        try (String(contentsOfFile: mine, encoding: .utf8) + "Keywords=edited;\n").write(toFile: mine, atomically: true, encoding: .utf8)

        // When every gate is to be removed, then off refuses it, and does not say none was gated
        let off = try sandbox.chime("gate", "off")
        #expect(off.status == 4)
        #expect(!off.stdout.contains("No program was gated"), "\(off.stdout)")
        #expect(off.stderr.contains("mine.desktop") && off.stderr.contains("edited"), "\(off.stderr)")
        try FileManager.default.removeItem(atPath: mine)
        let again = try sandbox.chime("gate", "off")
        #expect(again.status == 0)
        #expect(again.stdout == "Un-gated mine.desktop: its launcher is as it was.\n")
        #expect(try String(contentsOfFile: mine, encoding: .utf8) == Self.own)
        #expect(try sandbox.chime("gate", "off").stdout == "No program was gated.\n")
    }

    @Test func doctorListsEveryGatedProgram() throws {
        // Given one program gated, as it should be
        let sandbox = try Sandbox()
        try Self.own.write(toFile: try Self.applications(sandbox) + "/mine.desktop", atomically: true, encoding: .utf8)
        #expect(try sandbox.chime("gate", "add", "mine").status == 0)

        // Then doctor names it among the gated programs
        let doctor = try sandbox.chime("gate", "doctor")
        #expect(!doctor.stdout.contains("Gated programs: none"), "\(doctor.stdout)")
        #expect(doctor.stdout.hasPrefix("Gated programs:\n  mine.desktop\n"), "\(doctor.stdout)")
        let json = try jsonObject(try sandbox.chime("gate", "doctor", "--json").stdout)
        #expect((json["programs"] as? [[String: Any]])?.map { $0["status"] as? String } == ["ok"])
    }

    @Test func doctorAndRemoveAtOnceNeverLoseThePersonsEntry() throws {
        // Given the person's own entry, gated, its override deleted (the gate stale)
        let sandbox = try Sandbox()
        let mine = try Self.applications(sandbox) + "/mine.desktop"
        for round in 0..<10 {
            try Self.own.write(toFile: mine, atomically: true, encoding: .utf8)
            #expect(try sandbox.chime("gate", "add", "mine").status == 0)
            try FileManager.default.removeItem(atPath: mine)

            // When doctor and remove run at once
            let doctor = ChimeExecutable.process(["gate", "doctor"], environment: sandbox.environment)
            let remove = ChimeExecutable.process(["gate", "remove", "mine"], environment: sandbox.environment)
            try doctor.0.run()
            try remove.0.run()
            let removed = String(decoding: remove.out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            _ = doctor.out.fileHandleForReading.readDataToEndOfFile()
            doctor.0.waitUntilExit()
            remove.0.waitUntilExit()

            // Then a remove that says the launcher is as it was is right, and off after it puts
            // the person's bytes back
            if remove.0.terminationStatus == 0 {
                #expect(removed == "Un-gated mine.desktop: its launcher is as it was.\n")
                #expect(try String(contentsOfFile: mine, encoding: .utf8) == Self.own, "round \(round)")
            }
            #expect(try sandbox.chime("gate", "off").status == 0, "round \(round)")
            #expect(try String(contentsOfFile: mine, encoding: .utf8) == Self.own, "round \(round)")
        }
    }

    @Test func doctorRemoveAddAndOffAtOnceAsProcessesNeverLoseThePersonsEntry() throws {
        // Given the person's own entry (mode 0640), gated, its override deleted
        let sandbox = try Sandbox()
        let mine = try Self.applications(sandbox) + "/mine.desktop"
        try Self.own.write(toFile: mine, atomically: true, encoding: .utf8)
        chmod(mine, 0o640)
        for round in 0..<10 {
            #expect(try sandbox.chime("gate", "add", "mine").status == 0, "round \(round)")
            try FileManager.default.removeItem(atPath: mine)

            // When doctor, remove, add and off run at once, as four chime processes
            let commands = [["gate", "doctor"], ["gate", "remove", "mine"], ["gate", "add", "mine"], ["gate", "off"]]
            let processes = commands.map { ChimeExecutable.process($0, environment: sandbox.environment) }
            for process in processes { try process.0.run() }
            var errors: [String] = []
            for process in processes {
                _ = process.out.fileHandleForReading.readDataToEndOfFile()
                errors.append(String(decoding: process.err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
                process.0.waitUntilExit()
            }

            // Then none took a file for an edit, and off puts back the person's bytes and mode
            #expect(!errors.joined().contains("edited"), "round \(round): \(errors)")
            #expect(try sandbox.chime("gate", "off").status == 0, "round \(round)")
            #expect(try String(contentsOfFile: mine, encoding: .utf8) == Self.own, "round \(round)")
            let mode = try FileManager.default.attributesOfItem(atPath: mine)[.posixPermissions] as? Int
            #expect(mode == 0o640, "round \(round)")
        }
    }
}
