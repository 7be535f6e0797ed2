// libpq, PostgreSQL's own C client (Debian's libpq-dev; PostgreSQL 15 docs, chapter 34): the
// PostgreSQL store's connection, with nothing wrapped by hand. Its functions are plain C and
// Swift calls them as they are; this header only includes libpq's.
#include <libpq-fe.h>
