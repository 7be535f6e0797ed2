// See include/libpq_loader.h for why libpq is opened with dlopen.
#include "libpq_loader.h"

#include <dlfcn.h>
#include <pthread.h>

static chime_libpq_api api;
static const char *problem;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void open_once(void) {
    // libpq.so.5 is the SONAME Debian's libpq5 ships (the one -lpq links). RTLD_LOCAL: nothing
    // else in the process binds to OpenSSL or Kerberos through it.
    void *handle = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        problem = dlerror();
        return;
    }
#define CHIME_LIBPQ_RESOLVE(name)                                                                                        \
    api.name = (__typeof__(name) *)dlsym(handle, #name);                                                                 \
    if (api.name == NULL) {                                                                                              \
        problem = "libpq.so.5 lacks " #name;                                                                             \
        return;                                                                                                          \
    }
    CHIME_LIBPQ_FUNCTIONS(CHIME_LIBPQ_RESOLVE)
#undef CHIME_LIBPQ_RESOLVE
}

const char *chime_libpq_open(void) {
    pthread_once(&once, open_once);
    return problem;
}

const chime_libpq_api *chime_libpq(void) { return &api; }
