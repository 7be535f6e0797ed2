/// Splits a JSON array, fed in pieces, into the bytes of its elements, so that `chime import`
/// decodes a file one element at a time instead of holding the whole document and every
/// decoded reminder at once.
///
/// Hand-written because Foundation's `JSONDecoder` has no streaming API: it decodes one whole
/// document held in memory (100,000 reminders cost 120 MB of RSS that way). This checks only
/// what splitting needs (the array's brackets, commas, and where strings start and end, escaped
/// quotes included); each element is then decoded, and so checked, on its own.
///
/// The array may stand alone or, when the splitter is made with a ``Wrapper``, as one key of an
/// object (`{"reminders": [...], "runner": true}`, as `chime list --json` prints it): that form
/// streams the same way. An element larger than ``maxElementBytes`` is refused as it grows, so
/// memory stays bounded however the text is padded.
///
/// An element that lies in one piece is handed over where it lies, without a copy; only one
/// that straddles two pieces is gathered: copying every element byte by byte into an array, and
/// each chunk again into a `Data`, costs a tenth of `chime import`'s time on 100,000 reminders
/// (`perf record` on `chime-bench schedule`).
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

    /// An element (or a skipped value of the wrapper) grew past `limit` bytes; `start` is where
    /// it starts, `index` its 0-based index (nil for a value of the wrapper).
    public struct TooLarge: Error, Sendable, Equatable {
        public var start: Position
        public var index: Int?
        public var limit: Int
    }

    /// The object around the array: `key` holds the array; `others` may be given too, and
    /// their values are skipped.
    public struct Wrapper: Sendable, Equatable {
        public var key: String
        public var others: [String]

        public init(key: String, others: [String]) {
            self.key = key
            self.others = others
        }
    }

    /// A key of the wrapper that is not one of its keys, is given twice, or is missing (at the
    /// closing brace).
    public struct KeyError: Error, Sendable, Equatable {
        public enum Problem: Sendable, Equatable { case unknown, duplicate, missing }
        public var problem: Problem
        public var key: String
        public var position: Position
    }

    /// The largest element (in bytes, white space inside it included) handed over by default:
    /// a reminder's title and body take at most 4,500 characters, 54 KB if every one were
    /// written as a `\u` escape pair.
    public static let defaultMaxElementBytes = 1 << 20

    /// The largest element handed over; a larger one throws ``TooLarge``.
    public let maxElementBytes: Int
    private let wrapper: Wrapper?

    private enum State {
        /// Before the opening bracket (or brace, with a wrapper).
        case start
        /// With a wrapper: after `{` (a key or `}`), or after a comma (a key).
        case objectOpened, objectComma
        /// Inside a key of the wrapper.
        case key
        /// After a key of the wrapper: `:`.
        case colon
        /// After the colon: the value.
        case value
        /// Inside a value of the wrapper that is skipped.
        case skipping
        /// After a value of the wrapper: `,` or `}`.
        case objectAfter
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
    /// The start of an element that began in an earlier piece.
    private var carry: [UInt8] = []
    private var currentStart = Position()
    private var depth = 0
    private var inString = false
    private var escaped = false
    private var count = 0
    // Where the next byte is: its offset, its line, where that line starts, and how many UTF-8
    // continuation bytes came before it and before the line (a column counts characters).
    private var offset = 0
    private var line = 1
    private var lineStart = 0
    private var continuations = 0
    private var continuationsBeforeLine = 0
    // The wrapper's key being read (bounded), the keys read, and the one whose value comes.
    private var keyBytes: [UInt8] = []
    private var keyStart = Position()
    private var keysRead: Set<String> = []
    private var currentKey = ""
    private var skipped = 0

    /// - Parameters:
    ///   - wrapper: the object the array may stand in; nil: only a bare array.
    ///   - maxElementBytes: the largest element handed over.
    public init(wrapper: Wrapper? = nil, maxElementBytes: Int = defaultMaxElementBytes) {
        self.wrapper = wrapper
        self.maxElementBytes = maxElementBytes
    }

    /// True once the closing bracket has been read.
    public var isComplete: Bool { state == .done }

    /// Where the next byte is.
    private var position: Position {
        Position(line: line, column: offset - lineStart - (continuations - continuationsBeforeLine) + 1, offset: offset)
    }

    /// Reads `bytes`, handing each element that ends in them to `element`.
    public mutating func feed(_ bytes: some Sequence<UInt8>, element: (Element) throws -> Void) throws {
        let array = Array(bytes)
        try array.withUnsafeBufferPointer { buffer in
            try feed(buffer) { bytes, index, start in try element(Element(bytes: Array(bytes), index: index, start: start)) }
        }
    }

    /// Reads `buffer`, handing each element that ends in it to `element`: its bytes (valid only
    /// during the call), its 0-based index and where it starts.
    public mutating func feed(
        _ buffer: UnsafeBufferPointer<UInt8>,
        element: (_ bytes: UnsafeBufferPointer<UInt8>, _ index: Int, _ start: Position) throws -> Void
    ) throws {
        // Where the current element starts in `buffer` (0 when it began in an earlier piece).
        var start = 0
        var index = 0
        let end = buffer.count
        func emit(_ through: Int) throws {
            guard carry.count + (through - start) <= maxElementBytes else {
                throw TooLarge(start: currentStart, index: count, limit: maxElementBytes)
            }
            let bytes = UnsafeBufferPointer(rebasing: buffer[start..<through])
            let number = count
            count += 1
            if carry.isEmpty {
                try element(bytes, number, currentStart)
            } else {
                carry.append(contentsOf: bytes)
                try carry.withUnsafeBufferPointer { try element($0, number, currentStart) }
                carry.removeAll(keepingCapacity: true)
            }
        }
        while index < end {
            let byte = buffer[index]
            switch state {
            case .element:
                switch scan(byte) {
                case .inside: break
                case .endsAfter:
                    state = .after
                    try emit(index + 1)
                case .endsAt:
                    switch byte {
                    case UInt8(ascii: "]"):
                        // The end of a bare scalar element (`[5]`).
                        guard index > start || !carry.isEmpty else { throw SyntaxError(position: position, found: byte) }
                        state = arrayEnd
                        try emit(index)
                    case UInt8(ascii: ","):
                        state = .comma
                        try emit(index)
                    case UInt8(ascii: "}"):
                        // A stray closing brace.
                        throw SyntaxError(position: position, found: byte)
                    default:
                        state = .after
                        try emit(index)
                    }
                }
            case .start:
                guard !Self.isSpace(byte) else { break }
                if byte == UInt8(ascii: "{"), wrapper != nil {
                    state = .objectOpened
                    break
                }
                guard byte == UInt8(ascii: "[") else { throw SyntaxError(position: position, found: byte) }
                state = .opened
            case .objectOpened, .objectComma:
                guard !Self.isSpace(byte) else { break }
                if byte == UInt8(ascii: "}") && state == .objectOpened {
                    try close()
                    break
                }
                guard byte == UInt8(ascii: "\"") else { throw SyntaxError(position: position, found: byte) }
                state = .key
                keyStart = position
                keyBytes.removeAll(keepingCapacity: true)
                escaped = false
            case .key:
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    let key = String(decoding: keyBytes, as: UTF8.self)
                    guard let wrapper, key == wrapper.key || wrapper.others.contains(key) else {
                        throw KeyError(problem: .unknown, key: key, position: keyStart)
                    }
                    guard keysRead.insert(key).inserted else { throw KeyError(problem: .duplicate, key: key, position: keyStart) }
                    currentKey = key
                    state = .colon
                    break
                } else if byte < 0x20 {
                    throw SyntaxError(position: position, found: byte)
                }
                // A key longer than any the wrapper has is unknown: keep only its start, for the message.
                if keyBytes.count < 64 { keyBytes.append(byte) }
            case .colon:
                guard !Self.isSpace(byte) else { break }
                guard byte == UInt8(ascii: ":") else { throw SyntaxError(position: position, found: byte) }
                state = .value
            case .value:
                guard !Self.isSpace(byte) else { break }
                if currentKey == wrapper?.key {
                    guard byte == UInt8(ascii: "[") else { throw SyntaxError(position: position, found: byte) }
                    state = .opened
                    break
                }
                guard byte != UInt8(ascii: ","), byte != UInt8(ascii: "]"), byte != UInt8(ascii: "}") else {
                    throw SyntaxError(position: position, found: byte)
                }
                state = .skipping
                currentStart = position
                skipped = 0
                depth = 0
                inString = false
                escaped = false
                continue
            case .skipping:
                skipped += 1
                guard skipped <= maxElementBytes else { throw TooLarge(start: currentStart, index: nil, limit: maxElementBytes) }
                switch scan(byte) {
                case .inside: break
                case .endsAfter: state = .objectAfter
                case .endsAt:
                    // The end of a scalar value: the comma or brace after it, read again.
                    state = .objectAfter
                    continue
                }
            case .objectAfter:
                guard !Self.isSpace(byte) else { break }
                if byte == UInt8(ascii: ",") {
                    state = .objectComma
                } else if byte == UInt8(ascii: "}") {
                    try close()
                } else {
                    throw SyntaxError(position: position, found: byte)
                }
            case .opened, .comma:
                guard !Self.isSpace(byte) else { break }
                if byte == UInt8(ascii: "]") && state == .opened {
                    state = arrayEnd
                    break
                }
                guard byte != UInt8(ascii: ","), byte != UInt8(ascii: "]"), byte != UInt8(ascii: "}") else {
                    throw SyntaxError(position: position, found: byte)
                }
                state = .element
                currentStart = position
                start = index
                depth = 0
                // The element's first byte, read again as part of it.
                continue
            case .after:
                guard !Self.isSpace(byte) else { break }
                if byte == UInt8(ascii: ",") {
                    state = .comma
                } else if byte == UInt8(ascii: "]") {
                    state = arrayEnd
                } else {
                    throw SyntaxError(position: position, found: byte)
                }
            case .done:
                guard Self.isSpace(byte) else { throw SyntaxError(position: position, found: byte) }
            }
            offset += 1
            if byte == 0x0A {
                line += 1
                lineStart = offset
                continuationsBeforeLine = continuations
            } else if byte & 0xC0 == 0x80 {
                continuations += 1
            }
            index += 1
        }
        if state == .element {
            guard carry.count + (end - start) <= maxElementBytes else {
                throw TooLarge(start: currentStart, index: count, limit: maxElementBytes)
            }
            carry.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start..<end]))
        }
    }

    /// Where a byte leaves the value being scanned (an element, or a value of the wrapper that
    /// is skipped): inside it, its last byte, or the first byte after it.
    private enum Edge { case inside, endsAfter, endsAt }

    /// Reads `byte` as part of the value being scanned: strings (escaped quotes included),
    /// nesting, and the byte a value at the top ends at (a comma, a closing bracket or brace,
    /// white space).
    @inline(__always)
    private mutating func scan(_ byte: UInt8) -> Edge {
        if inString {
            if escaped {
                escaped = false
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "\"") {
                inString = false
                if depth == 0 { return .endsAfter }
            }
            return .inside
        }
        switch byte {
        case UInt8(ascii: "\""):
            inString = true
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            depth += 1
        case UInt8(ascii: "}"), UInt8(ascii: "]"):
            if depth == 0 { return .endsAt }
            depth -= 1
            if depth == 0 { return .endsAfter }
        case UInt8(ascii: ","), 0x20, 0x0A, 0x0D, 0x09:
            if depth == 0 { return .endsAt }
        default:
            break
        }
        return .inside
    }

    /// Where the array's closing bracket leads: the end, or the rest of the wrapper.
    private var arrayEnd: State {
        if let wrapper, keysRead.contains(wrapper.key) { .objectAfter } else { .done }
    }

    /// The wrapper's closing brace: the text ends here, once the array was read.
    private mutating func close() throws(KeyError) {
        guard let wrapper, keysRead.contains(wrapper.key) else {
            throw KeyError(problem: .missing, key: wrapper?.key ?? "", position: position)
        }
        state = .done
    }

    /// Says that the text has ended: throws unless the array (and its wrapper) was closed.
    public func finish() throws(SyntaxError) {
        guard state == .done else { throw SyntaxError(position: position, found: nil) }
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }
}
