import ChimeTesting
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Shell completion with the real shells: each test generates the scripts from the built chime
/// (`chime --generate-completion-script SHELL`), loads them into bash, zsh and fish, and
/// completes command lines against a store of its own, made with real chime commands.
///
/// - bash: the script's function is called as bash's `complete -F` calls it, with COMP_WORDS,
///   COMP_CWORD, COMP_LINE and COMP_POINT set; COMPREPLY is what bash would offer.
/// - zsh: an interactive zsh in a pseudo-terminal (zpty) with `compinit` gets the line and a TAB;
///   its `compadd` writes down the matches it is given (and what is shown beside them).
/// - fish: `complete -C LINE`. fish 3's `commandline --cursor` refuses to run inside
///   `complete -C` without a terminal ("Can not set commandline in non-interactive mode"), and the
///   script asks it for the cursor's place in the word: for the values (not the subcommand
///   names) the test's fish answers that one question from `commandline -ct` instead.
///
/// Every process is polled with a bound, never waited for on Swift's small cooperative pool.
@Suite("Shell completion: bash, zsh and fish offer subcommands, reminder ids, medications and gated programs")
struct CompletionTests {
    // MARK: The tests

    @Test(
        "chime --generate-completion-script writes each shell's script, calling back ---completion for the ids",
        arguments: ["bash", "zsh", "fish"]
    )
    func scriptIsGenerated(shell: String) async throws {
        let sandbox = try Sandbox()
        let scratch = try Self.scratch(sandbox)
        let result = try await Self.run(
            ChimeExecutable.url.path,
            ["--generate-completion-script", shell],
            environment: sandbox.environment,
            scratch: scratch
        )
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
        // The callback for `chime cancel ID…`: the dynamic part.
        #expect(result.stdout.contains("---completion cancel -- positional@0"))
        #expect(result.stdout.contains("---completion med show -- positional@0"))
        #expect(result.stdout.contains("---completion gate remove -- positional@0"))
    }

    @Test("bash: subcommands, the pending reminders' ids, medications, gated and gateable programs, enumerated values")
    func bashCompletes() async throws {
        let sandbox = try Self.sandbox()
        let scratch = try Self.scratch(sandbox)
        try await Self.populate(sandbox, scratch: scratch)
        let offered = try await Self.bash(
            [
                "chime ca", "chime cancel ", "chime cancel s", "chime med show ", "chime dose take ", "chime gate remove ",
                "chime gate add ", "chime in 5m Tea --urgency ", "chime quiet ", "chime quiet doses ",
            ],
            sandbox,
            scratch: scratch
        )
        #expect(offered["chime ca"] == ["cancel"])
        // The plain reminders; a dose's alert is not cancelled (chime dose skip), so not offered.
        #expect(Set(offered["chime cancel "] ?? []) == ["tea", "standup"])
        #expect(offered["chime cancel s"] == ["standup"])
        #expect(Set(offered["chime med show "] ?? []) == ["Aspirin", "Vitamin D"])
        #expect(Set(offered["chime dose take "] ?? []) == ["Aspirin", "Vitamin D"])
        #expect(offered["chime gate remove "] == ["firefox-esr"])
        // Installed and not gated yet.
        #expect(offered["chime gate add "] == ["org.example.Chess"])
        #expect(offered["chime in 5m Tea --urgency "] == ["low", "normal", "critical"])
        #expect(offered["chime quiet "] == ["status", "off", "until", "hours", "doses", "focus-hold"])
        #expect(offered["chime quiet doses "] == ["come", "wait"])
    }

