// libcurl (Debian's libcurl4-openssl-dev) for the webhook notifier (ChimeWebhook).
//
// curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt are variadic C functions, which
// Swift cannot call: these static inline wrappers give each kind of argument (long, pointer,
// string, callback) a fixed signature Swift imports. Nothing else is added to libcurl.
#ifndef CHIME_CCURL_SHIM_H
#define CHIME_CCURL_SHIM_H

#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>

typedef size_t (*chime_curl_data_callback)(char *data, size_t size, size_t count, void *context);
typedef int (*chime_curl_xferinfo_callback)(void *context, curl_off_t dltotal, curl_off_t dlnow,
                                            curl_off_t ultotal, curl_off_t ulnow);

static inline CURLcode chime_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode chime_curl_setopt_off(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode chime_curl_setopt_ptr(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode chime_curl_setopt_str(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode chime_curl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}
// CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION.
static inline CURLcode chime_curl_setopt_data_callback(CURL *handle, CURLoption option, chime_curl_data_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}
static inline CURLcode chime_curl_setopt_xferinfo(CURL *handle, chime_curl_xferinfo_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
}
static inline CURLcode chime_curl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLMcode chime_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}
// The result of the multi's finished transfer, if one has finished (CURLMsg's `data` is a union).
static inline int chime_curl_multi_done(CURLM *multi, CURLcode *result) {
    int queued = 0;
    CURLMsg *message;
    while ((message = curl_multi_info_read(multi, &queued)) != NULL) {
        if (message->msg == CURLMSG_DONE) {
            *result = message->data.result;
            return 1;
        }
    }
    return 0;
}
static inline long chime_curl_global_default(void) { return CURL_GLOBAL_DEFAULT; }

#endif
