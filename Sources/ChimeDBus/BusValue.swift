import ChimeCore

/// A value of an `a{sv}` dictionary, as the service reads and writes them.
public enum BusValue: Sendable, Hashable {
    case string(String)
    case int64(Int64)
    case int32(Int32)
    case bool(Bool)
    case strings([String])
    /// An `a(ss)`: a reminder's own actions, each its key and label.
    case actions([Note.Action])
    /// An `a{sv}` (a property's or a signal's details).
    case dictionary([String: BusValue])
    /// A value of another type, by its D-Bus signature (`u`, `ai`, `(ss)`…): refused where a
    /// key wants something else, named in the message.
    case other(signature: String)

    /// The D-Bus signature of the value.
    public var signature: String {
        switch self {
        case .string: "s"
        case .int64: "x"
        case .int32: "i"
        case .bool: "b"
        case .strings: "as"
        case .actions: "a(ss)"
        case .dictionary: "a{sv}"
        case .other(let signature): signature
        }
    }
}
