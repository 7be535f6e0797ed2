import CLinux
import ChimeCore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The runner's wake-up socket: a Unix datagram socket. The CLI sends one byte after it
/// changes the store; the runner drains them and runs a pass. Datagrams carry no data the
/// runner trusts: a poke only says "look at the store again".
///
/// A cancel that caught occurrences in flight sends a question instead ("q", then a line
/// `REMINDER_KEY DUE_MICROS` per occurrence) from a socket of its own (autobound, abstract),
/// and the runner answers there ("a", then `REMINDER_KEY DUE_MICROS POSTED_MICROS` for each it
/// has shown): see ``DeliveryQuery``. A command that wants the alerts shown for some reminders
/// closed sends "w", then one reminder id a line: the runner withdraws them through its notifier.
public enum WakeSocket {
    /// Binds the runner's socket at `path` (mode 0600), replacing a stale one.
    static func bind(path: String) throws(ChimeError) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw ChimeError(.failure, "cannot create the wake-up socket: \(String(cString: strerror(errno)))") }
        // Only a runner holding the store's lock gets here, so a socket file left at `path` is stale.
        var info = stat()
        if lstat(path, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFSOCK, info.st_uid == geteuid() else {
                close(fd)
                throw ChimeError(
                    .failure,
                    "'\(path)' exists and is not this user's socket: refusing to replace it; remove it and start the runner again"
                )
            }
            unlink(path)
        }
        let result = withAddress(path) { address, length in
            let oldMask = umask(0o177)
            defer { umask(oldMask) }
            return Glibc.bind(fd, address, length)
        }
        guard let result, result == 0 else {
            let reason = result == nil ? "the path is too long for a Unix socket" : String(cString: strerror(errno))
            close(fd)
            throw ChimeError(.failure, "cannot bind the wake-up socket '\(path)': \(reason)")
        }
        // Each datagram's sender, to tell this process's own (its D-Bus service's) from others'.
        _ = chime_pass_credentials(fd)
        return fd
    }

    /// Pokes the runner listening at `path`. Returns false when none is listening.
    public static func poke(path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var byte: UInt8 = 0x70
        let sent = withAddress(path) { address, length in sendto(fd, &byte, 1, 0, address, length) }
        guard let sent else { return false }
        // A full queue (EAGAIN) means a runner is there with pokes still to read: enough.
        return sent == 1 || errno == EAGAIN
    }

    /// Drains every pending datagram; returns how many there were.
    static func drain(_ fd: Int32) -> Int {
        drain(fd, queries: { _ in }, withdrawals: { _ in })
    }

    /// Drains every pending datagram, handing each question to `queries` (with the answer
    /// going back to its sender over `fd`) and each sender's pid to `sender` (0 when unknown);
    /// returns how many datagrams there were.
    static func drain(
        _ fd: Int32,
        queries: ([DeliveryQuery]) -> Void,
        withdrawals: ([Withdrawal]) -> Void,
        sender senderPID: (pid_t) -> Void = { _ in }
    ) -> Int {
        var buffer = [UInt8](repeating: 0, count: maxDatagram)
        var count = 0
        var found: [DeliveryQuery] = []
        var withdraw: [Withdrawal] = []
        while true {
            var sender = sockaddr_storage()
            var senderLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
            var pid = pid_t()
            let received = chime_recv_with_pid(fd, &buffer, buffer.count, &sender, &senderLength, &pid)
            guard received >= 0 else { break }
            count += 1
            senderPID(pid)
            if received > 1, buffer[0] == UInt8(ascii: "w") {
                // Identifiers are checked as the CLI checks them: nothing else is looked up.
                withdraw += String(decoding: buffer[1..<received], as: UTF8.self).split(separator: "\n").compactMap(Self.withdrawal)
                continue
            }
            guard received > 1, buffer[0] == UInt8(ascii: "q"), senderLength > socklen_t(MemoryLayout<sa_family_t>.size) else { continue }
            let keys = parseLines(buffer[1..<received]).compactMap { fields in
                fields.count == 2 ? OccurrenceKey(reminderKey: fields[0], dueMicros: fields[1]) : nil
            }
            let address = withUnsafeBytes(of: &sender) { Array($0.prefix(Int(senderLength))) }
            found.append(
                DeliveryQuery(keys: keys) { shown in
                    var text = "a\n"
                    for (key, postedAt) in shown { text += "\(key.reminderKey) \(key.dueMicros) \(postedAt.micros)\n" }
                    let bytes = Array(text.utf8)
                    _ = address.withUnsafeBytes { raw in
                        sendto(fd, bytes, bytes.count, 0, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
                    }
                }
            )
        }
        if !found.isEmpty { queries(found) }
        if !withdraw.isEmpty { withdrawals(withdraw) }
        return count
    }

    /// One line of a withdrawal datagram: `ID`, or `ID<TAB>TITLE<TAB>BODY` for an alert to
    /// replace by a confirmation. The identifier is checked as the CLI checks it; nothing else
    /// is looked up. (The texts are shown as they are, in an alert that replaces Chime's own.)
    static func withdrawal(_ line: Substring) -> Withdrawal? {
        let fields = line.split(separator: "\t", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        guard (try? ReminderIdentifier.validate(fields[0])) != nil else { return nil }
        guard fields.count > 1 else { return Withdrawal(id: fields[0]) }
        let confirmation = Withdrawal.Confirmation(title: fields[1], body: fields.count > 2 ? fields[2] : "")
        return Withdrawal(id: fields[0], confirmation: confirmation)
    }

    /// The line ``withdrawal(_:)`` reads back: tabs and line breaks in the texts become spaces.
    static func line(_ withdrawal: Withdrawal) -> String {
        guard let confirmation = withdrawal.confirmation else { return withdrawal.id }
        func flat(_ text: String) -> String {
            String(text.map { $0 == "\t" || $0.isNewline ? " " : $0 })
        }
        return [withdrawal.id, flat(confirmation.title), flat(confirmation.body)].joined(separator: "\t")
    }

    /// Asks the runner listening at `path` to withdraw the alerts shown for reminders `ids`.
    /// Returns false when no runner listens there.
    public static func withdraw(path: String, ids: [String]) -> Bool {
        withdraw(path: path, ids.map { Withdrawal(id: $0) })
    }

    /// Asks the runner listening at `path` to withdraw the alerts `withdrawals` name, or replace
    /// them by their confirmations. Returns false when no runner listens there.
    public static func withdraw(path: String, _ withdrawals: [Withdrawal]) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let bytes = Array(("w\n" + withdrawals.map(line).joined(separator: "\n")).utf8)
        guard bytes.count < maxDatagram else { return false }
        let sent = withAddress(path) { address, length in sendto(fd, bytes, bytes.count, 0, address, length) }
        return sent == bytes.count
    }

    /// What a runner answered about occurrences a cancel caught in flight.
    public enum Answer: Sendable, Equatable {
        /// The runner answered: these of the keys asked about it had shown, at these instants.
        case answered([OccurrenceKey: Date])
        /// No runner listens at the path.
        case noRunner
        /// A runner took the question and did not answer in time.
        case noAnswer
        /// `stillWaiting` said to stop waiting (the runner died or is stopped).
        case gaveUp
    }

    /// Asks the runner listening at `path` which of `keys` it has shown (see ``DeliveryQuery``),
    /// waiting at most `timeout` seconds for its answer, and while `stillWaiting()` (asked every
    /// 50 ms) says the runner can still answer.
    public static func ask(
        path: String,
        keys: [OccurrenceKey],
        timeout: TimeInterval,
        stillWaiting: () -> Bool = { true }
    ) -> Answer {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return .noRunner }
        defer { close(fd) }
        // Autobind: an address of the kernel's choosing in the abstract namespace (no file), for the answer.
        var own = sockaddr_un()
        own.sun_family = sa_family_t(AF_UNIX)
        let bound = withUnsafePointer(to: &own) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sa_family_t>.size)) }
        }
        guard bound == 0 else { return .noRunner }
        // Questions of at most `chunk` keys, each well under a datagram's size.
        let chunk = 1_000
        var questions = 0
        for start in stride(from: 0, to: keys.count, by: chunk) {
            var text = "q\n"
            for key in keys[start..<min(start + chunk, keys.count)] { text += "\(key.reminderKey) \(key.dueMicros)\n" }
            let bytes = Array(text.utf8)
            let sent = withAddress(path) { address, length in sendto(fd, bytes, bytes.count, 0, address, length) }
            guard let sent, sent == bytes.count else { return questions == 0 ? .noRunner : .noAnswer }
            questions += 1
        }
        var shown: [OccurrenceKey: Date] = [:]
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: maxDatagram)
        while questions > 0 {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return .noAnswer }
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let polled = poll(&ready, 1, Int32(min(remaining * 1000, 50).rounded(.up)))
            if polled < 0 && errno == EINTR { continue }
            guard polled > 0 else {
                if !stillWaiting() { return .gaveUp }
                continue
            }
            let received = recv(fd, &buffer, buffer.count, 0)
            guard received > 0, buffer[0] == UInt8(ascii: "a") else { continue }
            questions -= 1
            for fields in parseLines(buffer[1..<received]) where fields.count == 3 {
                shown[OccurrenceKey(reminderKey: fields[0], dueMicros: fields[1])] = Date(micros: fields[2])
            }
        }
        return .answered(shown)
    }

    /// The largest datagram either side reads (a question of 1,000 keys is under 40 KB).
    static let maxDatagram = 65_536

    /// Lines of space-separated integers; lines that are not are left out.
    private static func parseLines(_ bytes: ArraySlice<UInt8>) -> [[Int64]] {
        String(decoding: bytes, as: UTF8.self).split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ").map { Int64($0) }
            return fields.contains(nil) ? nil : fields.compactMap { $0 }
        }
    }

    private static func withAddress<T>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                body($0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
    }
}
