import ChimeCore
import Foundation

/// The gate's quotes, by interest, read from files: one file per interest, named after it
/// (`stoicism.tsv`, `productivity.tsv`, `mindfulness.tsv`, `psychology.tsv`).
///
/// The format, one quote a line, UTF-8:
/// ```
/// # A comment; blank lines are ignored too.
/// text<TAB>author<TAB>source
/// ```
/// Three fields separated by tabs, none empty; the text has no tab and no line break. The
/// source names the work and, for a translation, its translator and year ("Letters to Lucilius,
/// 1, tr. Richard M. Gummere, 1917"). Chime ships them in `Resources/quotes`; a person's own
/// file of the same name in `$XDG_DATA_HOME/chime/quotes` takes the place of the shipped one.
public struct QuoteLibrary: Sendable, Equatable {
    /// The quotes of each interest, in file order.
    public var quotes: [Interest: [Quote]]

    public init(quotes: [Interest: [Quote]] = [:]) { self.quotes = quotes }

    /// All quotes, interest by interest.
    public var all: [Quote] { Interest.allCases.flatMap { quotes[$0] ?? [] } }

    /// The file name of `interest`'s quotes: `stoicism.tsv`.
    public static func fileName(_ interest: Interest) -> String { interest.rawValue + ".tsv" }

    /// Reads each interest's file from the first of `directories` that has it (so a person's
    /// own directory, given first, overrides the system's). An interest without a file has no
    /// quotes; that is not an error: the gate shows without one.
    /// - Throws: ``ChimeError`` (`.failure`) naming the file and line of a malformed line, or a
    ///   file that exists but cannot be read.
    public static func load(from directories: [String]) throws(ChimeError) -> QuoteLibrary {
        var library = QuoteLibrary()
        for interest in Interest.allCases {
            let name = fileName(interest)
            guard
                let path = directories.lazy.map({ $0 + "/" + name })
                    .first(where: { FileManager.default.fileExists(atPath: $0) })
            else { continue }
            library.quotes[interest] = try loadFile(path, interest: interest)
        }
        return library
    }

    /// Reads one file of `interest`'s quotes.
    /// - Throws: ``ChimeError`` (`.failure`) naming the file and line of a malformed line.
    public static func loadFile(_ path: String, interest: Interest) throws(ChimeError) -> [Quote] {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ChimeError(.failure, "cannot read quotes file \(path): \(error.localizedDescription)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ChimeError(.failure, "\(path): not UTF-8 text")
        }
        return try parse(text, file: path, interest: interest)
    }

    /// Parses quotes in the format above; `file` names the text in errors.
    /// - Throws: ``ChimeError`` (`.failure`): "stoicism.tsv:12: expected text, author and source
    ///   separated by tabs, found 2 fields".
    public static func parse(_ text: String, file: String, interest: Interest) throws(ChimeError) -> [Quote] {
        var result: [Quote] = []
        // "\r\n" is one Character in Swift: split on every line break, whichever the file uses.
        for (index, line) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces) }
            let place = "\(file):\(index + 1)"
            guard fields.count == 3 else {
                throw ChimeError(
                    .failure,
                    "\(place): expected text, author and source separated by tabs, found \(fields.count) field\(fields.count == 1 ? "" : "s")"
                )
            }
            for (field, name) in zip(fields, ["text", "author", "source"]) where field.isEmpty {
                throw ChimeError(.failure, "\(place): the \(name) is empty")
            }
            result.append(Quote(text: fields[0], author: fields[1], source: fields[2], interest: interest))
        }
        return result
    }

    /// Where quote files are looked for, in order: `$XDG_DATA_HOME/chime/quotes` (or
    /// `~/.local/share/chime/quotes`), each of `$XDG_DATA_DIRS` + `/chime/quotes` (a system
    /// package), `../share/chime/quotes` next to the executable, and the source tree's
    /// `Resources/quotes` above it (a development build), as the focus icons are found.
    public static func directories(environment: [String: String], executable: String) -> [String] {
        DataDirectories.search("quotes", environment: environment, executable: executable)
    }

    /// A quote for a person with `interests` (every interest when the set is empty), chosen by
    /// `generator`, never `previous` again when another one can be chosen; nil when there are
    /// no quotes for those interests.
    public func pick(
        for interests: Set<Interest>,
        after previous: Quote?,
        using generator: inout some RandomNumberGenerator
    ) -> Quote? {
        let chosen = interests.isEmpty ? Set(Interest.allCases) : interests
        var pool = Interest.allCases.filter(chosen.contains).flatMap { quotes[$0] ?? [] }
        if let previous, pool.contains(where: { $0 != previous }) {
            pool.removeAll { $0 == previous }
        }
        return pool.randomElement(using: &generator)
    }
}
