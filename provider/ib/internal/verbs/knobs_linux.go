//go:build linux && cgo && urma_verbs

package verbs

/*
#include <errno.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

static int uv_srq_set_limit(struct ibv_srq *srq, uint32_t limit)
{
	struct ibv_srq_attr attr = { .srq_limit = limit };
	return ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT);
}

static int uv_cm_set_ack_timeout(struct rdma_cm_id *id, uint8_t code)
{
	return rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &code, sizeof code) ? -errno : 0;
}

static int uv_qp_ack_timeout(struct ibv_qp *qp, uint8_t *code)
{
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	int rc = ibv_query_qp(qp, &attr, IBV_QP_TIMEOUT, &init);
	if (rc == 0)
		*code = attr.timeout;
	return rc;
}
*/
import "C"

import (
	"fmt"
)

// SetLimit arms the SRQ limit (ibv_modify_srq with IBV_SRQ_LIMIT): once
// fewer than n receives are posted, the device raises one
// IBV_EVENT_SRQ_LIMIT_REACHED and disarms it. Zero disarms it.
func (s *SRQ) SetLimit(n int) error {
	if rc := C.uv_srq_set_limit(s.srq, C.uint32_t(n)); rc != 0 {
		return fmt.Errorf("ibv_modify_srq srq_limit %d: %w", n, errnoOf(rc))
	}
	return nil
}

// SetAckTimeout sets the local ACK timeout code (4.096us*2^code) of the
// QP the id connects, before Connect or Accept
// (RDMA_OPTION_ID_ACK_TIMEOUT).
func (id CMID) SetAckTimeout(code uint8) error {
	if rc := C.uv_cm_set_ack_timeout(id.p, C.uint8_t(code)); rc != 0 {
		return fmt.Errorf("rdma_set_option ack timeout %d: %w", code, errnoOf(rc))
	}
	return nil
}

// AckTimeout is the QP's local ACK timeout code (ibv_query_qp).
func (q *QP) AckTimeout() (uint8, error) {
	var code C.uint8_t
	if rc := C.uv_qp_ack_timeout(q.qp, &code); rc != 0 {
		return 0, fmt.Errorf("ibv_query_qp %d: %w", q.Num, errnoOf(rc))
	}
	return uint8(code), nil
}
