//go:build linux && cgo && urma_verbs

// The C side of package verbs: flat structs Go can fill without unions, and
// wrappers for the verbs that rdma-core defines static inline (post, poll,
// notify, gid table), which cgo cannot call directly.
#ifndef URMA_VERBS_SHIM_H
#define URMA_VERBS_SHIM_H

#include <stdint.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

// uv_dev is the part of ibv_device_attr(_ex) the provider maps to URMA.
struct uv_dev {
	uint64_t node_guid; // host order
	uint64_t max_mr_size;
	int32_t max_qp, max_qp_wr, max_sge, max_sge_rd, max_cq, max_cqe;
	int32_t max_mr, max_srq, max_srq_wr, max_srq_sge, max_ah;
	int32_t max_qp_rd_atom, max_qp_init_rd_atom;
	int32_t atomic_cap;
	uint32_t device_cap_flags;
	uint32_t phys_port_cnt;
	int32_t transport; // enum ibv_transport_type
	uint32_t vendor_id, vendor_part_id;
};

struct uv_port {
	int32_t state, active_mtu, max_mtu, gid_tbl_len;
	uint32_t max_msg_sz;
	uint8_t active_width, active_speed, link_layer, phys_state;
};

// uv_sge mirrors struct ibv_sge; Go fills arrays of them.
struct uv_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

// uv_send_wr is one send request in a flat form. Its SGEs are
// sges[sge_off : sge_off+num_sge] of the array passed with it.
struct uv_send_wr {
	uint64_t wr_id;
	uint64_t remote_addr;
	uint64_t compare_add;
	uint64_t swap;
	uint32_t rkey;
	uint32_t imm; // host order; converted to network order here
	uint32_t num_sge;
	uint32_t sge_off;
	uint8_t opcode; // enum ibv_wr_opcode
	uint8_t flags;  // enum ibv_send_flags
	uint8_t pad[6];
	// A send on a UD QP goes to (ah, remote_qpn, remote_qkey). ah is a
	// struct ibv_ah * held as an integer: with a pointer field in this
	// struct, Go's cgo argument check would visit every element of the
	// caller's slice, up to its capacity, on each post, a large part of
	// a post's time.
	uint64_t ah;
	uint32_t remote_qpn;
	uint32_t remote_qkey;
};

struct uv_recv_wr {
	uint64_t wr_id;
	uint32_t num_sge;
	uint32_t sge_off;
};

// uv_wc is the part of ibv_wc the provider reads.
struct uv_wc {
	uint64_t wr_id;
	uint32_t status;
	uint32_t opcode;
	uint32_t byte_len;
	uint32_t imm; // host order
	uint32_t qp_num;
	uint32_t src_qp;
	uint32_t wc_flags;
	uint32_t vendor_err;
};

// uv_cm_event copies what the provider needs out of an rdma_cm_event.
struct uv_cm_event {
	struct rdma_cm_id *id;
	struct rdma_cm_id *listen_id;
	int32_t event;
	int32_t status;
	uint8_t private_data_len;
	uint8_t private_data[255];
};

int uv_query_device(struct ibv_context *ctx, struct uv_dev *out);
int uv_query_port(struct ibv_context *ctx, uint8_t port, struct uv_port *out);
long uv_query_gid_table(struct ibv_context *ctx, struct ibv_gid_entry *entries, long max);
int uv_probe_max_inline(struct ibv_context *ctx, struct ibv_pd *pd, int hint);

int uv_post_send(struct ibv_qp *qp, const struct uv_send_wr *w, int n,
		 const struct uv_sge *sges, int *bad);
int uv_post_srq_recv(struct ibv_srq *srq, const struct uv_recv_wr *w, int n,
		     const struct uv_sge *sges, int *bad);
int uv_poll_cq(struct ibv_cq *cq, int n, struct uv_wc *out);
// The _at forms take their pointers as addresses, for the data path's
// calls from Go: each pointer argument costs a call of cgo's check of
// where it points, a large part of an empty poll's time, and a busy loop
// makes these calls millions of times. Go passes them through
// functions marked go:uintptrescapes, which keep what the addresses point
// to on the heap and alive for the call.
static inline int uv_poll_cq_at(uintptr_t cq, int n, uintptr_t out)
{
	return uv_poll_cq((struct ibv_cq *)cq, n, (struct uv_wc *)out);
}

// uv_post_result packs a post's result into one value, so that the index
// of the first request not posted needs no pointer: 0 on success, else
// the error in the low 32 bits and that index in the high ones.
static inline int64_t uv_post_result(int rc, int bad)
{
	return rc == 0 ? 0 : (int64_t)(((uint64_t)(uint32_t)bad << 32) | (uint32_t)rc);
}

