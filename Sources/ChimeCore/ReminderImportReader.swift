import Foundation

extension ReminderImport {
    /// Reads a file of reminders as a stream, a chunk of reminders at a time: the array (bare,
    /// or the "reminders" of an object, as `chime list --json` prints it) is split into its
    /// elements as the bytes arrive (``JSONArraySplitter``) and each element is read and checked
    /// as it ends, so memory stays flat however long the file. An id given twice is not refused
    /// here: the store refuses it as it schedules the stream.
    ///
    /// Bounded: each byte is looked at once (white space before the array too), an element
    /// larger than ``JSONArraySplitter/defaultMaxElementBytes`` is refused as it grows, and so
    /// is a text longer than ``maxDocumentBytes``. A text that starts with anything but `[` or
    /// `{` is refused at its first byte.
    ///
    /// A reminder whose time has passed (a backup imported later) is not refused: a recurring
    /// one moves to its next occurrence from now, a one-shot is left out or, with
    /// ``PastOneShots/fire``, fires at once, late; each is listed in ``adjustments``.
    public final class Reader {
        /// The longest text read: 1 GiB (a million reminders as `chime list --json` prints
        /// them take about 300 MB).
        public static let maxDocumentBytes = 1 << 30

        private let handle: FileHandle
        private let source: String
        private let now: Date
        private let past: PastOneShots?
        private let chunkSize: Int
        private let maxDocumentBytes: Int
        private let decoder = JSONDecoder()
        private var splitter: JSONArraySplitter
        private var pending: [NewReminder] = []
        /// No list of the ids read: a repeated id is the store's to refuse (ChimeStore's
        /// `scheduleStream`), which keeps none either. (A dictionary of 100,000 ids takes
        /// 6 MB, 2^18 buckets of 24 bytes, and half as much again while it grows: a sixth of
        /// the 40 MB that `chime import` may use.)
        private var seen: [String: Int]? = nil
        private var ended = false
        private var started = false
        private var bytesRead = 0
        /// The reminders whose time had passed, and what became of each, in file order.
        public private(set) var adjustments: [Adjustment] = []

        /// - Parameters:
        ///   - source: the file's name in messages ("standard input", "reminders.json").
        ///   - past: what becomes of a one-shot whose time has passed; nil: it is left out,
        ///     as with ``PastOneShots/skip``, and its adjustment says the choice was not made.
        ///   - maxElementBytes, maxDocumentBytes: the bounds (smaller ones in tests).
        public init(
            _ handle: FileHandle,
            source: String,
            now: Date,
            past: PastOneShots? = nil,
            chunkSize: Int = 1_000,
            maxElementBytes: Int = JSONArraySplitter.defaultMaxElementBytes,
            maxDocumentBytes: Int = Reader.maxDocumentBytes
        ) {
            self.handle = handle
            self.source = source
            self.now = now
            self.past = past
            self.chunkSize = chunkSize
            self.maxDocumentBytes = maxDocumentBytes
            splitter = JSONArraySplitter(wrapper: ReminderImport.wrapper, maxElementBytes: maxElementBytes)
        }

        /// The next reminders of the file, nil after the last; throws one usage error naming
        /// the first bad reminder (by position and id) and value, or where the JSON goes wrong.
        public func next() throws(ChimeError) -> [NewReminder]? {
            if !started {
                started = true
                try start()
            }
            while pending.count < chunkSize && !ended {
                try feed(try read())
            }
            guard !pending.isEmpty else { return nil }
            let chunk = pending
            pending.removeAll(keepingCapacity: true)
            return chunk
        }

        private func read() throws(ChimeError) -> Data {
            let block: Data
            do {
                block = try handle.read(upToCount: 1 << 16) ?? Data()
            } catch {
                throw ChimeError(
                    .usage,
                    "\(source) cannot be read (\(error.localizedDescription)): name a JSON file, or - for standard input"
                )
            }
            bytesRead += block.count
            guard bytesRead <= maxDocumentBytes else {
                throw ChimeError(
                    .usage,
                    "\(source) is longer than \(ReminderImport.describeBytes(maxDocumentBytes)): expected a file of reminders of at most that size; split it and import the parts"
                )
            }
            return block
        }

        /// Reads the first bytes, without a UTF-8 byte order mark (not part of the JSON text:
        /// positions count from after it).
        private func start() throws(ChimeError) {
            var head = Data()
            while head.count < 3 {
                let block = try read()
                if block.isEmpty { break }
                head += block
            }
            if head.starts(with: [0xEF, 0xBB, 0xBF]) { head = head.dropFirst(3) }
            try feed(Data(head))
            if head.isEmpty { ended = true }
        }

