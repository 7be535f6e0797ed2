/// One labelled line of a screen: `Current streak` `3 days`.
public struct LabeledValue: Sendable, Hashable {
    public var label: String
    public var value: String

    public init(_ label: String, _ value: String) {
        self.label = label
        self.value = value
    }
}

extension Array where Element == LabeledValue {
    init(_ rows: [(label: String, value: String)]) {
        self = rows.map { LabeledValue($0.label, $0.value) }
    }
}
