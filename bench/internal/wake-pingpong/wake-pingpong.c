// wake-pingpong is the C reference of bench/event-wake: two processes,
// each bound to a core of its own, ping-pong an 8-byte message through
// shared memory and wake each other through an eventfd, with the system
// calls the loopback provider's event mode makes and no others.
//
// Per message, as loopback's send and JFCE wait do:
//
//   sender:   store the payload, publish it (a release store of its
//             sequence number), then, if the receiver is armed, disarm it
//             (compare-and-swap), set its notified flag and write(2) 1 to
//             its eventfd;
//   receiver: poll for the message; none there: arm (a sequentially
//             consistent store), poll again (a message published before
//             the arm raises no event), then ppoll(2) on the eventfd with
//             a 50 ms bound, read(2) it when it is readable, take the
//             notified flag (compare-and-swap) and poll again.
//
// The eventfds are non-blocking, as the provider's are: only ppoll sleeps.
// The first process times each round trip with CLOCK_MONOTONIC and prints
// the median and 99th percentile in microseconds:
//
//   wake-pingpong ITERS CPU0 CPU1
//   rtt_median_us 12.34 rtt_p99_us 20.50
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

// A channel carries messages one way. Each field a side writes has a cache
// line of its own, so that the sender's publish and the receiver's arm do
// not share a line (as a loopback ring's records and meta words do not).
struct chan {
	_Alignas(64) _Atomic uint64_t seq; // last message published
	uint64_t payload;
	_Alignas(64) _Atomic uint32_t armed;   // 1 while the receiver may sleep
	_Alignas(64) _Atomic uint32_t notified; // 1 while an event is untaken
	_Alignas(64) int efd;                   // the receiver's eventfd
};

// stopPayload ends the echoing process.
static const uint64_t stopPayload = UINT64_MAX;

static void die(const char *what) {
	perror(what);
	exit(1);
}

static void pin(int cpu) {
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof set, &set) != 0)
		die("sched_setaffinity");
}

// send publishes payload as message seq and wakes the receiver if it is
// armed; the load of armed follows the publish in the single total order
// of sequentially consistent operations, so either the receiver's second
// poll sees the message or this sees the arm.
static void send(struct chan *c, uint64_t seq, uint64_t payload) {
	c->payload = payload;
	atomic_store_explicit(&c->seq, seq, memory_order_seq_cst);
	uint32_t armed = atomic_load_explicit(&c->armed, memory_order_seq_cst);
	if (armed && atomic_compare_exchange_strong(&c->armed, &armed, 0)) {
		atomic_store(&c->notified, 1);
		static const uint64_t one = 1;
		if (write(c->efd, &one, sizeof one) != sizeof one)
			die("write eventfd");
	}
}

// receive waits for message seq and returns its payload.
static uint64_t receive(struct chan *c, uint64_t seq) {
	for (;;) {
		if (atomic_load_explicit(&c->seq, memory_order_acquire) == seq)
			return c->payload;
		atomic_store_explicit(&c->armed, 1, memory_order_seq_cst);
		if (atomic_load_explicit(&c->seq, memory_order_seq_cst) == seq) {
			uint32_t one = 1;
			atomic_compare_exchange_strong(&c->armed, &one, 0);
			return c->payload;
		}
		struct pollfd fd = {.fd = c->efd, .events = POLLIN};
		struct timespec slice = {.tv_sec = 0, .tv_nsec = 50 * 1000 * 1000};
		int n = ppoll(&fd, 1, &slice, NULL);
		if (n < 0 && errno != EINTR)
			die("ppoll");
		if (n > 0) {
			uint64_t v;
			if (read(c->efd, &v, sizeof v) < 0 && errno != EAGAIN)
				die("read eventfd");
		}
		uint32_t one = 1;
		atomic_compare_exchange_strong(&c->notified, &one, 0);
	}
}

static int cmp(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double now_us(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int main(int argc, char **argv) {
	if (argc != 4) {
		fprintf(stderr, "usage: wake-pingpong ITERS CPU0 CPU1\n");
		return 2;
	}
	long iters = atol(argv[1]);
	int cpu0 = atoi(argv[2]), cpu1 = atoi(argv[3]);
	if (iters < 1) {
		fprintf(stderr, "wake-pingpong: ITERS %s: want 1 or more\n", argv[1]);
		return 2;
	}
	struct chan *ch = mmap(NULL, 2 * sizeof(struct chan), PROT_READ | PROT_WRITE,
	                       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ch == MAP_FAILED)
		die("mmap");
	struct chan *ping = &ch[0], *pong = &ch[1];
	for (int i = 0; i < 2; i++)
		if ((ch[i].efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0)
			die("eventfd");

	pid_t child = fork();
	if (child < 0)
		die("fork");
	if (child == 0) {
		pin(cpu1);
		for (uint64_t seq = 1;; seq++) {
			uint64_t v = receive(ping, seq);
			if (v == stopPayload)
				_exit(0);
			send(pong, seq, v);
		}
	}
	pin(cpu0);
	double *rtt = malloc(iters * sizeof *rtt);
	if (rtt == NULL)
		die("malloc");
	uint64_t seq = 1;
	for (long i = 0; i < iters; i++, seq++) {
		double t0 = now_us();
		send(ping, seq, (uint64_t)i);
		if (receive(pong, seq) != (uint64_t)i) {
			fprintf(stderr, "wake-pingpong: round trip %ld echoed the wrong payload\n", i);
			return 1;
		}
		rtt[i] = now_us() - t0;
	}
	send(ping, seq, stopPayload);
	int status;
	if (waitpid(child, &status, 0) < 0)
		die("waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "wake-pingpong: the echoing process failed\n");
		return 1;
	}
	qsort(rtt, iters, sizeof *rtt, cmp);
	printf("rtt_median_us %.2f rtt_p99_us %.2f\n", rtt[iters / 2], rtt[iters * 99 / 100]);
	return 0;
}