    @Test("bash: the store named by --store on the line is read, not $CHIME_STORE's")
    func bashReadsTheStoreOnTheLine() async throws {
        let sandbox = try Self.sandbox()
        let scratch = try Self.scratch(sandbox)
        try await Self.populate(sandbox, scratch: scratch)
        let other = sandbox.directory.appendingPathComponent("other.sqlite").path
        let made = try await Self.chime(["in", "2h", "Elsewhere", "--id", "elsewhere", "--store", other], sandbox, scratch: scratch)
        #expect(made.status == 0, "\(made.stderr)")
        let missing = sandbox.directory.appendingPathComponent("missing.sqlite").path
        let offered = try await Self.bash(
            ["chime cancel --store \(other) ", "chime cancel --store=\(other) ", "chime cancel --store \(missing) "],
            sandbox,
            scratch: scratch
        )
        #expect(offered["chime cancel --store \(other) "] == ["elsewhere"])
        #expect(offered["chime cancel --store=\(other) "] == ["elsewhere"])
        #expect(offered["chime cancel --store \(missing) "] == [])
        #expect(!FileManager.default.fileExists(atPath: missing))
    }

    @Test("zsh: the script loads under compinit and registers _chime; a TAB offers the ids with their titles")
    func zshCompletes() async throws {
        let sandbox = try Self.sandbox()
        let scratch = try Self.scratch(sandbox)
        try await Self.populate(sandbox, scratch: scratch)
        let (registered, offered, shown) = try await Self.zsh(
            ["chime ca", "chime cancel ", "chime med show ", "chime gate remove "],
            sandbox,
            scratch: scratch
        )
        #expect(registered == "_chime")
        #expect(offered["chime ca"] == ["cancel"])
        #expect(Set(offered["chime cancel "] ?? []) == ["tea", "standup"])
        #expect(shown["chime cancel "]?.contains { $0.contains("Tea time") } == true, "\(shown)")
        // (As zsh inserts it: the space quoted.)
        #expect(Set(offered["chime med show "] ?? []) == ["Aspirin", "Vitamin\\ D"])
        #expect(offered["chime gate remove "] == ["firefox-esr"])
    }

    @Test("fish: complete -C offers the subcommands, and the ids, medications and programs with their descriptions")
    func fishCompletes() async throws {
        let sandbox = try Self.sandbox()
        let scratch = try Self.scratch(sandbox)
        try await Self.populate(sandbox, scratch: scratch)
        let plain = try await Self.fish(["chime ca"], sandbox, scratch: scratch, cursorShim: false)
        #expect(plain["chime ca"] == ["cancel\tCancel pending reminders by identifier."])
        let offered = try await Self.fish(
            ["chime cancel ", "chime med show ", "chime gate remove "],
            sandbox,
            scratch: scratch,
            cursorShim: true
        )
        #expect(Set(offered["chime cancel "] ?? []) == ["tea\tTea time", "standup\tStand up"])
        #expect(Set(offered["chime med show "] ?? []) == ["Aspirin\t100 mg", "Vitamin D\t1000 IU"])
        #expect(offered["chime gate remove "] == ["firefox-esr\tFirefox ESR"])
    }

    @Test("A medication named with a quote, $(…) and a colon comes back as it is in each shell, and nothing in it runs")
    func hostileNamesComeBackAsTheyAre() async throws {
        let sandbox = try Self.sandbox()
        let scratch = try Self.scratch(sandbox)
        let marker = sandbox.directory.appendingPathComponent("ran").path
        // (bash's compgen -W expands its words: unquoted, $(…) would run and the quote would go.)
        let name = "Tom's $(touch \(marker)) a:b"
        let added = try await Self.chime(["med", "add", name, "--amount", "1", "--unit", "mg", "--at", "10:00"], sandbox, scratch: scratch)
        try #require(added.status == 0, "\(added.stderr)")

        let bash = try await Self.bash(["chime med show T"], sandbox, scratch: scratch)
        let (_, zsh, _) = try await Self.zsh(["chime med show T"], sandbox, scratch: scratch)
        let fish = try await Self.fish(["chime med show T"], sandbox, scratch: scratch, cursorShim: true)

        #expect(bash["chime med show T"] == [name])
        // (As zsh inserts it, quoted for the command line.)
        #expect(zsh["chime med show T"] == [#"Tom\'s\ \$\(touch\ "# + marker + #"\)\ a:b"#])
        #expect(fish["chime med show T"] == [name + "\t1 mg"])
        #expect(!FileManager.default.fileExists(atPath: marker))
    }

