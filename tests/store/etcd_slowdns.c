/* etcd_slowdns.c -- an LD_PRELOAD shim for tests/store/etcd_dns.c (test code): a name
 * ending in ".slow.test" takes 10 s to resolve (then fails), as behind a resolver that
 * does not answer; every other name goes to the C library's getaddrinfo. It stands in for
 * a silent DNS server, which a test cannot install on the machine. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <netdb.h>
#include <string.h>
#include <time.h>

typedef int (*gai_fn)(const char *, const char *, const struct addrinfo *, struct addrinfo **);

int getaddrinfo(const char *node, const char *service, const struct addrinfo *hints, struct addrinfo **res)
{
    size_t n = node ? strlen(node) : 0;
    if (n > 10 && strcmp(node + n - 10, ".slow.test") == 0) {
        struct timespec ts = { 10, 0 };
        while (nanosleep(&ts, &ts) != 0) { }
        return EAI_AGAIN;
    }
    {
        gai_fn real = (gai_fn)dlsym(RTLD_NEXT, "getaddrinfo");
        return real ? real(node, service, hints, res) : EAI_FAIL;
    }
}
