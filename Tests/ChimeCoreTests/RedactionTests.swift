import ChimeCore
import Testing

/// Issue 31: a location that may carry a secret is shown redacted, whether or not it parses.
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
}
