import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A process's CPU time and age, from `/proc/PID/stat` (Linux): for the figures of the gate's
/// window and of `chime-bench`.
public enum ProcessStat {
    /// User + system CPU time `pid` (this process by default) used so far, in seconds.
    public static func cpuSeconds(_ pid: String = "self") -> Double? {
        guard let fields = fields(pid), fields.count > 14, let user = Double(fields[11]), let system = Double(fields[12]) else {
            return nil
        }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Seconds since `pid` (this process by default) started: its start time against
    /// CLOCK_BOOTTIME, to one clock tick (10 ms).
    public static func age(_ pid: String = "self") -> Double? {
        guard let fields = fields(pid), fields.count > 19, let start = Double(fields[19]) else { return nil }
        var now = timespec()
        clock_gettime(CLOCK_BOOTTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9 - start / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The fields after the command name (field 3, the state, is the first).
    private static func fields(_ pid: String) -> [String]? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else {
            return nil
        }
        return stat[stat.index(after: close)...].split(separator: " ").map(String.init)
    }
}