        private func feed(_ block: Data) throws(ChimeError) {
            do {
                if block.isEmpty {
                    ended = true
                    try splitter.finish()
                } else {
                    try block.withUnsafeBytes { raw in
                        try splitter.feed(raw.bindMemory(to: UInt8.self)) { bytes, index, start in
                            let item = try FlatItem.parse(bytes) ?? self.item(bytes, index: index, start: start)
                            switch try ReminderImport.check(item, index: index, seen: &seen, source: source, now: now, past: past) {
                            case .schedule(let reminder, let adjustment):
                                pending.append(reminder)
                                if let adjustment { adjustments.append(adjustment) }
                            case .leave(let adjustment):
                                adjustments.append(adjustment)
                            }
                        }
                    }
                }
            } catch let error as JSONArraySplitter.SyntaxError {
                let place = JSONSyntax.describe(error.position, found: error.found)
                throw ChimeError(.usage, "\(source): not valid JSON \(place): expected \(ReminderImport.expectedDocument)")
            } catch let error as JSONArraySplitter.KeyError {
                let place = JSONSyntax.describe(error.position)
                switch error.problem {
                case .unknown:
                    throw ChimeError(
                        .usage,
                        "\(source): unknown key \"\(error.key)\" \(place): expected \"reminders\" (an array of reminders)"
                    )
                case .duplicate:
                    throw ChimeError(.usage, "\(source): the key \"\(error.key)\" is given twice (\(place)): give each key once")
                case .missing:
                    throw ChimeError(.usage, "\(source): missing \"reminders\" (\(place)): expected an array of reminders")
                }
            } catch let error as JSONArraySplitter.TooLarge {
                let what = error.index.map { "reminder \($0 + 1)" } ?? "a value"
                throw ChimeError(
                    .usage,
                    "\(source): \(what) (\(JSONSyntax.describe(error.start))) is longer than \(ReminderImport.describeBytes(error.limit)): expected a reminder of at most that size"
                )
            } catch let error as ChimeError {
                throw error
            } catch {
                throw ChimeError(.usage, "\(source): not valid JSON: expected \(ReminderImport.expectedDocument)")
            }
        }

        /// One element decoded alone by `JSONDecoder` (one that ``FlatItem`` leaves to it), or
        /// the error that names it.
        private func item(_ bytes: UnsafeBufferPointer<UInt8>, index: Int, start: JSONArraySplitter.Position) throws(ChimeError) -> Item {
            let name = "\(source): reminder \(index + 1): "
            guard bytes.first == UInt8(ascii: "{") else { throw ChimeError(.usage, "\(name)expected an object") }
            let data = Data(bytes)
            // Foundation's decoder takes the first of a key given twice (Python and jq take the
            // last): neither is surely what the person meant.
            if let repeated = JSONSyntax.repeatedKey(in: data, start: start) {
                throw ChimeError(.usage, "\(name)the key \"\(repeated.key)\" is given twice (\(repeated.place)): give each key once")
            }
            do {
                return try decoder.decode(Item.self, from: data)
            } catch let error as UnknownKey {
                throw ChimeError(.usage, "\(name)unknown key \"\(error.key)\": expected \(ReminderImport.expectedItemKeys)")
            } catch let error as DecodingError {
                if case .dataCorrupted(let context) = error, context.codingPath.isEmpty {
                    let place = JSONSyntax.errorPosition(in: data, start: start).map { " \($0)" } ?? ""
                    throw ChimeError(.usage, "\(name)not valid JSON\(place): expected a reminder (an object)")
                }
                throw ChimeError(.usage, "\(name)\(ReminderImport.describe(error, data: data))")
            } catch {
                throw ChimeError(.usage, "\(name)not valid JSON: expected a reminder (an object)")
            }
        }
    }
}

/// A reminder of the file read straight from its bytes, when it is what nearly every one is: an
/// object of known keys whose values are strings without `\u` escapes, `true`, `false` or
/// `null`. Anything else (numbers, nesting, a key twice, an unknown key, a `\u` escape, bytes
/// that are not UTF-8, anything malformed) is left to `JSONDecoder` (nil), which reads it or
/// names what is wrong: so this reader never accepts what the decoder would refuse, nor reads a
/// value otherwise.
///
/// Hand-written because `JSONDecoder` (a keyed container, boxed keys, `allKeys` to refuse
/// unknown keys, a dictionary look-up per key) took 29% of `chime import`'s 4.1 s on 100,000
/// reminders, 12 µs a reminder (`perf record`, release build); reading the bytes here, with the
/// splitter's pass, takes about 1.5 µs.
enum FlatItem {
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> ReminderImport.Item? {
        var reader = FlatItemReader(bytes: bytes)
        return reader.item()
    }
}

