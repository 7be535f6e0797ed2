import ChimeCore
import Testing

/// A location that may carry a secret is shown redacted, whether or not it parses.
struct RedactionTests {
    @Test(arguments: [
        ("postgresql://alice:secret@db.example:5432/chime", "postgresql://alice:***@db.example:5432/chime"),
        ("postgres://alice:s%40cret@db.example/chime", "postgres://alice:***@db.example/chime"),
        ("postgresql://db.example/chime?user=alice&password=secret", "postgresql://db.example/chime?user=alice&password=***"),
        ("postgresql:///chime?PASSWORD=secret&host=/run/postgresql", "postgresql:///chime?PASSWORD=***&host=/run/postgresql"),
        ("postgresql:///chime?pass%77ord=secret", "postgresql:///chime?pass%77ord=***"),
        // Not URLs URLComponents takes: a '/', a '?' or a space in the password.
        ("postgresql://alice:sec/ret@db.example/chime", "postgresql://alice:***@db.example/chime"),
        ("postgresql://alice:sec?ret@db.example/chime?password=secret", "postgresql://alice:***@db.example/chime?password=***"),
        ("postgresql://alice:sec ret@db.example/chime", "postgresql://alice:***@db.example/chime"),
        ("postgresql:?password=secret", "postgresql:?password=***"),
        // Nothing secret: as it is.
        ("postgresql:///chime?host=/run/postgresql&user=alice", "postgresql:///chime?host=/run/postgresql&user=alice"),
        ("postgresql://h:5432/chime?user=a@b", "postgresql://h:5432/chime?user=a@b"),
        ("postgresql://alice@db.example/chime", "postgresql://alice@db.example/chime"),
        ("/home/me/.local/share/chime/chime.sqlite", "/home/me/.local/share/chime/chime.sqlite"),
    ])
    func aStoreLocationShowsNoPassword(_ text: String, _ shown: String) {
        #expect(Redaction.redacted(text) == shown)
    }

    @Test(arguments: [
        ("https://bob:pw@hooks.example/h?token=secret&team=a#top", "https://bob:***@hooks.example/h?token=***&team=***#top"),
        ("http://127.0.0.1:8080/hook?secret-token", "http://127.0.0.1:8080/hook?***"),
        ("http://127.0.0.1:8080/hook", "http://127.0.0.1:8080/hook"),
        ("http://bob@hooks.example/h", "http://bob@hooks.example/h"),
        ("http://bob:pw@hooks.example:99999/h?token=secret", "http://bob:***@hooks.example:99999/h?token=***"),
    ])
    func aWebhookURLShowsNoQueryValueAndNoPassword(_ text: String, _ shown: String) {
        #expect(Redaction.redacted(text, queryValues: .all) == shown)
        #expect(WebhookURL.redacted(text) == shown)
    }

    @Test(arguments: [
        ("https://hooks.slack.example/services/T0/B0/XyZ", "https://hooks.slack.example/***"),
        ("https://bob:pw@hooks.example:8443/h/k?token=secret#top", "https://bob:***@hooks.example:8443/***?token=***#top"),
        ("http://127.0.0.1:8080/", "http://127.0.0.1:8080/"),
        ("http://127.0.0.1:8080?k=v", "http://127.0.0.1:8080?k=***"),
        ("http://alice:pa/ss@hooks.example/h", "http://alice:***@hooks.example/***"),
        ("", ""),
    ])
    func withItsPathAWebhookURLShowsNoPathEither(_ text: String, _ shown: String) {
        #expect(Redaction.redacted(text, queryValues: .all, path: true) == shown)
    }

    @Test func aWebhookURLsCredentialsBecomeBasicAuthorizationAndLeaveTheURL() throws {
        let url = try WebhookURL("https://bob:p%40ss@hooks.example/h?token=t")
        #expect(url.authorization == "Basic Ym9iOnBAc3M=")  // base64("bob:p@ss")
        #expect(url.requestURL == "https://hooks.example/h?token=t")
        #expect(url.carriesSecret)
        #expect("\(url)" == "https://bob:***@hooks.example/h?token=***")
        let plain = try WebhookURL("http://127.0.0.1:8080/hook")
        #expect(plain.authorization == nil && !plain.carriesSecret && plain.requestURL == plain.text)
    }
}
