//go:build linux && cgo && urma_verbs

#include <time.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <endian.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include "shim.h"

int uv_query_device(struct ibv_context *ctx, struct uv_dev *out)
{
	struct ibv_device_attr a;
	int err = ibv_query_device(ctx, &a);
	if (err)
		return err;
	memset(out, 0, sizeof(*out));
	out->node_guid = be64toh(a.node_guid);
	out->max_mr_size = a.max_mr_size;
	out->max_qp = a.max_qp;
	out->max_qp_wr = a.max_qp_wr;
	out->max_sge = a.max_sge;
	out->max_sge_rd = a.max_sge_rd;
	out->max_cq = a.max_cq;
	out->max_cqe = a.max_cqe;
	out->max_mr = a.max_mr;
	out->max_srq = a.max_srq;
	out->max_srq_wr = a.max_srq_wr;
	out->max_srq_sge = a.max_srq_sge;
	out->max_ah = a.max_ah;
	out->max_qp_rd_atom = a.max_qp_rd_atom;
	out->max_qp_init_rd_atom = a.max_qp_init_rd_atom;
	out->atomic_cap = a.atomic_cap;
	out->device_cap_flags = a.device_cap_flags;
	out->phys_port_cnt = a.phys_port_cnt;
	out->transport = ctx->device->transport_type;
	out->vendor_id = a.vendor_id;
	out->vendor_part_id = a.vendor_part_id;
	return 0;
}

int uv_query_port(struct ibv_context *ctx, uint8_t port, struct uv_port *out)
{
	struct ibv_port_attr a;
	int err = ibv_query_port(ctx, port, &a);
	if (err)
		return err;
	memset(out, 0, sizeof(*out));
	out->state = a.state;
	out->active_mtu = a.active_mtu;
	out->max_mtu = a.max_mtu;
	out->gid_tbl_len = a.gid_tbl_len;
	out->max_msg_sz = a.max_msg_sz;
	out->active_width = a.active_width;
	out->active_speed = a.active_speed;
	out->link_layer = a.link_layer;
	out->phys_state = a.phys_state;
	return 0;
}

long uv_query_gid_table(struct ibv_context *ctx, struct ibv_gid_entry *entries, long max)
{
	ssize_t n = ibv_query_gid_table(ctx, entries, max, 0);
	return n < 0 ? -errno : n;
}

// uv_probe_max_inline finds the largest inline size the device grants an RC
// QP, starting from hint and halving: the limit is not a device attribute.
int uv_probe_max_inline(struct ibv_context *ctx, struct ibv_pd *pd, int hint)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 2, NULL, NULL, 0);
	if (!cq)
		return -errno;
	int got = 0;
	for (int want = hint; want >= 16; want /= 2) {
		struct ibv_qp_init_attr ia = {
			.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1,
				 .max_recv_sge = 1, .max_inline_data = want },
		};
		struct ibv_qp *qp = ibv_create_qp(pd, &ia);
		if (qp) {
			got = ia.cap.max_inline_data;
			ibv_destroy_qp(qp);
			break;
		}
	}
	ibv_destroy_cq(cq);
	return got;
}

// Requests are handed to the provider in chunks of this many, so the
// conversion needs no heap and one cgo call still posts a whole batch.
#define UV_CHUNK 32

