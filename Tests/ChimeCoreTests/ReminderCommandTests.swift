import ChimeCore
import Foundation
import Testing

/// `--exec` and `--exec-shell`: what is accepted, how it is stored, and what is refused.
struct ReminderCommandTests {
    @Test func storedFormReadsBackTheSameCommand() throws {
        for command in [
            ReminderCommand(.argv(["rsync", "-a", "my files/", "host:backup"]), timeout: .seconds(90)),
            ReminderCommand(.shell("make -C ~/site && echo \"done\" | tee log")),
        ] {
            #expect(ReminderCommand(stored: command.stored) == command)
        }
        #expect(ReminderCommand(stored: "not json") == nil)
        #expect(ReminderCommand(stored: #"{"argv":[]}"#) == nil)
    }

    @Test func aShellCommandRunsThroughBinSh() {
        let command = ReminderCommand(.shell("echo $HOME"))
        #expect(command.argv == ["/bin/sh", "-c", "echo $HOME"])
        #expect(command.isShell)
        #expect(ReminderCommand(.argv(["echo", "a b", "it's"])).display == "echo 'a b' 'it'\\''s'")
    }

    @Test func theProgramIsLookedUpInPathAtScheduleTime() throws {
        let found = try ReminderCommand(.argv(["sh", "-c", "true"])).validated(searchPath: "/nonexistent:/bin:/usr/bin")
        #expect(found.argv[0] == "sh")
        #expect(ReminderCommand.resolve("sh", path: "/nonexistent:/bin") == "/bin/sh")
        #expect(ReminderCommand.resolve("/etc/passwd", path: "/bin") == nil)
        #expect(ReminderCommand.resolve("/bin", path: "/bin") == nil)
        #expect(throws: ChimeError.self) { try ReminderCommand(.argv(["no-such-program-chime"])).validated(searchPath: "/bin:/usr/bin") }
    }

    @Test(arguments: [
        (ReminderCommand(.argv([])), "missing command after --exec"),
        (ReminderCommand(.argv([""])), "missing command after --exec"),
        (ReminderCommand(.shell("  ")), "empty --exec-shell"),
        (ReminderCommand(.argv(["no-such-program-chime"])), "program not found: 'no-such-program-chime'"),
        (ReminderCommand(.argv(["/bin/sh", "a\u{0}b"])), "holds a NUL byte"),
        (ReminderCommand(.shell("true"), timeout: .seconds(0)), "invalid --exec-timeout"),
        (ReminderCommand(.shell("true"), timeout: .seconds(86_401)), "invalid --exec-timeout"),
    ])
    func badCommandsAreRefusedInOneLine(command: ReminderCommand, message: String) {
        do {
            _ = try command.validated(searchPath: "/bin:/usr/bin")
            Issue.record("accepted \(command)")
        } catch {
            #expect(error.code == .usage)
            #expect(error.message.contains(message), "\(error.message)")
            #expect(!error.message.contains("\n"))
        }
    }

    @Test func aTimeLimitIsADurationFromOneSecondToOneDay() throws {
        #expect(try ReminderCommand.timeoutRule.seconds("90s") == 90)
        #expect(try ReminderCommand.timeoutRule.seconds("1d") == 86_400)
        #expect(throws: ChimeError.self) { try ReminderCommand.timeoutRule.seconds("0s") }
        #expect(throws: ChimeError.self) { try ReminderCommand.timeoutRule.seconds("10") }
    }
}
