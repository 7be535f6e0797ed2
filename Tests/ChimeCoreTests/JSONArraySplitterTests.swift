import ChimeCore
import Foundation
import Testing

/// `chime import`'s split of a JSON array into elements, fed in pieces of any size.
struct JSONArraySplitterTests {
    /// The elements of `text`, fed `piece` bytes at a time.
    func split(_ text: String, piece: Int) throws -> [String] {
        var splitter = JSONArraySplitter()
        var elements: [String] = []
        let bytes = Array(text.utf8)
        var index = 0
        while index < bytes.count {
            let end = min(index + piece, bytes.count)
            try splitter.feed(bytes[index..<end]) { element in
                #expect(element.index == elements.count)
                elements.append(String(decoding: element.bytes, as: UTF8.self))
            }
            index = end
        }
        try splitter.finish()
        return elements
    }

    @Test(
        "Strings holding brackets, braces, commas, escaped quotes and UTF-8 split where the elements end",
        arguments: [1, 2, 3, 7, 4096]
    )
    func splitsElements(piece: Int) throws {
        let elements = [
            #"{"title": "a ] b } c [ d { e , f"}"#,
            #"{"title": "say \"hi\", ]}", "body": "back\\slash\\"}"#,
            #"{"title": "Grüße 🍵 ünïcode ]", "id": "x"}"#,
            #"{"nested": {"a": [1, {"b": "]"}]}, "t": "\\\""}"#,
            "5",
            "\"bare ] string\"",
            "[1, [2]]",
            "true",
        ]
        let text = " \n[ " + elements.joined(separator: " ,\n\t") + " ] \n"
        #expect(try split(text, piece: piece) == elements)
        // Each element is one JSON value on its own.
        for element in elements.filter({ $0.hasPrefix("{") }) {
            #expect(throws: Never.self) { try JSONSerialization.jsonObject(with: Data(element.utf8)) }
        }
    }

    @Test("An empty array has no elements")
    func emptyArray() throws {
        #expect(try split("[]", piece: 1) == [])
        #expect(try split("  [ \n ]  ", piece: 2) == [])
    }

    @Test(
        "Text that is not an array of elements fails where it goes wrong",
        arguments: [
            ("{\"a\": 1}", 1, 1, 0, "{"),
            ("[1,]", 1, 4, 3, "]"),
            ("[,1]", 1, 2, 1, ","),
            ("[1 2]", 1, 4, 3, "2"),
            ("[{\"a\": 1}}]", 1, 10, 9, "}"),
            ("[\n1] x", 2, 4, 5, "x"),
            ("[\"ü\", 1 x]", 1, 9, 9, "x"),
        ]
    )
    func syntaxErrors(text: String, line: Int, column: Int, offset: Int, found: String) throws {
        let error = try #require(throws: JSONArraySplitter.SyntaxError.self) { try split(text, piece: 1) }
        #expect(error.position == JSONArraySplitter.Position(line: line, column: column, offset: offset))
        #expect(error.found == found.utf8.first)
    }

    @Test("A text that ends inside the array or a string is an error at its end", arguments: ["[", "[1,", #"[{"a": "]"}"#, "[{\"a\": 1}"])
    func endsEarly(text: String) throws {
        let error = try #require(throws: JSONArraySplitter.SyntaxError.self) { try split(text, piece: 1) }
        #expect(error.found == nil)
        #expect(error.position.offset == text.utf8.count)
    }
}