static inline int64_t uv_post_send_at(uintptr_t qp, uintptr_t w, int n, uintptr_t sges)
{
	int bad = 0;
	int rc = uv_post_send((struct ibv_qp *)qp, (const struct uv_send_wr *)w, n,
			      (const struct uv_sge *)sges, &bad);
	return uv_post_result(rc, bad);
}

static inline int64_t uv_post_srq_recv_at(uintptr_t srq, uintptr_t w, int n, uintptr_t sges)
{
	int bad = 0;
	int rc = uv_post_srq_recv((struct ibv_srq *)srq, (const struct uv_recv_wr *)w, n,
				  (const struct uv_sge *)sges, &bad);
	return uv_post_result(rc, bad);
}
void uv_flag_post(const uint8_t *flag, uint8_t want, int64_t spin_ns,
		  struct ibv_qp *qp, const struct uv_send_wr *w, int nw,
		  const struct uv_sge *sges, int *bad, int *tried, int *post_rc);
int uv_poll_post(struct ibv_cq *cq, int n, struct uv_wc *out, int64_t spin_ns,
		 struct ibv_qp *qp, const struct uv_send_wr *w, int nw,
		 const struct uv_sge *sges, int need, uint64_t need_id,
		 int *bad, int *tried, int *post_rc);
int uv_req_notify_cq(struct ibv_cq *cq, int solicited_only);
int uv_get_cq_event(struct ibv_comp_channel *ch, uint64_t *cq_context);
struct ibv_cq *uv_create_cq(struct ibv_context *ctx, int depth, uint64_t cq_context,
			    struct ibv_comp_channel *ch, int *cap, int *err);
struct ibv_srq *uv_create_srq(struct ibv_pd *pd, uint32_t max_wr, uint32_t max_sge,
			      uint64_t srq_context, uint32_t *got_wr, uint32_t *got_sge, int *err);

int uv_get_async_event(struct ibv_context *ctx, struct ibv_async_event *ev, int *type,
		       uint64_t *element, int *port);
void uv_ack_async_event(struct ibv_async_event *ev);

int uv_get_cm_event(struct rdma_event_channel *ch, struct uv_cm_event *out);
int uv_cm_qp_num(struct rdma_cm_id *id);
struct ibv_context *uv_cm_verbs(struct rdma_cm_id *id);
int uv_cm_connect(struct rdma_cm_id *id, const void *pd, uint8_t pdlen,
		  uint8_t retry, uint8_t rnr_retry, uint8_t rd_atomic);
// rnr_retry is the RNR retry count of the peer's QP: InfiniBand's CM
// carries it in the reply, so the accepting side chooses it.
int uv_cm_accept(struct rdma_cm_id *id, const void *pd, uint8_t pdlen, uint8_t rd_atomic,
		 uint8_t rnr_retry);
int uv_cm_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_cq *scq,
		    struct ibv_cq *rcq, struct ibv_srq *srq, uint32_t max_send_wr,
		    uint32_t max_send_sge, uint32_t max_inline, uint32_t max_recv_wr);
// uv_create_ud_qp creates a UD QP (receiving through srq when it is set)
// and brings it to RTS on port with qkey.
struct ibv_qp *uv_create_ud_qp(struct ibv_pd *pd, struct ibv_cq *scq, struct ibv_cq *rcq,
			       struct ibv_srq *srq, uint32_t max_send_wr, uint32_t max_send_sge,
			       uint32_t max_inline, uint8_t port, uint32_t qkey, int *err);
// uv_create_ah makes an address handle to dgid from the GID at sgid_index.
struct ibv_ah *uv_create_ah(struct ibv_pd *pd, uint8_t port, const uint8_t *dgid,
			    uint8_t sgid_index, int *err);
int uv_qp_set_rnr_timer(struct ibv_qp *qp, uint8_t timer);
int uv_qp_to_error(struct ibv_qp *qp);

uint32_t uv_qp_num(struct ibv_qp *qp);
uint32_t uv_mr_lkey(struct ibv_mr *mr);
uint32_t uv_mr_rkey(struct ibv_mr *mr);
int uv_comp_channel_fd(struct ibv_comp_channel *ch);
int uv_async_fd(struct ibv_context *ctx);
int uv_cm_channel_fd(struct rdma_event_channel *ch);
const char *uv_context_name(struct ibv_context *ctx);
uint16_t uv_cm_src_port(struct rdma_cm_id *id);
int uv_cm_peer(struct rdma_cm_id *id, uint8_t *addr, uint16_t *port);

// Addresses are passed as 16 bytes (IPv4 in the ::ffff: mapped form), a
// port in host order and an IPv6 scope id.
int uv_cm_bind(struct rdma_cm_id *id, const uint8_t *addr, uint16_t port, uint32_t scope);
int uv_cm_resolve_addr(struct rdma_cm_id *id, const uint8_t *src, uint32_t src_scope,
		       const uint8_t *dst, uint16_t dst_port, uint32_t dst_scope, int timeout_ms);
#endif
