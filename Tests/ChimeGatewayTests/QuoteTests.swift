import ChimeCore
import ChimeGateway
import Foundation
import Testing

/// The repository's `Resources/quotes`.
let shippedQuotes = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Resources/quotes").path

@Suite struct QuoteTests {
    @Test func parsesTheFormat() throws {
        let text = "# a comment\n\nText one\tSeneca\tLetters, 1, tr. Richard M. Gummere, 1917\r\n  \nText two\tThoreau\tWalden, 1854\n"
        let quotes = try QuoteLibrary.parse(text, file: "stoicism.tsv", interest: .stoicism)
        #expect(
            quotes == [
                Quote(text: "Text one", author: "Seneca", source: "Letters, 1, tr. Richard M. Gummere, 1917", interest: .stoicism),
                Quote(text: "Text two", author: "Thoreau", source: "Walden, 1854", interest: .stoicism),
            ]
        )
    }

    @Test(arguments: [
        ("ok\ta\tb\nno tabs here\n", "stoicism.tsv:2: expected text, author and source separated by tabs, found 1 field"),
        ("a\tb\n", "stoicism.tsv:1: expected text, author and source separated by tabs, found 2 fields"),
        ("# c\na\tb\tc\td\n", "stoicism.tsv:2: expected text, author and source separated by tabs, found 4 fields"),
        ("a\t \tc\n", "stoicism.tsv:1: the author is empty"),
        ("\tb\tc\n", "stoicism.tsv:1: the text is empty"),
        ("a\tb\t\n", "stoicism.tsv:1: the source is empty"),
    ])
    func malformedLinesNameTheFileAndLine(text: String, message: String) {
        #expect(throws: ChimeError(.failure, message)) {
            try QuoteLibrary.parse(text, file: "stoicism.tsv", interest: .stoicism)
        }
    }

    @Test func loadsTheFirstDirectoryThatHasEachFile() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("chime-quotes-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let mine = root.appendingPathComponent("mine").path
        let system = root.appendingPathComponent("system").path
        for directory in [mine, system] {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        try "Mine\tMe\tMy notebook\n".write(toFile: mine + "/stoicism.tsv", atomically: true, encoding: .utf8)
        try "System\tSeneca\tLetters\n".write(toFile: system + "/stoicism.tsv", atomically: true, encoding: .utf8)
        try "Focus\tFranklin\tThe Way to Wealth\n".write(toFile: system + "/productivity.tsv", atomically: true, encoding: .utf8)
        let library = try QuoteLibrary.load(from: [root.appendingPathComponent("missing").path, mine, system])
        #expect(library.quotes[.stoicism]?.map(\.text) == ["Mine"])
        #expect(library.quotes[.productivity]?.map(\.text) == ["Focus"])
        #expect(library.quotes[.mindfulness] == nil)
        // A malformed file is named with its path.
        try "broken line\n".write(toFile: mine + "/psychology.tsv", atomically: true, encoding: .utf8)
        #expect(throws: ChimeError(.failure, mine + "/psychology.tsv:1: expected text, author and source separated by tabs, found 1 field"))
        {
            try QuoteLibrary.load(from: [mine, system])
        }
    }

    @Test func noDirectoriesNoQuotes() throws {
        #expect(try QuoteLibrary.load(from: []).all.isEmpty)
    }

    @Test func directoriesFollowXDG() {
        let directories = QuoteLibrary.directories(
            environment: ["XDG_DATA_HOME": "/home/ada/.data", "XDG_DATA_DIRS": "/usr/share:relative:/opt/share"],
            executable: "/opt/chime/bin/chime"
        )
        #expect(
            Array(directories.prefix(4)) == [
                "/home/ada/.data/chime/quotes", "/usr/share/chime/quotes", "/opt/share/chime/quotes", "/opt/chime/share/chime/quotes",
            ]
        )
        #expect(directories.contains("/opt/chime/Resources/quotes"))
        let defaults = QuoteLibrary.directories(environment: ["HOME": "/home/ada"], executable: "")
        #expect(defaults == ["/home/ada/.local/share/chime/quotes", "/usr/local/share/chime/quotes", "/usr/share/chime/quotes"])
    }

    @Test func shippedQuotesParseWithAtLeast30PerInterestAndNoDuplicates() throws {
        let library = try QuoteLibrary.load(from: [shippedQuotes])
        for interest in Interest.allCases {
            let quotes = library.quotes[interest] ?? []
            #expect(quotes.count >= 30, "\(interest.title) has \(quotes.count) quotes")
            for quote in quotes {
                #expect(quote.interest == interest)
                #expect(!quote.text.contains("\t"))
            }
        }
        let texts = library.all.map { $0.text.lowercased() }
        #expect(Set(texts).count == texts.count, "duplicates: \(Dictionary(grouping: texts) { $0 }.filter { $0.value.count > 1 }.keys)")
    }

    /// Every translated quote names its translator and year; every source names a year.
    @Test func shippedSourcesNameTheirYear() throws {
        let library = try QuoteLibrary.load(from: [shippedQuotes])
        for quote in library.all {
            #expect(quote.source.contains(/1[5-9]\d\d/), "no year in \(quote.source)")
            if quote.source.contains("tr. ") {
                #expect(quote.source.contains(/tr\. [A-Z][^,]+, \d{4}/), "translator without year in \(quote.source)")
            }
        }
    }

    @Test func pickNeverRepeatsThePreviousQuote() throws {
        let library = try QuoteLibrary.load(from: [shippedQuotes])
        var generator = SeededGenerator(seed: 42)
        var previous: Quote?
        for _ in 0..<500 {
            let quote = try #require(library.pick(for: [.stoicism, .psychology], after: previous, using: &generator))
            #expect(quote != previous)
            #expect([.stoicism, .psychology].contains(quote.interest))
            previous = quote
        }
    }

    @Test func pickWithATwoQuoteLibraryAlternates() {
        let library = QuoteLibrary(quotes: [.stoicism: [seneca], .productivity: [thoreau]])
        var generator = SeededGenerator(seed: 7)
        var previous: Quote? = seneca
        for _ in 0..<20 {
            let quote = library.pick(for: [], after: previous, using: &generator)
            #expect(quote != nil && quote != previous)
            previous = quote
        }
    }

    @Test func pickWithOneQuoteShowsItAgainRatherThanNothing() {
        let library = QuoteLibrary(quotes: [.stoicism: [seneca]])
        var generator = SeededGenerator(seed: 1)
        #expect(library.pick(for: [.stoicism], after: seneca, using: &generator) == seneca)
    }

    @Test func pickWithoutQuotesForTheInterestsIsNil() {
        let library = QuoteLibrary(quotes: [.stoicism: [seneca]])
        var generator = SeededGenerator(seed: 1)
        #expect(library.pick(for: [.mindfulness], after: nil, using: &generator) == nil)
        #expect(QuoteLibrary().pick(for: [], after: nil, using: &generator) == nil)
    }

    @Test func noInterestsMeansEveryInterest() {
        let library = QuoteLibrary(quotes: [.mindfulness: [thoreau]])
        var generator = SeededGenerator(seed: 1)
        #expect(library.pick(for: [], after: nil, using: &generator) == thoreau)
    }
}
