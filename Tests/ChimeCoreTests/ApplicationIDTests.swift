import ChimeCore
import Testing

/// Chime's application id, GNOME's name for an application's notification settings, and what
/// carrying the old id's settings over does.
struct ApplicationIDTests {
    @Test func theIdIsReverseDNSWithChimeInIt() {
        #expect(ApplicationID.current == "io.github.chime.Chime")
        #expect(ApplicationID.previous == "chime")
    }

    /// As gnome-shell's NotificationApplicationPolicy._canonicalizeId: lowercase, each character
    /// but a-z, 0-9 and '-' a dash, runs of dashes one dash; the `.desktop` suffix dropped first.
    @Test(arguments: [
        ("chime", "chime"),
        ("chime.desktop", "chime"),
        ("io.github.chime.Chime", "io-github-chime-chime"),
        ("io.github.chime.Chime.desktop", "io-github-chime-chime"),
        ("org.gnome.Nautilus", "org-gnome-nautilus"),
        ("my_app--2..x", "my-app-2-x"),
        ("Émile", "-mile"),
    ])
    func gnomeSettingsName(_ id: String, _ name: String) {
        #expect(ApplicationID.gnomeSettingsName(id) == name)
    }

    @Test func gnomeSettingsPaths() {
        #expect(ApplicationID.gnomeSettingsPath("chime") == "/org/gnome/desktop/notifications/application/chime/")
        #expect(
            ApplicationID.gnomeSettingsPath(ApplicationID.current) == "/org/gnome/desktop/notifications/application/io-github-chime-chime/"
        )
    }

    @Test func settingsSetForTheOldIdAreCarriedWithTheNewChild() {
        let plan = NotificationSettingsCarryOver.plan(
            oldSet: ["show-banners": "false", "enable-sound-alerts": "false", "application-id": "'chime.desktop'"],
            newSet: [],
            children: ["org-gnome-nautilus", "chime"]
        )
        #expect(
            plan
                == .carry(
                    values: ["show-banners": "false", "enable-sound-alerts": "false"],
                    applicationID: "io.github.chime.Chime.desktop",
                    children: ["org-gnome-nautilus", "chime", "io-github-chime-chime"]
                )
        )
    }

    @Test func aChildListedAlreadyIsNotListedTwice() {
        let plan = NotificationSettingsCarryOver.plan(
            oldSet: ["enable": "false"],
            newSet: [],
            children: ["chime", "io-github-chime-chime"]
        )
        #expect(
            plan
                == .carry(
                    values: ["enable": "false"],
                    applicationID: "io.github.chime.Chime.desktop",
                    children: ["chime", "io-github-chime-chime"]
                )
        )
    }

    /// gnome-shell writes application-id itself when an application first notifies: not a choice.
    @Test func onlyTheApplicationIdIsNothingToCarry() {
        #expect(
            NotificationSettingsCarryOver.plan(oldSet: ["application-id": "'chime.desktop'"], newSet: [], children: ["chime"])
                == .nothingSet
        )
        #expect(NotificationSettingsCarryOver.plan(oldSet: [:], newSet: [], children: []) == .nothingSet)
    }

    @Test func theNewIdsOwnSettingsAreLeftAlone() {
        #expect(NotificationSettingsCarryOver.plan(oldSet: ["enable": "false"], newSet: ["show-banners"], children: []) == .newAlreadySet)
        // Its application-id alone (gnome-shell saw an alert) is not a setting of its own.
        #expect(
            NotificationSettingsCarryOver.plan(oldSet: ["enable": "false"], newSet: ["application-id"], children: [])
                == .carry(values: ["enable": "false"], applicationID: "io.github.chime.Chime.desktop", children: ["io-github-chime-chime"])
        )
    }
}
