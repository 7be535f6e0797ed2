import CLibcurlLoader
import Foundation
import Synchronization

/// libcurl's functions, opened (and curl_global_init run, once) the first time a transport is
/// made (CLibcurlLoader, for why).
var libcurl: chime_libcurl_api { chime_libcurl().pointee }

/// Why libcurl could not be loaded, or nil once it is.
let libcurlProblem: String? = chime_libcurl_open().map { String(cString: $0) }

/// One HTTP POST attempt: where, which header lines, what body, how long at most.
struct CurlRequest: Sendable {
    var url: String
    /// `Name: value` lines (no CR or LF in them).
    var headers: [String]
    var userAgent: String
    var body: Data
    /// The whole attempt (connect, send, the answer's head and body), and the connect alone.
    var timeout: Duration
}

/// What came back: an answer, a failure before one, or the awaiting task cancelled.
enum CurlResult: Sendable {
    /// The status line's code and reason phrase, the header fields, and at most the first
    /// ``CurlTransport/bodyLimit`` bytes of the body (the rest is read and dropped, so that the
    /// connection can serve the next post).
    case answered(status: Int, reason: String, headers: [(String, String)], body: Data)
    /// libcurl's result code and its message (the error buffer's, else curl_easy_strerror's).
    case failed(CURLcode, String)
    case cancelled
}

/// The webhook's transport: one libcurl multi handle with one easy handle, driven by a thread
/// of its own, one transfer at a time.
///
/// - The thread: curl blocks in poll(2) while it waits for the receiver, so no transfer runs on
///   the caller's thread or on Swift's cooperative pool; ``perform(_:)`` suspends until the
///   thread resumes it.
/// - A multi handle rather than curl_easy_perform: `curl_multi_wakeup` (thread-safe) breaks the
///   thread out of `curl_multi_poll` at once when the awaiting task is cancelled, where an
///   easy handle's progress callback may be called only about once a second while nothing
///   arrives. The multi also owns the connection cache, so the one easy handle, reused for
///   every transfer, finds the kept-alive connection of the post before.
final class CurlTransport: @unchecked Sendable {
    // @unchecked: `multi`, `easy` and `errorBuffer` are used only on the transport's own
    // thread (and curl_multi_wakeup, documented thread-safe, from any); the queue is under `lock`.

    static let bodyLimit = 64 * 1024

    /// A transfer waiting for, or on, the thread; ``cancel()`` may come from any thread.
    final class Job: Sendable {
        let request: CurlRequest
        private let cancelled = Atomic<Bool>(false)
        private let transport: CurlTransport
        init(_ request: CurlRequest, on transport: CurlTransport) {
            self.request = request
            self.transport = transport
        }
        var isCancelled: Bool { cancelled.load(ordering: .acquiring) }
        func cancel() {
            cancelled.store(true, ordering: .releasing)
            transport.cancel(self)
        }
    }

    private struct Queued {
        var job: Job
        var done: CheckedContinuation<CurlResult, Never>
    }

    private let lock = NSCondition()
    private var queue: [Queued] = []
    private var stopping = false
    private var stopped: [CheckedContinuation<Void, Never>] = []
    private var finished = false

    private let multi: UnsafeMutableRawPointer?
    private let easy: UnsafeMutableRawPointer?
    private let errorBuffer: UnsafeMutablePointer<CChar>

    init() {
        if libcurlProblem == nil {
            multi = libcurl.curl_multi_init()
            easy = libcurl.curl_easy_init()
        } else {
            (multi, easy) = (nil, nil)
        }
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
        if let easy { Self.configure(easy, errorBuffer: errorBuffer) }
        let thread = Thread { [self] in run() }
        thread.name = "chime-webhook"
        thread.start()
    }

    deinit {
        errorBuffer.deallocate()
    }

