import ChimeCore
import ChimeStore
import Foundation

extension CancelOutcome {
    /// What went wrong with a cancel that did happen, as `chime cancel` and the app's Reminders
    /// page say it: too late (`.tooLate`) for an alert the runner had already shown, or a runner
    /// that did not answer whether it had (`.failure`); nil when all went as asked.
    public func problem(zone: TimeZone) -> ChimeError? {
        if !shown.isEmpty {
            let what = shown.map {
                "'\($0.reminderID)' was shown at \(TimeText.local($0.posted, in: zone, seconds: true)) (due \(TimeText.local($0.due, in: zone, seconds: true)))"
            }
            let rest = cancelled.count > 1 || cancelled.contains { $0.trigger.isRecurring } ? "; the rest is cancelled" : ""
            return ChimeError(.tooLate, "too late: " + what.joined(separator: ", ") + rest)
        }
        if !unconfirmed.isEmpty {
            let ids = Set(unconfirmed.map(\.reminderID)).sorted().map { "'\($0)'" }.joined(separator: ", ")
            return ChimeError(
                .failure,
                "cancelled \(ids), but the runner did not answer within \(Int(RunnerControl.answerTimeout)) s whether it had already shown it; 'chime doctor' checks the runner"
            )
        }
        return nil
    }
}
