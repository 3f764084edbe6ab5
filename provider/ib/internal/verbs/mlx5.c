//go:build linux && cgo && urma_verbs

#include <errno.h>
#include <string.h>
#include "mlx5.h"

int uv_mlx5_sig_caps(struct ibv_context *ctx, struct uv_mlx5_sig_caps *caps)
{
	struct mlx5dv_context dv;

	memset(caps, 0, sizeof(*caps));
	if (!mlx5dv_is_supported(ctx->device))
		return 0;
	caps->mlx5 = 1;
	memset(&dv, 0, sizeof(dv));
	dv.comp_mask = MLX5DV_CONTEXT_MASK_SIGNATURE_OFFLOAD;
	int err = mlx5dv_query_device(ctx, &dv);
	if (err)
		return err;
	if (!(dv.comp_mask & MLX5DV_CONTEXT_MASK_SIGNATURE_OFFLOAD))
		return 0;
	caps->crc_types = dv.sig_caps.crc_type;
	caps->block_sizes = dv.sig_caps.block_size;
	caps->offload = (dv.sig_caps.block_prot & MLX5DV_SIG_PROT_CAP_CRC) &&
			(caps->crc_types & (MLX5DV_SIG_CRC_TYPE_CAP_CRC32 | MLX5DV_SIG_CRC_TYPE_CAP_CRC32C));
	return 0;
}

struct ibv_qp *uv_mlx5_create_qp(struct ibv_context *ctx, struct ibv_pd *pd,
				 struct ibv_cq *send_cq, struct ibv_cq *recv_cq,
				 struct ibv_srq *srq, uint32_t depth, uint32_t sge, int *err)
{
	struct ibv_qp_init_attr_ex attr;
	struct mlx5dv_qp_init_attr dv;

	memset(&attr, 0, sizeof(attr));
	attr.qp_type = IBV_QPT_RC;
	attr.send_cq = send_cq;
	attr.recv_cq = recv_cq;
	attr.srq = srq;
	attr.cap.max_send_wr = depth;
	attr.cap.max_recv_wr = srq ? 0 : depth;
	attr.cap.max_send_sge = sge;
	attr.cap.max_recv_sge = srq ? 0 : sge;
	attr.pd = pd;
	attr.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	attr.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_READ |
			      IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_LOCAL_INV;
	memset(&dv, 0, sizeof(dv));
	dv.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS;
	dv.send_ops_flags = MLX5DV_QP_EX_WITH_MKEY_CONFIGURE;
	errno = 0;
	struct ibv_qp *qp = mlx5dv_create_qp(ctx, &attr, &dv);
	*err = qp ? 0 : (errno ? errno : EOPNOTSUPP);
	return qp;
}

struct mlx5dv_mkey *uv_mlx5_create_sig_mkey(struct ibv_pd *pd, uint16_t max_entries, int *err)
{
	struct mlx5dv_mkey_init_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.pd = pd;
	attr.create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT |
			    MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE;
	attr.max_entries = max_entries;
	errno = 0;
	struct mlx5dv_mkey *mkey = mlx5dv_create_mkey(&attr);
	*err = mkey ? 0 : (errno ? errno : EOPNOTSUPP);
	return mkey;
}

/* fill_domain describes d in out (and its CRC in crc); it returns NULL for
 * a plain domain. */
static const struct mlx5dv_sig_block_domain *fill_domain(struct uv_mlx5_domain d,
							  struct mlx5dv_sig_block_domain *out,
							  struct mlx5dv_sig_crc *crc)
{
	if (d.crc < 0)
		return NULL;
	memset(out, 0, sizeof(*out));
	memset(crc, 0, sizeof(*crc));
	crc->type = d.crc;
	crc->seed = 0xFFFFFFFF;
	out->sig_type = MLX5DV_SIG_TYPE_CRC;
	out->sig.crc = crc;
	out->block_size = d.block;
	return out;
}

int uv_mlx5_configure(struct ibv_qp *qp, struct mlx5dv_mkey *mkey, uint64_t wr_id,
		      uint32_t access, uint32_t repeat, uint16_t n,
		      const struct mlx5dv_mr_interleaved *entries,
		      struct uv_mlx5_domain mem, struct uv_mlx5_domain wire)
{
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(qp);
	struct mlx5dv_qp_ex *mqp = mlx5dv_qp_ex_from_ibv_qp_ex(qpx);
	struct mlx5dv_mkey_conf_attr conf;
	struct mlx5dv_sig_block_domain md, wd;
	struct mlx5dv_sig_crc mc, wc;
	struct mlx5dv_sig_block_attr sig;
	int signed_view = mem.crc >= 0 || wire.crc >= 0;

	memset(&conf, 0, sizeof(conf));
	if (!signed_view)
		conf.conf_flags = MLX5DV_MKEY_CONF_FLAG_RESET_SIG_ATTR;
	ibv_wr_start(qpx);
	qpx->wr_id = wr_id;
	qpx->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	mlx5dv_wr_mkey_configure(mqp, mkey, signed_view ? 3 : 2, &conf);
	mlx5dv_wr_set_mkey_access_flags(mqp, access);
	mlx5dv_wr_set_mkey_layout_interleaved(mqp, repeat, n, entries);
	if (signed_view) {
		memset(&sig, 0, sizeof(sig));
		sig.mem = fill_domain(mem, &md, &mc);
		sig.wire = fill_domain(wire, &wd, &wc);
		sig.check_mask = MLX5DV_SIG_MASK_CRC32;
		mlx5dv_wr_set_mkey_sig_block(mqp, &sig);
	}
	return ibv_wr_complete(qpx);
}

int uv_mlx5_invalidate(struct ibv_qp *qp, struct mlx5dv_mkey *mkey, uint64_t wr_id)
{
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(qp);

	ibv_wr_start(qpx);
	qpx->wr_id = wr_id;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_local_inv(qpx, mkey->lkey);
	return ibv_wr_complete(qpx);
}

int uv_mlx5_check(struct mlx5dv_mkey *mkey, int *bad, uint64_t *offset,
		  uint32_t *expected, uint32_t *actual)
{
	struct mlx5dv_mkey_err err;

	memset(&err, 0, sizeof(err));
	int ret = mlx5dv_mkey_check(mkey, &err);
	if (ret)
		return ret < 0 ? ret : -ret;
	*bad = err.err_type != MLX5DV_MKEY_NO_ERR;
	if (*bad) {
		*offset = err.err.sig.offset;
		*expected = (uint32_t)err.err.sig.expected_value;
		*actual = (uint32_t)err.err.sig.actual_value;
	}
	return 0;
}