    @Test("A fresh home with no store: subcommands still complete, values offer nothing, and no file is made")
    func freshHomeCreatesNothing() async throws {
        // No CHIME_STORE: the default store, $XDG_DATA_HOME/chime/chime.sqlite, which is not there.
        let sandbox = try Self.sandbox(extra: ["CHIME_STORE": ""])
        let scratch = try Self.scratch(sandbox)
        let scripts = try await Self.scripts(sandbox, scratch: scratch)
        // (fish makes its own directories there: its universal variables, its history.)
        let home = try #require(sandbox.environment["HOME"])
        for directory in [".config", ".local/share"] {
            try FileManager.default.createDirectory(atPath: home + "/" + directory, withIntermediateDirectories: true)
        }
        let before = try Self.tree(sandbox.directory, leaving: scratch)
        let lines = ["chime ca", "chime cancel ", "chime snooze ", "chime show ", "chime med show ", "chime gate remove "]

        let bash = try await Self.bash(lines, sandbox, scratch: scratch, scripts: scripts)
        let (registered, zsh, _) = try await Self.zsh(lines, sandbox, scratch: scratch, scripts: scripts)
        let fish = try await Self.fish(lines, sandbox, scratch: scratch, cursorShim: true, scripts: scripts)

        #expect(bash["chime ca"] == ["cancel"])
        #expect(zsh["chime ca"] == ["cancel"])
        #expect(fish["chime ca"]?.map { line in String(line.prefix { $0 != "\t" }) } == ["cancel"])
        #expect(registered == "_chime")
        for line in lines.dropFirst() {
            #expect(bash[line] == [], "bash, \(line)")
            #expect(zsh[line] == [], "zsh, \(line)")
            #expect(fish[line] == [], "fish, \(line)")
        }
        // fish keeps its own files in the home (its universal variables, its history
        // directory): they are fish's, not chime's.
        let after = try Self.tree(sandbox.directory, leaving: scratch).filter { !$0.contains("/fish") }
        #expect(after == before.filter { !$0.contains("/fish") })
        let data = try #require(sandbox.environment["XDG_DATA_HOME"])
        #expect(!FileManager.default.fileExists(atPath: data + "/chime"))
    }

