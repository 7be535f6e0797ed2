import ChimeCore
import Foundation
import Synchronization
import Testing

@testable import ChimePostgres

/// A transaction PostgreSQL ends as a deadlock's victim is run again (PostgresStore.transaction).
@Suite(.timeLimit(.minutes(1)))
struct TransactionRetryTests {
    @Test func aDeadlocksVictimIsRunAgainAndItsWorkIsDoneOnce() async throws {
        try await withFreshDatabase { url in
            try await PostgresStore.withStore(url) { store in
                try store.client.run("CREATE TABLE t (id integer PRIMARY KEY, v integer NOT NULL)")
                try store.client.run("INSERT INTO t VALUES (1, 0), (2, 0)")
                let other = PostgresStore(url)
                defer { other.client.reset() }
                let attempts = Mutex(0)
                let storeHoldsOne = DispatchSemaphore(value: 0)
                let otherHoldsTwo = DispatchSemaphore(value: 0)
                let otherDone = DispatchSemaphore(value: 0)
                // The other connection takes row 2, then waits for row 1, which the store holds:
                // with a long deadlock_timeout, the store's short one finds the cycle first, and
                // the store's transaction is the victim (superuser settings: the test server's role).
                let thread = Thread {
                    storeHoldsOne.wait()
                    _ = try? other.client.transaction { session in
                        try session.run("SET LOCAL deadlock_timeout = '30s'")
                        try session.run("UPDATE t SET v = v + 10 WHERE id = 2")
                        otherHoldsTwo.signal()
                        try session.run("UPDATE t SET v = v + 10 WHERE id = 1")
                    }
                    otherDone.signal()
                }
                thread.start()
                try store.transaction { session in
                    let attempt = attempts.withLock { count in
                        count += 1
                        return count
                    }
                    try session.run("SET LOCAL deadlock_timeout = '200ms'")
                    try session.run("UPDATE t SET v = v + 1 WHERE id = 1")
                    if attempt == 1 {
                        storeHoldsOne.signal()
                        otherHoldsTwo.wait()
                    }
                    try session.run("UPDATE t SET v = v + 1 WHERE id = 2")
                }
                otherDone.wait()
                #expect(attempts.withLock { $0 } == 2)
                let values = try store.client.rows("SELECT v FROM t ORDER BY id").map { try $0.decode(Int32.self) }
                #expect(values == [11, 11])
            }
        }
    }
}
