// libpq (Debian's libpq5), PostgreSQL's own C client: its header (for the types and constants),
// and its functions opened with dlopen the first time a PostgreSQL store is used, not by the
// dynamic loader at every start of chime.
//
// Why by hand: linked normally, libpq pulls in 20 shared libraries (OpenSSL, Kerberos, LDAP,
// SASL, GnuTLS, ...) that the loader maps and binds for every `chime in` and `chime list` on the
// embedded SQLite store, which never talks to PostgreSQL: a program that only links -lpq took
// 7.5 ms to start against 0.7 ms without it (medians of 300 runs on the same machine). As for
// libnotify (CLibnotifyLoader), Debian has no lazy-loading stub generator and ld on Linux has no
// -z lazyload, so the table below is the usual dlopen/dlsym one, each pointer of the type
// libpq's own header gives (__typeof__), so a changed signature is a compile error, not a crash.
#ifndef CHIME_LIBPQ_LOADER_H
#define CHIME_LIBPQ_LOADER_H

#include <libpq-fe.h>

/// Every function Chime calls, by name.
#define CHIME_LIBPQ_FUNCTIONS(F)                                                                                         \
    F(PQconnectdbParams)                                                                                                 \
    F(PQstatus)                                                                                                          \
    F(PQerrorMessage)                                                                                                    \
    F(PQfinish)                                                                                                          \
    F(PQsocket)                                                                                                          \
    F(PQexecParams)                                                                                                      \
    F(PQprepare)                                                                                                         \
    F(PQexecPrepared)                                                                                                    \
    F(PQsendQueryParams)                                                                                                 \
    F(PQsetSingleRowMode)                                                                                                \
    F(PQgetResult)                                                                                                       \
    F(PQresultStatus)                                                                                                    \
    F(PQresultErrorField)                                                                                                \
    F(PQresultErrorMessage)                                                                                              \
    F(PQclear)                                                                                                           \
    F(PQntuples)                                                                                                         \
    F(PQcmdTuples)                                                                                                       \
    F(PQgetisnull)                                                                                                       \
    F(PQgetvalue)                                                                                                        \
    F(PQfname)                                                                                                           \
    F(PQfnumber)                                                                                                         \
    F(PQconsumeInput)                                                                                                    \
    F(PQnotifies)                                                                                                        \
    F(PQbackendPID)                                                                                                      \
    F(PQfreemem)                                                                                                         \
    F(PQescapeIdentifier)                                                                                                \
    F(PQgetCancel)                                                                                                       \
    F(PQfreeCancel)                                                                                                      \
    F(PQcancel)

#define CHIME_LIBPQ_FIELD(name) __typeof__(name) *_Nonnull name;

/// The functions, each a pointer of the library's own type.
typedef struct chime_libpq_api {
    CHIME_LIBPQ_FUNCTIONS(CHIME_LIBPQ_FIELD)
} chime_libpq_api;

/// Opens libpq once (thread-safe; later calls return the first outcome). NULL when every
/// function was found; otherwise what went wrong (dlerror's text), a static string.
const char *_Nullable chime_libpq_open(void);

/// The table; only after chime_libpq_open returned NULL.
const chime_libpq_api *_Nonnull chime_libpq(void);

#endif