    /// The options every transfer shares.
    private static func configure(_ easy: UnsafeMutableRawPointer, errorBuffer: UnsafeMutablePointer<CChar>) {
        // No signals (SIGALRM for resolver timeouts) in a multi-threaded process.
        _ = chime_curl_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
        _ = chime_curl_setopt_str(easy, CURLOPT_PROTOCOLS_STR, "http,https")
        // No proxy, also none from $http_proxy or $https_proxy: the URL is where the alert goes
        // (as with async-http-client before), and a proxy's logs would see the token in it.
        _ = chime_curl_setopt_str(easy, CURLOPT_PROXY, "")
        // A POST redirected is ambiguous (303 turns it into a GET): configure the final URL.
        _ = chime_curl_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 0)
        _ = chime_curl_setopt_ptr(easy, CURLOPT_ERRORBUFFER, errorBuffer)
        _ = chime_curl_setopt_data_callback(easy, CURLOPT_HEADERFUNCTION, headerCallback)
        _ = chime_curl_setopt_data_callback(easy, CURLOPT_WRITEFUNCTION, writeCallback)
    }

    /// Runs one transfer on the transport's thread and returns what it came to; when the
    /// awaiting task is cancelled the transfer is aborted at once and this returns `.cancelled`.
    func perform(_ request: CurlRequest) async -> CurlResult {
        let job = Job(request, on: self)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (done: CheckedContinuation<CurlResult, Never>) in
                lock.lock()
                guard !stopping else {
                    lock.unlock()
                    done.resume(returning: .failed(CURLE_FAILED_INIT, "the webhook notifier was shut down"))
                    return
                }
                // Cancelled before it was queued (the handler found nothing to take out): no turn.
                guard !job.isCancelled else {
                    lock.unlock()
                    done.resume(returning: .cancelled)
                    return
                }
                queue.append(Queued(job: job, done: done))
                lock.signal()
                lock.unlock()
            }
        } onCancel: {
            job.cancel()
        }
    }

    /// Transfers waiting for their turn (not the one in progress).
    var queuedCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return queue.count
    }

    /// Ends the thread after the transfers queued so far and closes the kept-alive connection;
    /// returns when it is closed. Later calls return at once.
    func shutdown() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            lock.lock()
            if finished {
                lock.unlock()
                done.resume()
                return
            }
            stopping = true
            stopped.append(done)
            lock.signal()
            lock.unlock()
        }
    }

    /// Asks the thread to end without waiting for it (a notifier dropped without shutdown).
    func stop() {
        lock.lock()
        stopping = true
        lock.signal()
        lock.unlock()
    }

    /// A job still queued leaves the queue at once; one in progress is aborted: the thread is
    /// woken from curl_multi_poll (under the lock, so never after the cleanup) and sees its flag.
    fileprivate func cancel(_ job: Job) {
        lock.lock()
        if let index = queue.firstIndex(where: { $0.job === job }) {
            let queued = queue.remove(at: index)
            lock.unlock()
            queued.done.resume(returning: .cancelled)
            return
        }
        if !finished, let multi { _ = libcurl.curl_multi_wakeup(multi) }
        lock.unlock()
    }

    // MARK: The thread

    private func run() {
        while true {
            lock.lock()
            while queue.isEmpty && !stopping { lock.wait() }
            guard !queue.isEmpty else { break }
            let next = queue.removeFirst()
            lock.unlock()
            next.done.resume(returning: transfer(next.job))
        }
        // Still holding the lock: nothing is queued and nothing more will be.
        if let easy { libcurl.curl_easy_cleanup(easy) }
        if let multi { _ = libcurl.curl_multi_cleanup(multi) }
        finished = true
        let waiting = stopped
        stopped = []
        lock.unlock()
        for done in waiting { done.resume() }
    }

    /// What the callbacks collect during one transfer, reached through their context pointer.
    private final class Collected {
        var status = 0
        var reason = ""
        var headers: [(String, String)] = []
        var body = Data()
    }

    private func transfer(_ job: Job) -> CurlResult {
        guard let multi, let easy else {
            let why = libcurlProblem.map { "libcurl could not be loaded: \($0) (Debian's libcurl4 installs it)" }
            return .failed(CURLE_FAILED_INIT, why ?? "libcurl could not be initialised")
        }
        if job.isCancelled { return .cancelled }
        let request = job.request
        let collected = Collected()
        let context = Unmanaged.passUnretained(collected).toOpaque()
        var list: UnsafeMutablePointer<curl_slist>? = nil
        // curl sends `Expect: 100-continue` before a body over 1 KiB and waits for the receiver's
        // go-ahead: an empty `Expect:` leaves it out (one round trip, as every receiver expects).
        for line in request.headers + ["Expect:"] { list = libcurl.curl_slist_append(list, line) }
        defer { libcurl.curl_slist_free_all(list) }
        let millis = max(1, Int(request.timeout.components.seconds * 1000 + request.timeout.components.attoseconds / 1_000_000_000_000_000))
        errorBuffer[0] = 0
        _ = chime_curl_setopt_str(easy, CURLOPT_URL, request.url)
        _ = chime_curl_setopt_str(easy, CURLOPT_USERAGENT, request.userAgent)
        _ = chime_curl_setopt_slist(easy, CURLOPT_HTTPHEADER, list)
        _ = chime_curl_setopt_long(easy, CURLOPT_TIMEOUT_MS, millis)
        _ = chime_curl_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, millis)
        _ = chime_curl_setopt_ptr(easy, CURLOPT_HEADERDATA, context)
        _ = chime_curl_setopt_ptr(easy, CURLOPT_WRITEDATA, context)
        _ = chime_curl_setopt_off(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.count))
        // COPYPOSTFIELDS: curl keeps its own copy of the body for the transfer (a pointer that
        // is never nil, also for an empty body: POSTFIELDSIZE says how much of it to send).
        var body = [UInt8](request.body)
        if body.isEmpty { body = [0] }
        let copied = body.withUnsafeMutableBytes { chime_curl_setopt_ptr(easy, CURLOPT_COPYPOSTFIELDS, $0.baseAddress) }
        guard copied == CURLE_OK else {
            return .failed(copied, libcurl.curl_easy_strerror(copied).map { String(cString: $0) } ?? "curl error \(copied.rawValue)")
        }

        guard libcurl.curl_multi_add_handle(multi, easy) == CURLM_OK else {
            return .failed(CURLE_FAILED_INIT, "libcurl could not start the transfer")
        }
        var result = CURLE_OK
        var cancelled = false
        withExtendedLifetime(collected) {
            while true {
                var running: Int32 = 0
                _ = libcurl.curl_multi_perform(multi, &running)
                if chime_curl_multi_done(multi, &result) != 0 { break }
                if job.isCancelled {
                    cancelled = true
                    break
                }
                // curl shortens the wait to its own next timer (the timeout); a wake-up ends it early.
                _ = libcurl.curl_multi_poll(multi, nil, 0, 1000, nil)
            }
        }
        // Removing a transfer still in progress closes its connection: nothing half-sent is reused.
        _ = libcurl.curl_multi_remove_handle(multi, easy)
        if cancelled { return .cancelled }
        guard result == CURLE_OK else {
            let buffered = String(cString: errorBuffer)
            return .failed(
                result,
                buffered.isEmpty
                    ? libcurl.curl_easy_strerror(result).map { String(cString: $0) } ?? "curl error \(result.rawValue)" : buffered
            )
        }
        var code = 0
        _ = chime_curl_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &code)
        return .answered(
            status: code,
            reason: code == collected.status ? collected.reason : "",
            headers: collected.headers,
            body: collected.body
        )
    }

    /// One header line of the answer: a status line starts a new head (a 1xx before the final
    /// one), a field is kept, the blank line ends it.
    private static let headerCallback: chime_curl_data_callback = { data, size, count, context in
        let length = size * count
        guard let data, let context else { return length }
        let collected = Unmanaged<Collected>.fromOpaque(context).takeUnretainedValue()
        let line = String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        if line.hasPrefix("HTTP/") {
            // `HTTP/1.1 503 Service Unavailable` (HTTP/2 has no reason phrase).
            let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
            collected.status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
            collected.reason = parts.count > 2 ? String(parts[2]) : ""
            collected.headers = []
            collected.body = Data()
        } else if let colon = line.firstIndex(of: ":") {
            collected.headers.append(
                (String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces))
            )
        }
        return length
    }

    /// Body bytes: the first ``CurlTransport/bodyLimit`` kept, the rest read and dropped.
    private static let writeCallback: chime_curl_data_callback = { data, size, count, context in
        let length = size * count
        guard let data, let context else { return length }
        let collected = Unmanaged<Collected>.fromOpaque(context).takeUnretainedValue()
        let room = max(0, CurlTransport.bodyLimit - collected.body.count)
        if room > 0 { collected.body.append(UnsafeRawPointer(data).assumingMemoryBound(to: UInt8.self), count: min(room, length)) }
        return length
    }
}
