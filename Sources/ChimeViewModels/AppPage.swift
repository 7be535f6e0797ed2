/// The Chime app's pages, in the order of its view switcher: `chime app PAGE` opens one, by
/// this name.
public enum AppPage: String, CaseIterable, Sendable {
    case today, reminders, focus, doses, gateway

    /// The page's title, its accessible name in the view switcher.
    public var title: String {
        switch self {
        case .today: "Today"
        case .reminders: "Reminders"
        case .focus: "Focus"
        case .doses: "Doses"
        case .gateway: "Gateway"
        }
    }

    /// Its keyboard shortcut (GNOME's convention for tabs), in the switcher's order: `<Alt>1` for
    /// Today … `<Alt>5` for Gateway, as GTK parses an accelerator.
    public var accelerator: String { "<Alt>\(number)" }

    /// The shortcut as a person reads it: `Alt+3`.
    public var shortcut: String { "Alt+\(number)" }

    private var number: Int { (Self.allCases.firstIndex(of: self) ?? 0) + 1 }

    /// The accepted names, for an error naming a bad one: `today, reminders, focus, doses or gateway`.
    public static var accepted: String {
        let names = allCases.map(\.rawValue)
        return names.dropLast().joined(separator: ", ") + " or " + names.last!
    }
}

/// How the Focus page words the tree's stage (1 to 5), for the picture's accessible description.
public enum TreeStageText {
    public static func describe(_ stage: Int) -> String {
        let names = ["A seed", "A sprout", "A sapling", "A young tree", "A grown tree"]
        return "\(names[min(max(stage, 1), 5) - 1]), stage \(min(max(stage, 1), 5)) of 5"
    }
}
