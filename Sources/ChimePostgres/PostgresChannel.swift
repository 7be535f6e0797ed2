import ChimeCore

extension PostgresStore {
    /// The channel of a reminder scheduled without one, and the one a runner serves by default.
    public static let defaultChannel = "default"

    /// What a channel name may be: what ``validateChannel(_:)`` accepts, for messages and help.
    public static let acceptedChannel = "1-64 characters of a-z, 0-9, '.', '_' and '-'"

    /// Checks a channel name (of a reminder, or one a runner serves): 1 to 64 characters of
    /// `[a-z0-9._-]`, so that it is safe in a log line, a URL and a shell word as it is.
    /// - Throws: `.usage`, one line naming the value and what is accepted.
    public static func validateChannel(_ channel: String) throws(ChimeError) {
        let allowed = channel.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
        }
        guard allowed, (1...64).contains(channel.utf8.count) else {
            throw ChimeError.invalid("channel", channel, expected: acceptedChannel)
        }
    }
}
