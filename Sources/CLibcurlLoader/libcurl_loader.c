// See include/libcurl_loader.h for why libcurl is opened with dlopen.
#include "libcurl_loader.h"

#include <dlfcn.h>
#include <pthread.h>

static chime_libcurl_api api;
static const char *problem;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void open_once(void) {
    // libcurl.so.4 is the SONAME Debian's libcurl4 ships (the one -lcurl links). RTLD_LOCAL:
    // nothing else in the process binds to OpenSSL through it.
    void *handle = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        problem = dlerror();
        return;
    }
#define CHIME_LIBCURL_RESOLVE(name)                                                                                      \
    api.name = (__typeof__(name) *)dlsym(handle, #name);                                                                 \
    if (api.name == NULL) {                                                                                              \
        problem = "libcurl.so.4 lacks " #name;                                                                           \
        return;                                                                                                          \
    }
    CHIME_LIBCURL_FUNCTIONS(CHIME_LIBCURL_RESOLVE)
#undef CHIME_LIBCURL_RESOLVE
    // Once per process, before the first handle (curl_global_init is not safe to race: here it
    // runs under pthread_once).
    if (api.curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) problem = "curl_global_init failed";
}

const char *chime_libcurl_open(void) {
    pthread_once(&once, open_once);
    return problem;
}

const chime_libcurl_api *chime_libcurl(void) { return &api; }
CURLcode chime_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    return api.curl_easy_setopt(handle, option, value);
}
CURLcode chime_curl_setopt_off(CURL *handle, CURLoption option, curl_off_t value) {
    return api.curl_easy_setopt(handle, option, value);
}
CURLcode chime_curl_setopt_ptr(CURL *handle, CURLoption option, void *value) {
    return api.curl_easy_setopt(handle, option, value);
}
CURLcode chime_curl_setopt_str(CURL *handle, CURLoption option, const char *value) {
    return api.curl_easy_setopt(handle, option, value);
}
CURLcode chime_curl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return api.curl_easy_setopt(handle, option, value);
}
// CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION.
CURLcode chime_curl_setopt_data_callback(CURL *handle, CURLoption option, chime_curl_data_callback callback) {
    return api.curl_easy_setopt(handle, option, callback);
}
CURLcode chime_curl_setopt_xferinfo(CURL *handle, chime_curl_xferinfo_callback callback) {
    return api.curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
}
CURLcode chime_curl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return api.curl_easy_getinfo(handle, info, value);
}
CURLMcode chime_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return api.curl_multi_setopt(multi, option, value);
}
// The result of the multi's finished transfer, if one has finished (CURLMsg's `data` is a union).
int chime_curl_multi_done(CURLM *multi, CURLcode *result) {
    int queued = 0;
    CURLMsg *message;
    while ((message = api.curl_multi_info_read(multi, &queued)) != NULL) {
        if (message->msg == CURLMSG_DONE) {
            *result = message->data.result;
            return 1;
        }
    }
    return 0;
}
long chime_curl_global_default(void) { return CURL_GLOBAL_DEFAULT; }