int uv_post_send(struct ibv_qp *qp, const struct uv_send_wr *w, int n,
		 const struct uv_sge *sges, int *bad)
{
	struct ibv_send_wr wrs[UV_CHUNK];
	for (int base = 0; base < n; base += UV_CHUNK) {
		int k = n - base < UV_CHUNK ? n - base : UV_CHUNK;
		for (int i = 0; i < k; i++) {
			const struct uv_send_wr *s = &w[base + i];
			struct ibv_send_wr *d = &wrs[i];
			memset(d, 0, sizeof(*d));
			d->wr_id = s->wr_id;
			d->next = i + 1 < k ? &wrs[i + 1] : NULL;
			d->sg_list = (struct ibv_sge *)&sges[s->sge_off];
			d->num_sge = s->num_sge;
			d->opcode = s->opcode;
			d->send_flags = s->flags;
			switch (s->opcode) {
			case IBV_WR_RDMA_WRITE_WITH_IMM:
			case IBV_WR_SEND_WITH_IMM:
				d->imm_data = htonl(s->imm);
				break;
			}
			if (s->ah) {
				d->wr.ud.ah = (struct ibv_ah *)(uintptr_t)s->ah;
				d->wr.ud.remote_qpn = s->remote_qpn;
				d->wr.ud.remote_qkey = s->remote_qkey;
				continue;
			}
			switch (s->opcode) {
			case IBV_WR_RDMA_WRITE:
			case IBV_WR_RDMA_WRITE_WITH_IMM:
			case IBV_WR_RDMA_READ:
				d->wr.rdma.remote_addr = s->remote_addr;
				d->wr.rdma.rkey = s->rkey;
				break;
			case IBV_WR_ATOMIC_CMP_AND_SWP:
			case IBV_WR_ATOMIC_FETCH_AND_ADD:
				d->wr.atomic.remote_addr = s->remote_addr;
				d->wr.atomic.rkey = s->rkey;
				d->wr.atomic.compare_add = s->compare_add;
				d->wr.atomic.swap = s->swap;
				break;
			}
		}
		struct ibv_send_wr *badwr = NULL;
		int err = ibv_post_send(qp, wrs, &badwr);
		if (err) {
			*bad = base + (badwr ? (int)(badwr - wrs) : 0);
			return err;
		}
	}
	*bad = n;
	return 0;
}

static int64_t uv_now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

// uv_spun is the budget of a spin loop at its empty round i: true once
// spin_ns have passed since round 0, read every every rounds.
static inline int uv_spun(int i, int every, int64_t *start, int64_t spin_ns)
{
	if (i == 0) {
		*start = uv_now_ns();
		return 0;
	}
	return i % every == 0 && uv_now_ns() - *start >= spin_ns;
}

// uv_poll_post polls cq for up to spin_ns until it returns completions;
// when every one of them succeeded it posts w on qp before it returns, so
// that the next request leaves while the device is still busy with the
// last (on Soft-RoCE a post that finds the device's worker asleep has to
// wake it, which a post right after a completion does not). *tried tells
// whether it posted, and *post_rc is then uv_post_send's result. With
// need, it posts only if the completion of request need_id is among them.
int uv_poll_post(struct ibv_cq *cq, int n, struct uv_wc *out, int64_t spin_ns,
		 struct ibv_qp *qp, const struct uv_send_wr *w, int nw,
		 const struct uv_sge *sges, int need, uint64_t need_id,
		 int *bad, int *tried, int *post_rc)
{
	*tried = 0;
	*post_rc = 0;
	int got = 0;
	int64_t start = 0;
	for (int i = 0;; i++) {
		got = uv_poll_cq(cq, n, out);
		if (got != 0 || uv_spun(i, 16, &start, spin_ns))
			break;
	}
	if (got <= 0)
		return got;
	for (int i = 0; i < got; i++) {
		if (out[i].status != IBV_WC_SUCCESS)
			return got;
		if (out[i].wr_id == need_id)
			need = 0;
	}
	if (need)
		return got;
	*tried = 1;
	*post_rc = uv_post_send(qp, w, nw, sges, bad);
	return got;
}

// uv_flag_post watches *flag for up to spin_ns and, once it holds want,
// posts w on qp at once: a WRITE ping-pong answers the peer's WRITE the
// moment its last byte lands, as perftest does. *tried tells whether it
// posted, and *post_rc is then uv_post_send's result.
void uv_flag_post(const uint8_t *flag, uint8_t want, int64_t spin_ns,
		  struct ibv_qp *qp, const struct uv_send_wr *w, int nw,
		  const struct uv_sge *sges, int *bad, int *tried, int *post_rc)
{
	*tried = 0;
	*post_rc = 0;
	int64_t start = 0;
	for (int i = 0;; i++) {
		if (__atomic_load_n(flag, __ATOMIC_ACQUIRE) == want)
			break;
		if (uv_spun(i, 64, &start, spin_ns))
			return;
	}
	*tried = 1;
	*post_rc = uv_post_send(qp, w, nw, sges, bad);
}

