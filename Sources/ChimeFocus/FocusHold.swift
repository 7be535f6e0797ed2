import ChimeCore

extension FocusFamily {
    /// While a session runs, ordinary alerts wait (unless the person turned it off with
    /// `chime quiet focus-hold off`) and come as one summary when the tree is planted or the
    /// session is given up. A paused session does not hold: pausing is stepping out of focus, so
    /// what was held comes then, and a session left paused never silences reminders for long.
    public func hold() throws -> FamilyHold? {
        // A read (the settle decides without writing): its errors go to the scheduler's log,
        // never swallowed (a store recovering from a removed log says so there).
        guard let session = try timer.current().openSession, session.state == .active else { return nil }
        // Until the session's end as the awake clock gives it now (a suspend moves it later).
        let end = FocusTimer.expectedEnd(session, at: timer.clock.now())
        return FamilyHold(reason: "focus session", detail: "focus session #\(session.id)", until: end)
    }
}
