import ChimeViewModels
import Testing

/// The app's pages as `chime app PAGE` names them, and the tree's stage as the Focus page says it.
struct AppPageTests {
    @Test func thePagesAreNamedInTheSwitchersOrderAndTheAcceptedListReadsAsASentence() {
        #expect(AppPage.allCases.map(\.title) == ["Today", "Reminders", "Focus", "Doses", "Gateway"])
        #expect(AppPage.accepted == "today, reminders, focus, doses or gateway")
        #expect(AppPage(rawValue: "focus") == .focus)
        #expect(AppPage(rawValue: "Focus") == nil)
    }

    @Test func eachPageHasItsAltNumberShortcutInTheSwitchersOrder() {
        #expect(AppPage.allCases.map(\.accelerator) == ["<Alt>1", "<Alt>2", "<Alt>3", "<Alt>4", "<Alt>5"])
        #expect(AppPage.focus.shortcut == "Alt+3")
        #expect(AppPage.gateway.shortcut == "Alt+5")
    }

    @Test func theTreesStageIsWordedFromSeedToGrownAndClamped() {
        #expect(TreeStageText.describe(1) == "A seed, stage 1 of 5")
        #expect(TreeStageText.describe(5) == "A grown tree, stage 5 of 5")
        #expect(TreeStageText.describe(0) == "A seed, stage 1 of 5")
        #expect(TreeStageText.describe(9) == "A grown tree, stage 5 of 5")
    }
}
