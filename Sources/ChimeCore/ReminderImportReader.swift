import Foundation

extension ReminderImport {
    /// Reads a file of reminders as a stream, a chunk of reminders at a time: the array is split
    /// into its elements as the bytes arrive (``JSONArraySplitter``) and each chunk of elements
    /// is decoded with `JSONDecoder`, so memory stays flat however long the file.
    ///
    /// A file that is not an array (the object form of `chime list --json`, or not JSON at all)
    /// is read whole and decoded as ``reminders(from:source:now:)`` does.
    public final class Reader {
        private let handle: FileHandle
        private let source: String
        private let now: Date
        private let chunkSize: Int
        private let decoder = JSONDecoder()
        private var splitter = JSONArraySplitter()
        private var pending: [JSONArraySplitter.Element] = []
        private var seen: [String: Int] = [:]
        private var ended = false
        /// The whole file's reminders when it is not an array, handed out in chunks.
        private var whole: ArraySlice<NewReminder>?
        private var started = false

        /// - Parameter source: the file's name in messages ("standard input", "reminders.json").
        public init(_ handle: FileHandle, source: String, now: Date, chunkSize: Int = 1_000) {
            self.handle = handle
            self.source = source
            self.now = now
            self.chunkSize = chunkSize
        }

        /// The next reminders of the file, nil after the last; throws one usage error naming
        /// the first bad reminder (by position and id) and value, or where the JSON goes wrong.
        public func next() throws(ChimeError) -> [NewReminder]? {
            if !started {
                started = true
                try start()
            }
            if var whole {
                guard !whole.isEmpty else { return nil }
                let chunk = Array(whole.prefix(chunkSize))
                whole = whole.dropFirst(chunkSize)
                self.whole = whole
                return chunk
            }
            while pending.count < chunkSize && !ended {
                try feed(try read())
            }
            guard !pending.isEmpty else { return nil }
            let elements = pending
            pending.removeAll(keepingCapacity: true)
            return try reminders(elements)
        }

        private func read() throws(ChimeError) -> Data {
            do {
                return try handle.read(upToCount: 1 << 16) ?? Data()
            } catch {
                throw ChimeError(
                    .usage,
                    "\(source) cannot be read (\(error.localizedDescription)): name a JSON file, or - for standard input"
                )
            }
        }

        /// Reads up to the first byte that is not white space: an array is streamed, anything
        /// else read whole.
        private func start() throws(ChimeError) {
            var head = Data()
            while true {
                let block = try read()
                head += block
                let first = head.first { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }
                if first == UInt8(ascii: "[") {
                    try feed(head)
                    return
                }
                if first != nil || block.isEmpty {
                    while true {
                        let more = try read()
                        if more.isEmpty { break }
                        head += more
                    }
                    whole = try ReminderImport.reminders(from: head, source: source, now: now)[...]
                    return
                }
            }
        }

        private func feed(_ block: Data) throws(ChimeError) {
            do {
                if block.isEmpty {
                    ended = true
                    try splitter.finish()
                } else {
                    try splitter.feed(block) { pending.append($0) }
                }
            } catch let error as JSONArraySplitter.SyntaxError {
                let place = JSONSyntax.describe(error.position, found: error.found)
                throw ChimeError(.usage, "\(source): not valid JSON \(place): expected an array of reminders")
            } catch {
                throw ChimeError(.usage, "\(source): not valid JSON: expected an array of reminders")
            }
        }

        /// The reminders of `elements`, decoded in one call; when that fails, one by one to
        /// name the first bad one.
        private func reminders(_ elements: [JSONArraySplitter.Element]) throws(ChimeError) -> [NewReminder] {
            var text: [UInt8] = [UInt8(ascii: "[")]
            text.reserveCapacity(elements.reduce(2) { $0 + $1.bytes.count + 1 })
            for (offset, element) in elements.enumerated() {
                if offset > 0 { text.append(UInt8(ascii: ",")) }
                text += element.bytes
            }
            text.append(UInt8(ascii: "]"))
            let items: [Item]
            do {
                items = try decoder.decode([Item].self, from: Data(text))
            } catch {
                for element in elements { _ = try item(element) }
                throw ChimeError(.usage, "\(source): not valid JSON: expected an array of reminders")
            }
            var batch: [NewReminder] = []
            batch.reserveCapacity(items.count)
            for (element, item) in zip(elements, items) {
                batch.append(try ReminderImport.check(item, index: element.index, seen: &seen, source: source, now: now))
            }
            return batch
        }

        /// One element decoded alone, or the error that names it.
        private func item(_ element: JSONArraySplitter.Element) throws(ChimeError) -> Item {
            let name = "\(source): reminder \(element.index + 1): "
            guard element.bytes.first == UInt8(ascii: "{") else { throw ChimeError(.usage, "\(name)expected an object") }
            do {
                return try decoder.decode(Item.self, from: Data(element.bytes))
            } catch let error as UnknownKey {
                throw ChimeError(.usage, "\(name)unknown key \"\(error.key)\": expected \(ReminderImport.expectedItemKeys)")
            } catch let error as DecodingError {
                if case .dataCorrupted(let context) = error, context.codingPath.isEmpty {
                    let place = JSONSyntax.errorPosition(in: Data(element.bytes), start: element.start).map { " \($0)" } ?? ""
                    throw ChimeError(.usage, "\(name)not valid JSON\(place): expected a reminder (an object)")
                }
                throw ChimeError(.usage, "\(name)\(ReminderImport.describe(error, data: Data(element.bytes)))")
            } catch {
                throw ChimeError(.usage, "\(name)not valid JSON: expected a reminder (an object)")
            }
        }
    }
}
