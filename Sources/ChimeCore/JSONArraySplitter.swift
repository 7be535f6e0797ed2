/// Splits a JSON array, fed in pieces, into the bytes of its elements, so that `chime import`
/// decodes a file one element at a time instead of holding the whole document and every
/// decoded reminder at once.
///
/// Hand-written because Foundation's `JSONDecoder` has no streaming API: it decodes one whole
/// document held in memory (100,000 reminders cost 120 MB of RSS that way). This checks only
/// what splitting needs (the array's brackets, commas, and where strings start and end, escaped
/// quotes included); each element is then decoded, and so checked, by `JSONDecoder`.
public struct JSONArraySplitter {
    /// Where a byte is in the text: 1-based line and column (columns count characters, not
    /// bytes), and the 0-based byte offset.
    public struct Position: Sendable, Hashable {
        public var line = 1
        public var column = 1
        public var offset = 0

        public init(line: Int = 1, column: Int = 1, offset: Int = 0) {
            self.line = line
            self.column = column
            self.offset = offset
        }
    }

    /// One element of the array: its bytes, its 0-based index and where it starts.
    public struct Element {
        public var bytes: [UInt8]
        public var index: Int
        public var start: Position
    }

    /// The text is not an array of elements: `found` is the unexpected byte, nil when the text
    /// ends before the array does.
    public struct SyntaxError: Error, Sendable, Equatable {
        public var position: Position
        public var found: UInt8?
    }

    private enum State {
        /// Before the opening bracket.
        case start
        /// After `[`: an element or `]`.
        case opened
        /// After a comma: an element.
        case comma
        /// Inside an element.
        case element
        /// After an element: `,` or `]`.
        case after
        /// After the closing bracket: only white space.
        case done
    }

    private var state = State.start
    private var position = Position()
    private var current: [UInt8] = []
    private var currentStart = Position()
    private var depth = 0
    private var inString = false
    private var escaped = false
    private var count = 0

    public init() {}

    /// True once the closing bracket has been read.
    public var isComplete: Bool { state == .done }

    /// Reads `bytes`, handing each element that ends in them to `element`.
    public mutating func feed(_ bytes: some Sequence<UInt8>, element: (Element) throws -> Void) throws {
        for byte in bytes {
            try step(byte, element: element)
            position.offset += 1
            if byte == 0x0A {
                position.line += 1
                position.column = 1
            } else if byte & 0xC0 != 0x80 {
                position.column += 1
            }
        }
    }

    /// Says that the text has ended: throws unless the array was closed.
    public func finish() throws(SyntaxError) {
        guard state == .done else { throw SyntaxError(position: position, found: nil) }
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }

    private mutating func step(_ byte: UInt8, element: (Element) throws -> Void) throws {
        switch state {
        case .start:
            guard !Self.isSpace(byte) else { return }
            guard byte == UInt8(ascii: "[") else { throw SyntaxError(position: position, found: byte) }
            state = .opened
        case .opened, .comma:
            guard !Self.isSpace(byte) else { return }
            if byte == UInt8(ascii: "]") && state == .opened {
                state = .done
                return
            }
            guard byte != UInt8(ascii: ","), byte != UInt8(ascii: "]") else { throw SyntaxError(position: position, found: byte) }
            state = .element
            currentStart = position
            current.removeAll(keepingCapacity: true)
            depth = 0
            try inElement(byte, element: element)
        case .element:
            try inElement(byte, element: element)
        case .after:
            guard !Self.isSpace(byte) else { return }
            if byte == UInt8(ascii: ",") {
                state = .comma
            } else if byte == UInt8(ascii: "]") {
                state = .done
            } else {
                throw SyntaxError(position: position, found: byte)
            }
        case .done:
            guard Self.isSpace(byte) else { throw SyntaxError(position: position, found: byte) }
        }
    }

    private mutating func inElement(_ byte: UInt8, element: (Element) throws -> Void) throws {
        if inString {
            current.append(byte)
            if escaped {
                escaped = false
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "\"") {
                inString = false
                if depth == 0 { try end(element) }
            }
            return
        }
        switch byte {
        case UInt8(ascii: "\""):
            inString = true
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            depth += 1
        case UInt8(ascii: "}"), UInt8(ascii: "]"):
            if depth == 0 {
                // The end of a bare scalar element (`[5]`), or a stray closing brace.
                guard byte == UInt8(ascii: "]"), !current.isEmpty else { throw SyntaxError(position: position, found: byte) }
                try end(element)
                state = .done
                return
            }
            depth -= 1
            current.append(byte)
            if depth == 0 { try end(element) }
            return
        case UInt8(ascii: ","):
            if depth == 0 {
                try end(element)
                state = .comma
                return
            }
        default:
            if depth == 0 && Self.isSpace(byte) {
                try end(element)
                return
            }
        }
        current.append(byte)
    }

    private mutating func end(_ element: (Element) throws -> Void) throws {
        state = .after
        let index = count
        count += 1
        try element(Element(bytes: current, index: index, start: currentStart))
    }
}
