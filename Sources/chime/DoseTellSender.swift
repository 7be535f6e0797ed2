import ChimeConfig
import ChimeCore
import ChimeDoses
import ChimeWebhook
import Foundation

/// Sends the messages to someone else about doses (`chime med add --tell`) as the push and
/// webhook notifiers post alerts, with their delivery rules (timeouts, quick retries, no
/// secret in an error): an ntfy topic on the config's ntfy server with its token, or a webhook
/// URL, which gets the alert's JSON (`"event": "alert"`, `"kind": "x-chime.dose-tell"`, the
/// title and the message as `body`) under an idempotency key that is the same for each retry.
struct DoseTellSender: DoseTeller {
    /// The config's ntfy server and token, read once when the runner starts (or why not).
    let ntfy: Result<(server: WebhookURL, token: String?), ChimeError>

    init(config: Config) {
        do throws(ChimeError) {
            ntfy = .success(try config.ntfyServerForTells())
        } catch {
            ntfy = .failure(error)
        }
    }

    func send(_ tell: DoseTell, title: String, message: String) async throws {
        var note = Note(id: "dose-tell-\(tell.id)", title: title, body: message, postedAt: tell.recordedAt)
        note.category = "x-chime.dose-tell"
        switch tell.channel {
        case .ntfy(let topic):
            let (server, token) = try ntfy.get()
            let notifier = PushNotifier(.init(.ntfy(topic: topic), server: server, token: token))
            do {
                _ = try await notifier.post(note)
            } catch {
                await notifier.shutdown()
                throw error
            }
            await notifier.shutdown()
        case .webhook(let url):
            _ = try await WebhookNotifier.withWebhookNotifier(.init(url: url)) { try await $0.post(note) }
        }
    }
}
