import Foundation

extension Reminder {
    /// What `chime edit` would make of this pending reminder, checked by the rules both stores
    /// keep (one function, not one copy per store): only a plain reminder is edited
    /// (a family's by its own commands), the title and body as `chime in` checks them, and a
    /// new time only for a one-shot, and only after `now` (the store's clock). The store then
    /// writes it.
    /// - Returns: the reminder as edited (its time moved when `at` is given).
    /// - Throws: `.conflict` for a family's reminder, `.usage` for a bad title or body, a
    ///   recurring reminder given `at`, or a time not after `now`.
    /// - Parameter command: the command it runs when it fires from now on (``CommandEdit``);
    ///   nil leaves it as it is.
    public func edited(
        title: String?,
        body: String?,
        at: Date?,
        command: CommandEdit? = nil,
        now: Date
    ) throws(ChimeError) -> Reminder {
        guard kind == "plain" else { throw ChimeError.notEditable(id: id, kind: kind) }
        let checked = try NewReminder(id: id, title: title ?? self.title, body: body ?? self.body, trigger: trigger).validated()
        var edited = self
        edited.title = checked.title
        edited.body = checked.body
        if let at {
            guard case .once = trigger else {
                throw ChimeError(
                    .usage,
                    "'\(id)' repeats (\(trigger.summary)): --at moves a one-shot only; to change a rule, schedule it again with the same --id"
                )
            }
            guard at > now else { throw ChimeError(.usage, "the new time is in the past: give a future time") }
            edited.trigger = .once(at)
            edited.nextDue = at
        }
        switch command {
        case nil: break
        case .set(let new): edited.command = try new.validated()
        case .remove: edited.command = nil
        }
        return edited
    }
}

/// What `chime edit` does to a reminder's command (`--exec`, `--exec-shell`, `--no-exec`).
public enum CommandEdit: Sendable, Hashable {
    /// Runs this command when it fires, instead of the one it had, if any.
    case set(ReminderCommand)
    /// Runs none.
    case remove
}
