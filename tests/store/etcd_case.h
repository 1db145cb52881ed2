/* tests/store/etcd_case.h -- a time bound per test case for the etcd suites (issue 37:
 * "a suite must fail on its own, within its own time bound, whatever the code under test
 * does"). Include after tests/store/fenced.h: the bound is fenced.h's st_case, shared by
 * every store's suites; these names keep the etcd suites' calls short.
 *
 *   etcdt_case(name, secs)  arm: if the case still runs after secs seconds, SIGALRM
 *                    prints "TIMEOUT: case <name> ran past its N s bound" and the summary
 *                    line with one more failed, and ends the program with exit 124.
 *                    A second call re-arms for the next case. `name` must live until then.
 *   etcdt_case_end() disarm.
 */
#ifndef LDL_TESTS_STORE_ETCD_CASE_H
#define LDL_TESTS_STORE_ETCD_CASE_H

#define etcdt_case(name, secs) st_case((name), (secs))
#define etcdt_case_end() st_case("", 0)

#endif /* LDL_TESTS_STORE_ETCD_CASE_H */
