import Foundation

/// The server's side of the bus as dbus-monitor logged it (`monitor.log`): each Notify call
/// with its arguments, and the ids the server returned. What a test reads back to see what a
/// person saw: an alert, and what replaced it in place.
extension NotificationServer {
    struct NotifyCall: CustomStringConvertible {
        /// The id of the alert it replaces in place (0: a new alert).
        var replacesID: UInt32
        var summary: String
        var body: String
        /// The actions as sent: key, label, key, label, …
        var actions: [String]
        /// The hints, as dbus-monitor printed them.
        var hints: String
        /// Milliseconds; -1 the server's default, 0 never.
        var timeout: Int32

        var description: String {
            "Notify(replaces \(replacesID), \"\(summary)\", \"\(body)\", actions \(actions), timeout \(timeout), hints \(hints))"
        }
    }

    /// The log's messages, each its header line and the lines of its arguments.
    private static func messages(in log: String) -> [(header: String, arguments: [String])] {
        var messages: [(header: String, arguments: [String])] = []
        for line in log.split(separator: "\n", omittingEmptySubsequences: false) {
            let text = String(line)
            if text.hasPrefix("method call ") || text.hasPrefix("method return ") || text.hasPrefix("signal ") || text.hasPrefix("error ") {
                messages.append((text, []))
            } else if !messages.isEmpty, !text.isEmpty {
                // A top-level argument starts three spaces in; an array's closing bracket, at the
                // same depth, ends the one before.
                if text.hasPrefix("   "), !text.hasPrefix("    "), !text.hasPrefix("   ]") {
                    messages[messages.count - 1].arguments.append(String(text.dropFirst(3)))
                } else if !messages[messages.count - 1].arguments.isEmpty {
                    // An array's members, or the next line of a string that holds a line break.
                    messages[messages.count - 1].arguments[messages[messages.count - 1].arguments.count - 1] += "\n" + text
                }
            }
        }
        return messages
    }

    private static func unquoted(_ argument: String) -> String {
        guard argument.hasPrefix("string \""), argument.hasSuffix("\"") else { return argument }
        return String(argument.dropFirst("string \"".count).dropLast())
    }

    /// Every Notify call in `log`, in order.
    static func notifyCalls(in log: String) -> [NotifyCall] {
        messages(in: log).compactMap { message in
            guard message.header.hasPrefix("method call "), message.header.hasSuffix("member=Notify") else { return nil }
            let arguments = message.arguments
            guard arguments.count >= 8 else { return nil }
            let actions = arguments[5].split(separator: "\n").dropFirst().compactMap { line -> String? in
                let member = line.trimmingCharacters(in: .whitespaces)
                return member.hasPrefix("string \"") ? unquoted(member) : nil
            }
            return NotifyCall(
                replacesID: UInt32(arguments[1].replacingOccurrences(of: "uint32 ", with: "")) ?? 0,
                summary: unquoted(arguments[3]),
                body: unquoted(arguments[4]),
                actions: actions,
                hints: arguments[6],
                timeout: Int32(arguments[7].replacingOccurrences(of: "int32 ", with: "")) ?? -2
            )
        }
    }

    /// The ids the server returned to Notify calls, in order (the only call it answers with one
    /// uint32).
    static func serverIDs(in log: String) -> [UInt32] {
        messages(in: log).compactMap { message in
            guard message.header.hasPrefix("method return "), message.arguments.count == 1, message.arguments[0].hasPrefix("uint32 ")
            else { return nil }
            return UInt32(message.arguments[0].dropFirst("uint32 ".count))
        }
    }

    /// Waits (bounded) until a Notify call replaced a shown alert in place (the server's id of
    /// an earlier alert, no buttons, an expiry of its own) by a confirmation `matching`.
    func waitForConfirmation(_ matching: @escaping (NotifyCall) -> Bool) async -> Bool {
        await waitForLog { log in
            let shownIDs = Set(Self.serverIDs(in: log))
            return Self.notifyCalls(in: log).contains { call in
                matching(call) && shownIDs.contains(call.replacesID) && call.actions.isEmpty && call.timeout > 0
            }
        }
    }

    /// The NotificationClosed signals in `log`: the server's id and the reason (1 expired,
    /// 2 dismissed, 3 closed by a call, 4 undefined).
    static func closedSignals(in log: String) -> [(id: UInt32, reason: UInt32)] {
        messages(in: log).compactMap { message in
            guard message.header.hasPrefix("signal "), message.header.hasSuffix("member=NotificationClosed"),
                message.arguments.count == 2,
                let id = UInt32(message.arguments[0].replacingOccurrences(of: "uint32 ", with: "")),
                let reason = UInt32(message.arguments[1].replacingOccurrences(of: "uint32 ", with: ""))
            else { return nil }
            return (id, reason)
        }
    }

    /// Waits (bounded) until the confirmation `matching` has expired by itself (its server id
    /// closed with reason 1): a person need not close it.
    func waitForConfirmationToExpire(_ matching: @escaping (NotifyCall) -> Bool) async -> Bool {
        await waitForLog(timeout: 15) { log in
            let expired = Set(Self.closedSignals(in: log).filter { $0.reason == 1 }.map(\.id))
            return Self.notifyCalls(in: log).contains { matching($0) && expired.contains($0.replacesID) }
        }
    }
}
