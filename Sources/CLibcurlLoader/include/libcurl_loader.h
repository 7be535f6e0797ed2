// libcurl (Debian's libcurl4, built on Debian's OpenSSL and zlib), for the webhook notifier
// (ChimeWebhook): its header (for the types and constants), and its functions opened with dlopen
// the first time a webhook notifier is made, not by the dynamic loader at every start of chime.
//
// Why by hand: linked normally, libcurl pulls in 28 more shared libraries (OpenSSL, nghttp2,
// ssh2, LDAP, GSSAPI, psl, ...) that the loader maps and binds for every `chime in` and `chime
// list`, which never post to a webhook: a bare C program linked with -lcurl runs 11.98 M
// instructions (callgrind) against 0.12 M without it, and took 11.6 ms to start against 0.7 ms
// (medians of 300 runs). As for libnotify and libpq (CLibnotifyLoader, CLibpqLoader), the table
// below is the usual dlopen/dlsym one, each pointer of the type libcurl's own header gives.
//
// curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt are variadic C functions, which
// Swift cannot call: the chime_curl_* functions give each kind of argument (long, pointer,
// string, callback) a fixed signature Swift imports, and call libcurl through the table.
#ifndef CHIME_LIBCURL_LOADER_H
#define CHIME_LIBCURL_LOADER_H

#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>

/// Every function Chime calls, by name.
#define CHIME_LIBCURL_FUNCTIONS(F)                                                                                       \
    F(curl_global_init)                                                                                                  \
    F(curl_easy_init)                                                                                                    \
    F(curl_easy_cleanup)                                                                                                 \
    F(curl_easy_setopt)                                                                                                  \
    F(curl_easy_getinfo)                                                                                                 \
    F(curl_easy_strerror)                                                                                                \
    F(curl_multi_init)                                                                                                   \
    F(curl_multi_cleanup)                                                                                                \
    F(curl_multi_setopt)                                                                                                 \
    F(curl_multi_add_handle)                                                                                             \
    F(curl_multi_remove_handle)                                                                                          \
    F(curl_multi_perform)                                                                                                \
    F(curl_multi_poll)                                                                                                   \
    F(curl_multi_wakeup)                                                                                                 \
    F(curl_multi_info_read)                                                                                              \
    F(curl_slist_append)                                                                                                 \
    F(curl_slist_free_all)

#define CHIME_LIBCURL_FIELD(name) __typeof__(name) *_Nonnull name;

/// The functions, each a pointer of the library's own type.
typedef struct chime_libcurl_api {
    CHIME_LIBCURL_FUNCTIONS(CHIME_LIBCURL_FIELD)
} chime_libcurl_api;

/// Opens libcurl once (thread-safe; later calls return the first outcome) and runs
/// curl_global_init. NULL when every function was found; otherwise what went wrong, a static string.
const char *_Nullable chime_libcurl_open(void);

/// The table; only after chime_libcurl_open returned NULL.
const chime_libcurl_api *_Nonnull chime_libcurl(void);

typedef size_t (*_Null_unspecified chime_curl_data_callback)(char *_Null_unspecified data, size_t size, size_t count, void *_Null_unspecified context);
typedef int (*_Null_unspecified chime_curl_xferinfo_callback)(void *_Null_unspecified context, curl_off_t dltotal, curl_off_t dlnow,
                                            curl_off_t ultotal, curl_off_t ulnow);

CURLcode chime_curl_setopt_long(CURL *_Null_unspecified handle, CURLoption option, long value);
CURLcode chime_curl_setopt_off(CURL *_Null_unspecified handle, CURLoption option, curl_off_t value);
CURLcode chime_curl_setopt_ptr(CURL *_Null_unspecified handle, CURLoption option, void *_Null_unspecified value);
CURLcode chime_curl_setopt_str(CURL *_Null_unspecified handle, CURLoption option, const char *_Null_unspecified value);
CURLcode chime_curl_setopt_slist(CURL *_Null_unspecified handle, CURLoption option, struct curl_slist *_Null_unspecified value);
CURLcode chime_curl_setopt_data_callback(CURL *_Null_unspecified handle, CURLoption option, chime_curl_data_callback callback);
CURLcode chime_curl_setopt_xferinfo(CURL *_Null_unspecified handle, chime_curl_xferinfo_callback callback);
CURLcode chime_curl_getinfo_long(CURL *_Null_unspecified handle, CURLINFO info, long *_Null_unspecified value);
CURLMcode chime_curl_multi_setopt_long(CURLM *_Null_unspecified multi, CURLMoption option, long value);
int chime_curl_multi_done(CURLM *_Null_unspecified multi, CURLcode *_Null_unspecified result);
long chime_curl_global_default(void);

#endif
