import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `scripts/screenshots`, the pictures of docs/images made from the real programs: run into a
/// temporary directory (the script starts its own Xvfb, bus and notification-daemon, in a
/// sandbox of its own, and stops them by pid; it is itself run with a home and XDG directories
/// of the test's own), each picture is a PNG of a window's size, not blank, and the committed
/// pictures have the sizes of the fresh ones, so that they are kept true.
@Suite(.serialized) struct ScreenshotsTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let script = repository.appendingPathComponent("scripts/screenshots").path
    static let chime = (GateWindowProcess.executable as NSString).deletingLastPathComponent + "/chime"

    /// The three pictures and the window sizes each may have (a popup of notification-daemon;
    /// the gate's window, 720x540 on a 1024x768 screen).
    static let pictures: [(name: String, widths: ClosedRange<Int>, heights: ClosedRange<Int>)] = [
        ("alert.png", 200...700, 60...300),
        ("focus.png", 200...700, 60...300),
        ("gate.png", 600...1024, 400...768),
        ("app.png", 960...960, 640...640),
    ]

    /// The app's pictures (not committed), in OUTDIR/app: each page, light and dark, 960 and 360
    /// px wide, 640 high.
    static let appPictures: [(name: String, width: Int)] = ["today", "reminders", "focus", "doses", "gateway"].flatMap { page in
        ["light", "dark"].flatMap { scheme in [960, 360].map { ("\(page)-\(scheme)-\($0).png", $0) } }
    }

    /// A run of the script: its status and its standard output and error. Stopped by its pid
    /// (its trap then stops what it started) when it takes longer than `timeout` seconds.
    struct Run {
        var status: Int32
        var output: String
        var errors: String
    }

    static func run(_ arguments: [String], in root: URL, environment extra: [String: String] = [:], timeout: Double = 240) throws -> Run {
        var environment = try VirtualDisplay.isolated(root: root)
        environment["CHIME"] = chime
        environment.merge(extra) { $1 }
        let output = root.appendingPathComponent("screenshots.out")
        let errors = root.appendingPathComponent("screenshots.err")
        let pid = try Spawn.start(script, arguments, environment: environment, output: output.path, errors: errors.path)
        let deadline = Date().addingTimeInterval(timeout)
        var status = Spawn.exited(pid)
        while status == nil {
            if Date() >= deadline {
                Spawn.stop(pid)
                status = -1
                break
            }
            usleep(50_000)
            status = Spawn.exited(pid)
        }
        return Run(
            status: status ?? -1,
            output: (try? String(contentsOf: output, encoding: .utf8)) ?? "",
            errors: (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
        )
    }

    /// A PNG's width and height, from its signature and IHDR chunk; nil when it is not a PNG.
    static func pngSize(_ path: String) -> (width: Int, height: Int)? {
        guard let data = FileManager.default.contents(atPath: path), data.count >= 24 else { return nil }
        let bytes = [UInt8](data.prefix(24))
        guard bytes[0..<8] == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], bytes[12..<16] == [0x49, 0x48, 0x44, 0x52] else {
            return nil
        }
        func number(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        return (number(16), number(20))
    }

    /// The number of distinct colours in a picture (ImageMagick's `identify -format %k`).
    static func colours(_ path: String, root: URL) throws -> Int? {
        let output = root.appendingPathComponent("identify-\(UUID().uuidString).out")
        let pid = try Spawn.start(
            "/usr/bin/identify",
            ["-format", "%k", path],
            environment: try VirtualDisplay.isolated(root: root),
            output: output.path,
            errors: "/dev/null"
        )
        guard Spawn.wait(pid) == 0 else { return nil }
        return Int((try? String(contentsOf: output, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "")
    }

    static func temporaryRoot() throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("chime-screenshots-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        return root
    }

    @Test func theScriptTakesThePicturesAndTheCommittedOnesHaveTheirSizes() throws {
        let root = try Self.temporaryRoot()
        defer { try? FileManager.default.removeItem(at: root) }
        let pictures = root.appendingPathComponent("pictures")

        // When the script runs into a directory of its own
        let run = try Self.run([pictures.path], in: root)

        // Then it succeeds, printing one line per picture: its path and its size
        #expect(run.status == 0, "\(run.output)\(run.errors)")
        let lines = run.output.split(separator: "\n").map(String.init)
        #expect(lines.count == Self.pictures.count + Self.appPictures.count, "\(run.output)")
        for picture in Self.pictures {
            let path = pictures.appendingPathComponent(picture.name).path
            // and each picture is a PNG of a window's size
            let size = try #require(Self.pngSize(path), "\(picture.name) is missing or no PNG: \(run.errors)")
            #expect(picture.widths.contains(size.width) && picture.heights.contains(size.height), "\(picture.name): \(size)")
            #expect(lines.contains("\(path) \(size.width)x\(size.height)"), "\(picture.name): \(lines)")
            // and not blank (a window drawn: text, buttons, an icon)
            let colours = try #require(try Self.colours(path, root: root), "identify could not read \(picture.name)")
            #expect(colours > 16, "\(picture.name) has \(colours) colours")
            // and the committed picture, in docs/images, has the fresh one's size
            let committed = Self.repository.appendingPathComponent("docs/images/\(picture.name)").path
            let committedSize = try #require(Self.pngSize(committed), "docs/images/\(picture.name) is missing or no PNG")
            #expect(
                committedSize == size,
                "docs/images/\(picture.name) is \(committedSize), a fresh one \(size): run scripts/screenshots and commit the pictures"
            )
        }
        // and the app's pages, each of its width, drawn
        for picture in Self.appPictures {
            let path = pictures.appendingPathComponent("app/\(picture.name)").path
            let size = try #require(Self.pngSize(path), "app/\(picture.name) is missing or no PNG: \(run.errors)")
            #expect(size.width == picture.width && size.height == 640, "app/\(picture.name): \(size)")
            #expect(try Self.colours(path, root: root) ?? 0 > 16, "app/\(picture.name) is blank")
        }
        // and the gate's chime ended at Escape (Exit to Focus), as with a person
        #expect(!run.errors.contains("did not end"), "\(run.errors)")
    }

    @Test func aMissingProgramFailsWithOneLineNamingIt() throws {
        let root = try Self.temporaryRoot()
        defer { try? FileManager.default.removeItem(at: root) }
        let pictures = root.appendingPathComponent("pictures")

        let run = try Self.run([pictures.path], in: root, environment: ["CHIME": root.appendingPathComponent("no-chime").path])

        #expect(run.status == 1)
        #expect(run.output.isEmpty)
        let expected = "screenshots: no chime executable at \(root.path)/no-chime: build it (swift build --product chime) or set CHIME\n"
        #expect(run.errors == expected)
        #expect(!FileManager.default.fileExists(atPath: pictures.appendingPathComponent("alert.png").path))
    }
}
