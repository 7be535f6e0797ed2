import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// What kind of file a path is, in a person's words, for the refusal of one that is not a
/// regular file (the store, the config file, a file to import).
public enum FileKind {
    /// "a FIFO (named pipe)", "a directory"… for a file type in `st_mode`.
    public static func describe(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: "a FIFO (named pipe)"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFDIR: "a directory"
        case S_IFSOCK: "a socket"
        case S_IFLNK: "a symbolic link"
        default: "not a regular file"
        }
    }
}