int uv_post_srq_recv(struct ibv_srq *srq, const struct uv_recv_wr *w, int n,
		     const struct uv_sge *sges, int *bad)
{
	struct ibv_recv_wr wrs[UV_CHUNK];
	for (int base = 0; base < n; base += UV_CHUNK) {
		int k = n - base < UV_CHUNK ? n - base : UV_CHUNK;
		for (int i = 0; i < k; i++) {
			const struct uv_recv_wr *s = &w[base + i];
			wrs[i].wr_id = s->wr_id;
			wrs[i].next = i + 1 < k ? &wrs[i + 1] : NULL;
			wrs[i].sg_list = (struct ibv_sge *)&sges[s->sge_off];
			wrs[i].num_sge = s->num_sge;
		}
		struct ibv_recv_wr *badwr = NULL;
		int err = ibv_post_srq_recv(srq, wrs, &badwr);
		if (err) {
			*bad = base + (badwr ? (int)(badwr - wrs) : 0);
			return err;
		}
	}
	*bad = n;
	return 0;
}

int uv_poll_cq(struct ibv_cq *cq, int n, struct uv_wc *out)
{
	struct ibv_wc wc[16];
	int got = 0;
	while (got < n) {
		int want = n - got < 16 ? n - got : 16;
		int k = ibv_poll_cq(cq, want, wc);
		if (k < 0)
			return got ? got : k;
		for (int i = 0; i < k; i++) {
			struct uv_wc *o = &out[got + i];
			o->wr_id = wc[i].wr_id;
			o->status = wc[i].status;
			o->opcode = wc[i].opcode;
			o->byte_len = wc[i].byte_len;
			o->imm = (wc[i].wc_flags & IBV_WC_WITH_IMM) ? ntohl(wc[i].imm_data) : 0;
			o->qp_num = wc[i].qp_num;
			o->src_qp = wc[i].src_qp;
			o->wc_flags = wc[i].wc_flags;
			o->vendor_err = wc[i].vendor_err;
		}
		got += k;
		if (k < want)
			break;
	}
	return got;
}

int uv_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	return ibv_req_notify_cq(cq, solicited_only);
}

// uv_get_cq_event reads one event from a non-blocking channel: 1 with the
// CQ's context, 0 when there is none, -errno on failure.
int uv_get_cq_event(struct ibv_comp_channel *ch, uint64_t *cq_context)
{
	struct ibv_cq *cq;
	void *c;
	if (ibv_get_cq_event(ch, &cq, &c))
		return errno == EAGAIN ? 0 : -errno;
	*cq_context = (uint64_t)(uintptr_t)c;
	return 1;
}

// The context values are integers the provider chooses (Go pointers must
// not be kept by C), carried in the void * fields verbs hands back.
struct ibv_cq *uv_create_cq(struct ibv_context *ctx, int depth, uint64_t cq_context,
			    struct ibv_comp_channel *ch, int *cap, int *err)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, depth, (void *)(uintptr_t)cq_context, ch, 0);
	if (!cq) {
		*err = errno;
		return NULL;
	}
	*cap = cq->cqe;
	return cq;
}

struct ibv_srq *uv_create_srq(struct ibv_pd *pd, uint32_t max_wr, uint32_t max_sge,
			      uint64_t srq_context, uint32_t *got_wr, uint32_t *got_sge, int *err)
{
	struct ibv_srq_init_attr a = {
		.srq_context = (void *)(uintptr_t)srq_context,
		.attr = { .max_wr = max_wr, .max_sge = max_sge },
	};
	struct ibv_srq *srq = ibv_create_srq(pd, &a);
	if (!srq) {
		*err = errno;
		return NULL;
	}
	*got_wr = a.attr.max_wr;
	*got_sge = a.attr.max_sge;
	return srq;
}

// uv_get_async_event reads one async event from a non-blocking context
// into ev: 1 with its type and element (a QP or SRQ number, the CQ's
// context, or the port), 0 when there is none, -errno on failure. The
// caller acknowledges ev with uv_ack_async_event once it has handled it:
// until then, destroying the object the event names waits.
int uv_get_async_event(struct ibv_context *ctx, struct ibv_async_event *ev, int *type,
		       uint64_t *element, int *port)
{
	if (ibv_get_async_event(ctx, ev))
		return errno == EAGAIN ? 0 : -errno;
	*type = ev->event_type;
	*element = 0;
	*port = 0;
	switch (ev->event_type) {
	case IBV_EVENT_CQ_ERR:
		*element = (uint64_t)(uintptr_t)ev->element.cq->cq_context;
		break;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		*element = ev->element.qp->qp_num;
		break;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		*element = (uint64_t)(uintptr_t)ev->element.srq->srq_context;
		break;
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_LID_CHANGE:
	case IBV_EVENT_PKEY_CHANGE:
	case IBV_EVENT_SM_CHANGE:
	case IBV_EVENT_CLIENT_REREGISTER:
	case IBV_EVENT_GID_CHANGE:
		*port = ev->element.port_num;
		break;
	default:
		break;
	}
	return 1;
}

