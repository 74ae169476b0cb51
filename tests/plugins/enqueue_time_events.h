/*
 * The event slots of a test plugin whose streams run work when it is
 * enqueued (test_plugin.c, handles/handles_plugin.c): nothing to wait for,
 * every event is complete once created. One event object serves them all.
 * Include once, in a C99 plugin source that defines no struct xdev_event_t.
 */
#ifndef XDEV_TEST_ENQUEUE_TIME_EVENTS_H_
#define XDEV_TEST_ENQUEUE_TIME_EVENTS_H_

#include <xdev/plugin.h>

struct xdev_event_t {
  int unused;
};
static struct xdev_event_t g_event;

static xdev_status_t* event_create(xdev_device_t* device, xdev_event_t** out) {
  (void)device;
  *out = &g_event;
  return NULL;
}
static void event_destroy(xdev_event_t* event) { (void)event; }
static xdev_status_t* event_record(xdev_event_t* event, xdev_stream_t* stream) {
  (void)event, (void)stream;
  return NULL;
}
static xdev_status_t* stream_wait_event(xdev_stream_t* stream, xdev_event_t* event) {
  (void)event, (void)stream;
  return NULL;
}
static xdev_status_t* event_synchronize(xdev_event_t* event) {
  (void)event;
  return NULL;
}
static xdev_status_t* event_query(xdev_event_t* event, int32_t* out_done) {
  (void)event;
  *out_done = 1;
  return NULL;
}

#endif /* XDEV_TEST_ENQUEUE_TIME_EVENTS_H_ */
