/* fuzz_replay.c -- a plain main() for the fuzzers, without libFuzzer, so the
   committed corpus runs as a regression test under any compiler and under
   valgrind:

       fuzz_lock_replay [-r N] [-s SEED] FILE_OR_DIR...

   Every file (directories are walked one level deep) is fed to
   LLVMFuzzerTestOneInput once. -r N also feeds N pseudo-random inputs from a
   fixed xorshift seed (deterministic, the same on every machine). A finding
   abort()s inside the fuzzer, so a clean exit means every input passed.
   FZ_NAMES=1 prints each file's name before it runs (the last one aborted);
   FZ_DUMP=FILE writes each random input to FILE before it runs.
   The last line is "N passed, N failed". */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned long fr_passed, fr_failed;

static void fr_file(const char *path) {
    FILE *f = fopen(path, "rb");
    uint8_t *buf;
    long n;
    if (!f) { fprintf(stderr, "replay: cannot open %s\n", path); fr_failed++; return; }
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = (uint8_t *)malloc(n > 0 ? (size_t)n : 1u);
    if (!buf || (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n)) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        fr_failed++;
    } else {
        if (getenv("FZ_NAMES")) fprintf(stderr, "replay: %s\n", path);   /* who aborted */
        (void)LLVMFuzzerTestOneInput(buf, (size_t)(n > 0 ? n : 0));
        fr_passed++;
    }
    free(buf);
    fclose(f);
}

static void fr_path(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) { fprintf(stderr, "replay: no such path %s\n", path); fr_failed++; return; }
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *e;
        char full[4096];
        if (!d) { fprintf(stderr, "replay: cannot list %s\n", path); fr_failed++; return; }
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.') continue;
            snprintf(full, sizeof full, "%s/%s", path, e->d_name);
            if (stat(full, &st) == 0 && S_ISREG(st.st_mode)) fr_file(full);
        }
        closedir(d);
    } else {
        fr_file(path);
    }
}

static uint64_t fr_rng;
static uint64_t fr_next(void) {
    fr_rng ^= fr_rng << 13; fr_rng ^= fr_rng >> 7; fr_rng ^= fr_rng << 17;
    return fr_rng;
}

int main(int argc, char **argv) {
    unsigned long random_runs = 0, i;
    int a;
    fr_rng = 0x9e3779b97f4a7c15ull;
    for (a = 1; a < argc; a++) {
        if (strcmp(argv[a], "-r") == 0 && a + 1 < argc) { random_runs = strtoul(argv[++a], NULL, 10); continue; }
        if (strcmp(argv[a], "-s") == 0 && a + 1 < argc) { fr_rng = strtoull(argv[++a], NULL, 10) | 1u; continue; }
        fr_path(argv[a]);
    }
    for (i = 0; i < random_runs; i++) {
        uint8_t buf[512];
        size_t n = 8 + (size_t)(fr_next() % (sizeof buf - 8)), k;
        for (k = 0; k < n; k++) buf[k] = (uint8_t)(fr_next() >> 24);
        if (getenv("FZ_DUMP")) { FILE *f = fopen(getenv("FZ_DUMP"), "wb"); if (f) { fwrite(buf, 1, n, f); fclose(f); } }
        (void)LLVMFuzzerTestOneInput(buf, n);
        fr_passed++;
    }
    printf("%lu passed, %lu failed\n", fr_passed, fr_failed);
    return fr_failed ? 1 : 0;
}