void uv_ack_async_event(struct ibv_async_event *ev) { ibv_ack_async_event(ev); }

// uv_get_cm_event reads, copies and acknowledges one event from a
// non-blocking channel: 1 when there was one, 0 when not, -errno on failure.
// Acknowledging at once is safe because nothing here keeps the event.
int uv_get_cm_event(struct rdma_event_channel *ch, struct uv_cm_event *out)
{
	struct rdma_cm_event *ev;
	if (rdma_get_cm_event(ch, &ev))
		return errno == EAGAIN ? 0 : -errno;
	out->id = ev->id;
	out->listen_id = ev->listen_id;
	out->event = ev->event;
	out->status = ev->status;
	out->private_data_len = 0;
	if (ev->event != RDMA_CM_EVENT_ADDR_RESOLVED && ev->event != RDMA_CM_EVENT_ROUTE_RESOLVED &&
	    ev->param.conn.private_data && ev->param.conn.private_data_len) {
		out->private_data_len = ev->param.conn.private_data_len;
		memcpy(out->private_data, ev->param.conn.private_data, out->private_data_len);
	}
	rdma_ack_cm_event(ev);
	return 1;
}

int uv_cm_qp_num(struct rdma_cm_id *id) { return id->qp ? (int)id->qp->qp_num : -1; }
struct ibv_context *uv_cm_verbs(struct rdma_cm_id *id) { return id->verbs; }

// uv_unsignaled runs rdma_connect or rdma_accept with the thread's signals
// blocked. soft-iWARP connects its TCP socket inside the system call; a
// signal (the Go runtime sends them) interrupts that connect, the kernel
// restarts the call, and the second connect from the same port finds the
// first one's remains and is refused. Blocked signals arrive right after.
static int uv_unsignaled(int (*fn)(struct rdma_cm_id *, struct rdma_conn_param *),
			 struct rdma_cm_id *id, struct rdma_conn_param *p)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int rc = fn(id, p) ? -errno : 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

int uv_cm_connect(struct rdma_cm_id *id, const void *pd, uint8_t pdlen,
		  uint8_t retry, uint8_t rnr_retry, uint8_t rd_atomic)
{
	struct rdma_conn_param p = {
		.private_data = pd, .private_data_len = pdlen,
		.responder_resources = rd_atomic, .initiator_depth = rd_atomic,
		.retry_count = retry, .rnr_retry_count = rnr_retry,
	};
	return uv_unsignaled(rdma_connect, id, &p);
}

int uv_cm_accept(struct rdma_cm_id *id, const void *pd, uint8_t pdlen, uint8_t rd_atomic,
		 uint8_t rnr_retry)
{
	struct rdma_conn_param p = {
		.private_data = pd, .private_data_len = pdlen,
		.responder_resources = rd_atomic, .initiator_depth = rd_atomic,
		.rnr_retry_count = rnr_retry,
	};
	return uv_unsignaled(rdma_accept, id, &p);
}

int uv_cm_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_cq *scq,
		    struct ibv_cq *rcq, struct ibv_srq *srq, uint32_t max_send_wr,
		    uint32_t max_send_sge, uint32_t max_inline, uint32_t max_recv_wr)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = scq, .recv_cq = rcq, .srq = srq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = max_send_wr, .max_send_sge = max_send_sge,
			 .max_inline_data = max_inline,
			 .max_recv_wr = srq ? 0 : max_recv_wr, .max_recv_sge = srq ? 0 : 1 },
		.sq_sig_all = 0,
	};
	return rdma_create_qp(id, pd, &ia) ? -errno : 0;
}