    @Test("A damaged store, or one another process holds locked, offers nothing at once, says nothing, and stays as it was")
    func unreadableStoresOfferNothing() async throws {
        let sandbox = try Self.sandbox()
        let scratch = try Self.scratch(sandbox)
        try await Self.populate(sandbox, scratch: scratch)
        let damaged = sandbox.directory.appendingPathComponent("damaged.sqlite")
        let junk = Data(repeating: 0x5a, count: 8192)
        try junk.write(to: damaged)

        // A real lock: an SQLite connection in exclusive locking mode holds the store's file
        // locked (no other process can read it) until it is stopped.
        let python = try #require(Self.program("python3"))
        let holder = try Spawn.start(
            python,
            ["-c", Self.lockHolder, sandbox.store],
            environment: sandbox.environment,
            output: scratch.appendingPathComponent("lock.out").path
        ).get()
        defer {
            kill(holder, SIGKILL)
            _ = Spawn.wait(holder)
        }
        var locked = false
        for _ in 0..<500 where !locked {
            locked = (try? String(contentsOf: scratch.appendingPathComponent("lock.out"), encoding: .utf8))?.contains("locked") == true
            if !locked { try await Task.sleep(for: .milliseconds(20)) }
        }
        try #require(locked, "the lock holder did not take the lock")

        for (store, name) in [(damaged.path, "damaged"), (sandbox.store, "locked")] {
            var environment = sandbox.environment
            environment["SAP_SHELL"] = "bash"
            // Timed by a shell around chime rather than by this test: the test's own wait for the
            // process can be held up by the other tests running beside it (6 s once, on 2 cores,
            // for a completion that takes 20 ms).
            let elapsedFile = scratch.appendingPathComponent("elapsed-\(name)")
            environment["CHIME_TEST_ELAPSED"] = elapsedFile.path
            let result = try await Self.run(
                "/bin/sh",
                [
                    "-c",
                    #"s=$(date +%s%N); "$0" "$@"; r=$?; e=$(date +%s%N); "#
                        + #"echo $(((e - s) / 1000000)) > "$CHIME_TEST_ELAPSED"; exit $r"#,
                    ChimeExecutable.url.path,
                    "---completion", "cancel", "--", "positional@0", "4", "0", "chime", "cancel", "--store", store, "",
                ],
                environment: environment,
                scratch: scratch
            )
            let milliseconds = try #require(
                Double(String(contentsOf: elapsedFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)),
                "\(name): no time written"
            )
            let elapsed = milliseconds / 1000
            #expect(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "\(name): \(result.stdout)")
            #expect(result.stderr.isEmpty, "\(name): \(result.stderr)")
            // Within its budget (1 s) and the start of a process on a loaded machine; the
            // store's usual 5 s wait for a lock would fail this.
            #expect(elapsed < 4, "\(name): \(elapsed) s")
        }
        #expect(try Data(contentsOf: damaged) == junk)
    }

    // MARK: Shells

    /// Each line's COMPREPLY, from bash.
    static func bash(
        _ lines: [String],
        _ sandbox: borrowing Sandbox,
        scratch: URL,
        scripts: [String: String]? = nil
    ) async throws -> [String: [String]] {
        let scripts = if let scripts { scripts } else { try await Self.scripts(sandbox, scratch: scratch) }
        let driver = scratch.appendingPathComponent("drive.bash")
        try Self.bashDriver.write(to: driver, atomically: true, encoding: .utf8)
        let bash = try #require(program("bash"))
        let result = try await run(
            bash,
            ["--norc", "--noprofile", driver.path, try #require(scripts["bash"])] + lines,
            environment: sandbox.environment,
            scratch: scratch
        )
        #expect(result.status == 0 && result.stderr.isEmpty, "bash: \(result.stderr)")
        return sections(result.stdout)
    }

    /// Who completes `chime` after compinit, each line's matches, and what zsh shows beside them.
    static func zsh(
        _ lines: [String],
        _ sandbox: borrowing Sandbox,
        scratch: URL,
        scripts: [String: String]? = nil
    ) async throws -> (registered: String, offered: [String: [String]], shown: [String: [String]]) {
        let scripts = if let scripts { scripts } else { try await Self.scripts(sandbox, scratch: scratch) }
        let driver = scratch.appendingPathComponent("drive.zsh")
        try Self.zshDriver.write(to: driver, atomically: true, encoding: .utf8)
        let zsh = try #require(program("zsh"))
        let output = scratch.appendingPathComponent("zsh-\(UUID().uuidString).out").path
        let dump = scratch.appendingPathComponent("zcompdump").path
        let result = try await run(
            zsh,
            ["-f", driver.path, try #require(scripts["zsh"]), dump, output] + lines,
            environment: sandbox.environment,
            scratch: scratch
        )
        #expect(result.status == 0, "zsh: \(result.stdout) \(result.stderr)")
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        let registered = text.split(separator: "\n").first { $0.hasPrefix("== compdef ") }.map { String($0.dropFirst("== compdef ".count)) }
        // "~ " marks what zsh shows beside the matches (one line each after the first).
        var offered: [String: [String]] = [:]
        var shown: [String: [String]] = [:]
        for (line, words) in sections(text) where !line.hasPrefix("compdef") {
            var inDescriptions = false
            for word in words {
                if word.hasPrefix("~ ") { inDescriptions = true }
                if inDescriptions {
                    shown[line, default: []].append(word.hasPrefix("~ ") ? String(word.dropFirst(2)) : word)
                } else {
                    offered[line, default: []].append(word)
                }
            }
            offered[line, default: []] += []
        }
        return (registered ?? "", offered, shown)
    }

    /// Each line's candidates from fish's `complete -C` (VALUE, a tab and the description).
    /// - Parameter cursorShim: answer the script's question for the cursor's place in the word
    ///   from `commandline -ct` (see the suite's documentation).
    static func fish(
        _ lines: [String],
        _ sandbox: borrowing Sandbox,
        scratch: URL,
        cursorShim: Bool,
        scripts: [String: String]? = nil
    ) async throws -> [String: [String]] {
        let scripts = if let scripts { scripts } else { try await Self.scripts(sandbox, scratch: scratch) }
        let fish = try #require(program("fish"))
        var command = "source \(try #require(scripts["fish"]))\n"
        if cursorShim { command += Self.fishCursorShim }
        for line in lines {
            command += "echo '== \(line)'\ncomplete -C '\(line)'\n"
        }
        let result = try await run(fish, ["--no-config", "-c", command], environment: sandbox.environment, scratch: scratch)
        #expect(result.status == 0 && result.stderr.isEmpty, "fish: \(result.stderr)")
        return sections(result.stdout)
    }

    /// Lines grouped under the `== LINE` line before them.
    static func sections(_ text: String) -> [String: [String]] {
        var found: [String: [String]] = [:]
        var current: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init) {
            if line.hasPrefix("== ") {
                current = String(line.dropFirst(3))
                found[current!, default: []] += []
            } else if let current {
                found[current, default: []].append(line)
            }
        }
        return found
    }

    /// Calls the script's function as bash's `complete -F` does, for each line (its words split
    /// at spaces; a line ending in a space completes a new, empty word), printing `== LINE` then COMPREPLY.
    static let bashDriver = #"""
        source "$1"; shift
        spec=$(complete -p chime) || exit 3
        function=${spec##*-F }; function=${function%% *}
        for line in "$@"; do
            COMP_LINE=$line
            COMP_POINT=${#line}
            read -ra COMP_WORDS <<< "$line"
            [[ $line == *" " ]] && COMP_WORDS+=("")
            COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
            COMPREPLY=()
            "$function" chime "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
            printf '== %s\n' "$line"
            [[ ${#COMPREPLY[@]} -eq 0 ]] || printf '%s\n' "${COMPREPLY[@]}"
        done
        """#

    /// `zsh -f drive.zsh SCRIPT DUMP OUT LINE…`: starts an interactive zsh in a pseudo-terminal
    /// (zpty), runs compinit (its dump file DUMP) and sources SCRIPT there, then types each LINE
    /// and a TAB. Its `compadd` appends the matches it is given to OUT under `== LINE`, and what is
    /// shown beside them after `~ `; `== compdef NAME` says which function completes `chime`.
    static let zshDriver = #"""
        zmodload zsh/zpty || exit 3
        script=$1 dump=$2 out=$3
        shift 3
        cat > $out.rc <<RC
        PS1='' PROMPT='' RPROMPT=''
        autoload -U compinit && compinit -u -d ${(q)dump}
        source ${(q)script}
        bindkey '^I' complete-word
        compadd() {
            if [[ \${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "\$@"; return; fi
            local -a __hits
            builtin compadd -A __hits "\$@"
            (( \$#__hits )) && print -rl -- \$__hits >> ${(q)out}
            local -i d=\${@[(i)-d]}
            (( \$#__hits && d < \$# )) && print -rl -- "~ "\${(@P)\${@[d+1]}} >> ${(q)out}
            builtin compadd "\$@"
        }
        __chime_test_done() { print -r -- '<<done>>' >> ${(q)out}; compstate[insert]=''; compstate[list]='' }
        print -r -- "== compdef \${_comps[chime]}" >> ${(q)out}
        print -r -- '<<ready>>' >> ${(q)out}
        RC
        : > $out
        zpty z zsh -f -i
        zpty -w z "source ${(q)out}.rc"
        # Waits (at most 20 s) until OUT holds the marker $1 $2 times.
        await() {
            local -i n=0
            until (( $(grep -c -- "$1" $out) >= $2 )); do
                (( ++n > 400 )) && return 1
                sleep 0.05
            done
        }
        await '<<ready>>' 1 || { print -u2 "zsh did not start"; zpty -d z; exit 4 }
        integer i=0
        for line in "$@"; do
            (( i++ ))
            print -r -- "== $line" >> $out
            # (comppostfuncs is emptied after each completion.)
            zpty -w z 'comppostfuncs=(__chime_test_done)'
            zpty -w -n z "$line"$'\t'
            await '<<done>>' $i || { print -u2 "no completion for: $line"; zpty -d z; exit 5 }
            zpty -w -n z $'\C-u'
        done
        zpty -d z
        grep -v -e '^<<done>>$' -e '^<<ready>>$' $out > $out.tmp && mv $out.tmp $out
        """#

    /// fish 3 refuses `commandline --cursor` inside `complete -C`: the script's `-tC` question
    /// (the cursor's place in the current word) is answered from the word itself.
    static let fishCursorShim = #"""
        functions -c __chime_tokens __chime_tokens_generated
        function __chime_tokens
            if test "$argv" = -tC
                set -l token (commandline -ct)
                string length -- "$token"
            else
                __chime_tokens_generated $argv
            end
        end

        """#

    /// Python: opens the store named by its argument in exclusive locking mode, writes (which
    /// takes the lock and keeps it), says "locked", and waits to be killed.
    static let lockHolder = """
        import sqlite3, sys, time
        db = sqlite3.connect(sys.argv[1], isolation_level=None)
        db.execute("PRAGMA locking_mode = EXCLUSIVE")
        db.execute("BEGIN EXCLUSIVE")
        db.execute("UPDATE reminder SET title = title WHERE 0")
        print("locked", flush=True)
        time.sleep(120)
        """

    // MARK: The sandbox

    /// A sandbox whose shells find the chime under test on their PATH (the scripts run `chime`).
    static func sandbox(extra: [String: String] = [:]) throws -> Sandbox {
        var extra = extra
        extra["PATH"] = ChimeExecutable.url.deletingLastPathComponent().path + ":" + IsolatedEnvironment.path
        return try Sandbox(extra: extra)
    }

    /// The test's own directory for scripts and output, apart from the home it looks at.
    static func scratch(_ sandbox: borrowing Sandbox) throws -> URL {
        let scratch = sandbox.directory.appendingPathComponent("scratch")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        return scratch
    }

    /// The three scripts, generated by the chime under test, by shell.
    static func scripts(_ sandbox: borrowing Sandbox, scratch: URL) async throws -> [String: String] {
        var scripts: [String: String] = [:]
        for shell in ["bash", "zsh", "fish"] {
            let result = try await run(
                ChimeExecutable.url.path,
                ["--generate-completion-script", shell],
                environment: sandbox.environment,
                scratch: scratch
            )
            #expect(result.status == 0, "\(shell): \(result.stderr)")
            let path = scratch.appendingPathComponent("chime.\(shell)").path
            try result.stdout.write(toFile: path, atomically: true, encoding: .utf8)
            scripts[shell] = path
        }
        return scripts
    }

    /// The store and the programs the completions read, made with real chime commands: two
    /// reminders (tea, standup), two medications (each with its dose alerts pending), two
    /// installed programs, one of them gated.
    static func populate(_ sandbox: borrowing Sandbox, scratch: URL) async throws {
        let dataDirectories = try #require(sandbox.environment["XDG_DATA_DIRS"])
        let applications = URL(fileURLWithPath: dataDirectories).appendingPathComponent("applications")
        try FileManager.default.createDirectory(at: applications, withIntermediateDirectories: true)
        try "[Desktop Entry]\nType=Application\nName=Firefox ESR\nExec=/usr/lib/firefox-esr/firefox-esr %u\n"
            .write(to: applications.appendingPathComponent("firefox-esr.desktop"), atomically: true, encoding: .utf8)
        try "[Desktop Entry]\nType=Application\nName=Chess\nExec=/usr/games/chess\n"
            .write(to: applications.appendingPathComponent("org.example.Chess.desktop"), atomically: true, encoding: .utf8)
        for command in [
            ["in", "1h", "Tea time", "--id", "tea"],
            ["every", "day", "09:00", "Stand up", "--id", "standup"],
            ["med", "add", "Aspirin", "--amount", "100", "--unit", "mg", "--at", "08:00"],
            ["med", "add", "Vitamin D", "--amount", "1000", "--unit", "IU", "--at", "09:00"],
            ["gate", "add", "firefox-esr"],
        ] {
            let result = try await chime(command, sandbox, scratch: scratch)
            try #require(result.status == 0, "chime \(command.joined(separator: " ")): \(result.stderr)")
        }
    }

    static func chime(_ arguments: [String], _ sandbox: borrowing Sandbox, scratch: URL) async throws -> Outcome {
        try await run(ChimeExecutable.url.path, arguments, environment: sandbox.environment, scratch: scratch)
    }

    /// Every path under `root` (its type and, for a file, its size), but those under `leaving`.
    static func tree(_ root: URL, leaving: URL) throws -> [String] {
        let paths = try FileManager.default.subpathsOfDirectory(atPath: root.path)
        let left = leaving.path.dropFirst(root.path.count + 1)
        return paths.filter { !$0.hasPrefix(left) }.sorted().map { path in
            let attributes = try? FileManager.default.attributesOfItem(atPath: root.path + "/" + path)
            let type = (attributes?[.type] as? FileAttributeType)?.rawValue ?? "?"
            return "\(path) \(type) \((attributes?[.size] as? NSNumber)?.intValue ?? -1)"
        }
    }

    // MARK: Processes

    /// A program of the system's (`/usr/bin/NAME`, `/bin/NAME`), or nil.
    static func program(_ name: String) -> String? {
        ["/usr/bin/\(name)", "/bin/\(name)", "/usr/local/bin/\(name)"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    struct Outcome {
        var status: Int32?
        var stdout: String
        var stderr: String
    }

    /// Runs `path` to its end, its output into files of `scratch`; polled, never waited for on
    /// a thread of Swift's small pool; killed by its pid after `timeout` seconds (status nil).
    static func run(
        _ path: String,
        _ arguments: [String],
        environment: [String: String],
        scratch: URL,
        timeout: Double = 60
    ) async throws -> Outcome {
        let name = UUID().uuidString
        let output = scratch.appendingPathComponent("\(name).out").path
        let errors = scratch.appendingPathComponent("\(name).err").path
        defer {
            try? FileManager.default.removeItem(atPath: output)
            try? FileManager.default.removeItem(atPath: errors)
        }
        let pid = try Spawn.start(path, arguments, environment: environment, output: output, errors: errors).get()
        let deadline = Date().addingTimeInterval(timeout)
        var status: Int32?
        while status == nil {
            var raw: Int32 = 0
            let reaped = waitpid(pid, &raw, WNOHANG)
            if reaped == pid {
                status = (raw & 0x7f) == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
            } else if reaped < 0 && errno != EINTR {
                break
            } else if Date() >= deadline {
                kill(pid, SIGKILL)
                _ = Spawn.wait(pid)
                break
            } else {
                try await Task.sleep(for: .milliseconds(10))
            }
        }
        let stdout = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        let stderr = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
        return Outcome(status: status, stdout: stdout, stderr: stderr)
    }
}
