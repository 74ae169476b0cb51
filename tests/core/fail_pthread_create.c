/* Preloaded (LD_PRELOAD) by thread_start_fails: pthread_create fails with
 * EAGAIN, as under a process or thread limit, once armed. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>

static atomic_int remaining = -1; /* creations left before they fail; -1: never fail */

__attribute__((visibility("default"))) void xdev_test_fail_pthread_create_after(int n) {
  atomic_store(&remaining, n);
}

typedef int (*create_fn)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);

__attribute__((visibility("default"))) int pthread_create(pthread_t* thread,
                                                          const pthread_attr_t* attr,
                                                          void* (*start)(void*), void* arg) {
  static create_fn real = NULL;
  if (real == NULL) real = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
  int left = atomic_load(&remaining);
  while (left > 0 && !atomic_compare_exchange_weak(&remaining, &left, left - 1)) {
  }
  if (left == 0) return EAGAIN;
  return real(thread, attr, start, arg);
}