private struct FlatItemReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    enum Value {
        case string(String)
        case bool(Bool)
        case null
    }

    mutating func skipSpace() {
        while index < bytes.count {
            let byte = bytes[index]
            guard byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 else { return }
            index += 1
        }
    }

    mutating func take(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    mutating func item() -> ReminderImport.Item? {
        skipSpace()
        guard take(UInt8(ascii: "{")) else { return nil }
        var item = ReminderImport.Item()
        // The keys read so far, by their place in `itemKeys`: a key twice is the decoder's.
        var given: UInt32 = 0
        skipSpace()
        if !take(UInt8(ascii: "}")) {
            while true {
                skipSpace()
                guard let key = string() else { return nil }
                skipSpace()
                guard take(UInt8(ascii: ":")) else { return nil }
                skipSpace()
                guard let number = ReminderImport.itemKeys.firstIndex(of: key), given & (1 << number) == 0,
                    let value = value(), item.set(key, value)
                else { return nil }
                given |= 1 << number
                skipSpace()
                if take(UInt8(ascii: ",")) { continue }
                guard take(UInt8(ascii: "}")) else { return nil }
                break
            }
        }
        skipSpace()
        return index == bytes.count ? item : nil
    }

    mutating func value() -> Value? {
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "\""): return string().map(Value.string)
        case UInt8(ascii: "t"): return literal("true") ? .bool(true) : nil
        case UInt8(ascii: "f"): return literal("false") ? .bool(false) : nil
        case UInt8(ascii: "n"): return literal("null") ? .null : nil
        default: return nil
        }
    }

    mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard bytes.count - index >= count else { return false }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
        index += count
        return true
    }

    /// A string at `index` (its opening quote), nil when it is not one this reader takes.
    mutating func string() -> String? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = index
        var ascii = true
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = UnsafeBufferPointer(rebasing: bytes[start..<index])
                index += 1
                return ascii ? String(decoding: text, as: UTF8.self) : String(validating: text, as: UTF8.self)
            }
            if byte == UInt8(ascii: "\\") { return escapedString(from: start) }
            // A control character must be escaped (RFC 8259): the decoder names it.
            if byte < 0x20 { return nil }
            if byte >= 0x80 { ascii = false }
            index += 1
        }
        return nil
    }

    /// The rest of a string that has an escape, from its first byte at `start`.
    mutating func escapedString(from start: Int) -> String? {
        var text = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(validating: text, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { return nil }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(escape)
                case UInt8(ascii: "b"): text.append(0x08)
                case UInt8(ascii: "f"): text.append(0x0C)
                case UInt8(ascii: "n"): text.append(0x0A)
                case UInt8(ascii: "r"): text.append(0x0D)
                case UInt8(ascii: "t"): text.append(0x09)
                default: return nil  // \u, or not an escape: the decoder's.
                }
            case 0..<0x20:
                return nil
            default:
                text.append(byte)
            }
        }
        return nil
    }
}

extension ReminderImport.Item {
    /// Sets the value of `key`; false when the key is unknown or the value of another type than
    /// the key's (the decoder's to report).
    fileprivate mutating func set(_ key: String, _ value: FlatItemReader.Value) -> Bool {
        let text: String?
        switch value {
        case .string(let string): text = string
        case .null: text = nil
        case .bool(let flag):
            switch key {
            case "sticky":
                sticky = flag
                return true
            case "kind", "recurring", "next_due_local", "created": return true
            default: return false
            }
        }
        switch key {
        case "id": id = text
        case "title": title = text
        case "body": body = text
        case "at": at = text
        case "in": self.in = text
        case "every": every = text
        case "zone": zone = text
        case "trigger": trigger = text
        case "next_due": nextDue = text
        case "urgency": urgency = text
        case "icon": icon = text
        case "sound": sound = text
        case "app_id": appID = text
        case "sticky":
            guard text == nil else { return false }
            sticky = nil
        // Printed by 'chime list --json', not read back.
        case "kind", "recurring", "next_due_local", "created": break
        default: return false
        }
        return true
    }
}
