import ArgumentParser
import ChimeCore
import ChimePostgres
import Foundation
import Logging
import ServiceLifecycle
import UnixSignals

#if canImport(Glibc)
import Glibc
#endif

/// `chime run` on a PostgreSQL store: one of several runners sharing the database (ChimePostgres's
/// ``PostgresRunner``: leases, a fenced mark, a reaper in every runner, the database's clock,
/// LISTEN/NOTIFY and a slow poll). The families keep to SQLite; plain reminders only.
extension Run {
    func runPostgres(_ url: PostgresURL, logger: Logger) async throws {
        for channel in channels { try PostgresStore.validateChannel(channel) }
        guard Set(channels).count == channels.count else {
            throw ChimeError(.usage, "a channel is given twice in --channel: each once")
        }
        // Unique among the runners: what the leases and the log name, and what `chime list`
        // counts in pg_stat_activity (the server keeps 63 bytes of an application name).
        let owner = Self.ownerName()
        let chosen = notifier ?? .auto
        let choice: NotifierChoice = chosen == .auto && global.json ? .json : chosen
        let sink = try await choice.make(json: global.json, follow: true, webhook: webhook)
        let serving = channels.isEmpty ? [PostgresStore.defaultChannel] : channels
        do {
            try await PostgresStore.withCheckedStore(
                url,
                connections: 2,
                applicationName: "\(PostgresStore.runnerApplicationName) \(owner)",
                logger: PostgresStore.silentLogger
            ) { [lease = Duration.seconds(lease?.seconds ?? 30)] store in
                let runner = PostgresRunner(
                    url: url,
                    store: store,
                    notifier: sink,
                    owner: owner,
                    channels: serving,
                    lease: lease,
                    logger: logger
                )
                logger.info(
                    "Runner started",
                    metadata: ["store": "\(url)", "owner": .string(owner), "channels": .string(serving.joined(separator: ","))]
                )
                let group = ServiceGroup(
                    configuration: .init(
                        services: [
                            .init(service: PostgresRunnerService(runner: runner), successTerminationBehavior: .gracefullyShutdownGroup)
                        ],
                        gracefulShutdownSignals: [.sigterm, .sigint],
                        logger: logger
                    )
                )
                try await group.run()
                let counters = await runner.counters
                logger.info(
                    "Runner stopped",
                    metadata: [
                        "posted": "\(counters.posted)", "lease.lost": "\(counters.leaseLost)", "failed": "\(counters.failed)",
                        "cancelled.before.post": "\(counters.cancelledBeforePost)",
                    ]
                )
            }
        } catch {
            await NotifierChoice.shutDown(sink)
            throw error
        }
        await NotifierChoice.shutDown(sink)
    }

    /// `host:pid:xxxx`: the host and process, and four random letters in case a pid is reused.
    static func ownerName() -> String {
        var name = [CChar](repeating: 0, count: 256)
        let host =
            gethostname(&name, name.count) == 0
            ? String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "host"
        var rng = SystemRandomNumberGenerator()
        let suffix = String((0..<4).map { _ in "abcdefghijklmnopqrstuvwxyz".randomElement(using: &rng)! })
        return "\(host.prefix(32)):\(getpid()):\(suffix)"
    }
}

/// The runner as a service of swift-service-lifecycle: SIGTERM or SIGINT end it gracefully, after
/// the occurrence it is posting (``PostgresRunner/stop()``), not in the middle of it.
struct PostgresRunnerService: Service {
    let runner: PostgresRunner

    func run() async throws {
        try await withGracefulShutdownHandler {
            try await runner.run()
        } onGracefulShutdown: { [runner] in
            Task { await runner.stop() }
        }
    }
}
