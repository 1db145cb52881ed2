/* cli/ldl_cli.h -- the helpers ldl-run (cli/ldl-run.c) and ldl-fence
   (cli/ldl-fence.c) share: terminal escaping, the stderr line, option numbers,
   HOST:PORT and the SIGALRM watchdog. Private to the two tools (not installed,
   not an API): static functions, included once by each after its system
   headers. The includer defines first:
     CLI_NAME           the tool's name, "ldl-run" (prefix of every stderr line)
     EXIT_USAGE         its exit code for a bad option or argument
     CLI_WATCHDOG_EXIT  its exit code when the watchdog fires */
#ifndef LDL_CLI_H
#define LDL_CLI_H

/* ------------------------------------------------------------------ output */
/* s (len bytes) for a terminal: printable ASCII (0x20..0x7E) as it is, every
   other byte and the backslash as \xHH, trailing newlines dropped (server texts
   end in one); cut with "..." at cap. No byte of a key, owner, command name or
   server text reaches the terminal raw (C1 controls such as CSI 0x9B, bidi
   overrides, ESC). */
static const char *escn(const char *s, size_t len, char *buf, size_t cap) {
    static const char hex[] = "0123456789abcdef";
    size_t n = 0;
    if (!s) { s = ""; len = 0; }
    while (len > 0 && (s[len - 1] == '\n' || s[len - 1] == '\r')) len--;
    for (; len > 0; s++, len--) {
        unsigned char c = (unsigned char)*s;
        if (n + 8 >= cap) { memcpy(buf + n, "...", 4); return buf; }
        if (c >= 0x20 && c <= 0x7E && c != '\\') {
            buf[n++] = (char)c;
        } else {
            buf[n++] = '\\'; buf[n++] = 'x';
            buf[n++] = hex[c >> 4]; buf[n++] = hex[c & 15];
        }
    }
    buf[n] = 0;
    return buf;
}

/* the same for a NUL-terminated s (NULL: "") */
static const char *esc(const char *s, char *buf, size_t cap) {
    return escn(s, s ? strlen(s) : 0, buf, cap);
}

/* one line on stderr, "CLI_NAME: " first; a and b (keys, owners, names,
   server texts) are escaped */
static void say(const char *fmt, const char *a, const char *b) {
    char ea[1024], eb[1024];
    fprintf(stderr, CLI_NAME ": ");
    fprintf(stderr, fmt, esc(a, ea, sizeof ea), esc(b, eb, sizeof eb));
    fputc('\n', stderr);
}

static int usage_error(const char *a, const char *b) {
    say("%s%s", a, b);
    fprintf(stderr, "Try '" CLI_NAME " --help'.\n");
    return EXIT_USAGE;
}

/* ------------------------------------------------------------------ parsing */
/* decimal digits only (no sign, no space), at most 0xFFFFFFFF */
static int parse_u32(const char *s, uint32_t *out) {
    char *end;
    unsigned long long v;
    if (!s || !*s || *s < '0' || *s > '9') return -1;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || *end || v > 0xFFFFFFFFull) return -1;
    *out = (uint32_t)v;
    return 0;
}

/* SECONDS with up to 3 decimals -> ms */
static int parse_seconds(const char *s, uint64_t *ms) {
    uint64_t whole = 0, frac = 0;
    int digits = 0, fd = 0;
    if (!s || !*s) return -1;
    for (; *s >= '0' && *s <= '9'; s++, digits++) {
        if (whole > 1000000000ull) return -1;
        whole = whole * 10u + (uint64_t)(*s - '0');
    }
    if (*s == '.') {
        for (s++; *s >= '0' && *s <= '9'; s++) {
            if (fd < 3) { frac = frac * 10u + (uint64_t)(*s - '0'); fd++; }
            digits++;
        }
    }
    if (*s || digits == 0) return -1;
    while (fd < 3) { frac *= 10u; fd++; }
    *ms = whole * 1000u + frac;
    return 0;
}

/* HOST:PORT -> numeric host (resolved once now: the adapter's reconnect must not
   block in getaddrinfo) and port; -1 bad form, -2 not resolved */
static int parse_hostport(const char *arg, char *host, size_t hostcap, int *port) {
    const char *colon = strrchr(arg, ':');
    char name[256], *end;
    long p;
    struct addrinfo hints, *res = NULL;
    size_t n;
    if (!colon || colon == arg) return -1;
    n = (size_t)(colon - arg);
    if (arg[0] == '[' && n >= 2 && arg[n - 1] == ']') { arg++; n -= 2; }   /* [v6]:port */
    if (n >= sizeof name) return -1;
    memcpy(name, arg, n);
    name[n] = 0;
    errno = 0;
    p = strtol(colon + 1, &end, 10);
    if (errno || *end || end == colon + 1 || p < 1 || p > 65535) return -1;
    *port = (int)p;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(name, NULL, &hints, &res) != 0 || !res) return -2;
    n = (size_t)getnameinfo(res->ai_addr, res->ai_addrlen, host, (socklen_t)hostcap, NULL, 0,
                            NI_NUMERICHOST);
    freeaddrinfo(res);
    return n == 0 ? 0 : -2;
}

/* ------------------------------------------------------------------ watchdog */
static char watchdog_msg[256];          /* the tool's line, written before arming */

static void on_watchdog(int sig) {
    ssize_t n = write(2, watchdog_msg, strlen(watchdog_msg));
    (void)n; (void)sig;
    _exit(CLI_WATCHDOG_EXIT);
}

/* past ms (0: disarm) the process prints watchdog_msg and exits CLI_WATCHDOG_EXIT */
static void watchdog_arm(uint64_t ms) {
    struct itimerval it;
    struct sigaction sa;
    memset(&it, 0, sizeof it);
    if (ms) {
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_watchdog;
        sigemptyset(&sa.sa_mask);
        (void)sigaction(SIGALRM, &sa, NULL);
        it.it_value.tv_sec = (time_t)(ms / 1000u);
        it.it_value.tv_usec = (suseconds_t)(ms % 1000u) * 1000;
    }
    (void)setitimer(ITIMER_REAL, &it, NULL);
}

#endif /* LDL_CLI_H */