struct ibv_qp *uv_create_ud_qp(struct ibv_pd *pd, struct ibv_cq *scq, struct ibv_cq *rcq,
			       struct ibv_srq *srq, uint32_t max_send_wr, uint32_t max_send_sge,
			       uint32_t max_inline, uint8_t port, uint32_t qkey, int *err)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = scq, .recv_cq = rcq, .srq = srq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = max_send_wr, .max_send_sge = max_send_sge,
			 .max_inline_data = max_inline,
			 .max_recv_wr = srq ? 0 : 1, .max_recv_sge = srq ? 0 : 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);
	if (!qp) {
		*err = errno;
		return NULL;
	}
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = port,
				 .qkey = qkey };
	int rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
	if (!rc) {
		a.qp_state = IBV_QPS_RTR;
		rc = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	}
	if (!rc) {
		a.qp_state = IBV_QPS_RTS;
		a.sq_psn = 0;
		rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	}
	if (rc) {
		*err = rc;
		ibv_destroy_qp(qp);
		return NULL;
	}
	return qp;
}

struct ibv_ah *uv_create_ah(struct ibv_pd *pd, uint8_t port, const uint8_t *dgid,
			    uint8_t sgid_index, int *err)
{
	struct ibv_ah_attr a = {
		.is_global = 1, .port_num = port,
		.grh = { .sgid_index = sgid_index, .hop_limit = 64 },
	};
	memcpy(a.grh.dgid.raw, dgid, 16);
	struct ibv_ah *ah = ibv_create_ah(pd, &a);
	if (!ah)
		*err = errno;
	return ah;
}

int uv_qp_set_rnr_timer(struct ibv_qp *qp, uint8_t timer)
{
	struct ibv_qp_attr a = { .min_rnr_timer = timer };
	return ibv_modify_qp(qp, &a, IBV_QP_MIN_RNR_TIMER);
}

int uv_qp_to_error(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

uint32_t uv_qp_num(struct ibv_qp *qp) { return qp->qp_num; }
uint32_t uv_mr_lkey(struct ibv_mr *mr) { return mr->lkey; }
uint32_t uv_mr_rkey(struct ibv_mr *mr) { return mr->rkey; }
int uv_comp_channel_fd(struct ibv_comp_channel *ch) { return ch->fd; }
int uv_async_fd(struct ibv_context *ctx) { return ctx->async_fd; }
int uv_cm_channel_fd(struct rdma_event_channel *ch) { return ch->fd; }
const char *uv_context_name(struct ibv_context *ctx) { return ibv_get_device_name(ctx->device); }
uint16_t uv_cm_src_port(struct rdma_cm_id *id) { return ntohs(rdma_get_src_port(id)); }

/* uv_cm_peer copies the peer's address (IPv4 as v4-mapped) and port;
 * it returns -1 for families other than IP. */
int uv_cm_peer(struct rdma_cm_id *id, uint8_t *addr, uint16_t *port)
{
	struct sockaddr *sa = rdma_get_peer_addr(id);

	if (sa->sa_family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)sa;

		memset(addr, 0, 10);
		addr[10] = addr[11] = 0xff;
		memcpy(addr + 12, &in->sin_addr, 4);
		*port = ntohs(in->sin_port);
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)sa;

		memcpy(addr, &in6->sin6_addr, 16);
		*port = ntohs(in6->sin6_port);
		return 0;
	}
	return -1;
}

static socklen_t uv_sockaddr(struct sockaddr_storage *ss, const uint8_t *a, uint16_t port, uint32_t scope)
{
	static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	memset(ss, 0, sizeof(*ss));
	if (memcmp(a, v4mapped, 12) == 0) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		memcpy(&s4->sin_addr, a + 12, 4);
		return sizeof(*s4);
	}
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	s6->sin6_family = AF_INET6;
	s6->sin6_port = htons(port);
	s6->sin6_scope_id = scope;
	memcpy(&s6->sin6_addr, a, 16);
	return sizeof(*s6);
}

int uv_cm_bind(struct rdma_cm_id *id, const uint8_t *addr, uint16_t port, uint32_t scope)
{
	struct sockaddr_storage ss;
	uv_sockaddr(&ss, addr, port, scope);
	return rdma_bind_addr(id, (struct sockaddr *)&ss) ? -errno : 0;
}

int uv_cm_resolve_addr(struct rdma_cm_id *id, const uint8_t *src, uint32_t src_scope,
		       const uint8_t *dst, uint16_t dst_port, uint32_t dst_scope, int timeout_ms)
{
	struct sockaddr_storage s, d;
	uv_sockaddr(&s, src, 0, src_scope);
	uv_sockaddr(&d, dst, dst_port, dst_scope);
	return rdma_resolve_addr(id, (struct sockaddr *)&s, (struct sockaddr *)&d, timeout_ms) ? -errno : 0;
}
