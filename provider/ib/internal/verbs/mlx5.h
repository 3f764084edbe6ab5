/* The mlx5 direct-verbs part of the shim: signature offload through UMR
 * memory keys (mlx5dv_create_mkey, mlx5dv_wr_mkey_configure with an
 * interleaved layout and a CRC block signature, mlx5dv_mkey_check, local
 * invalidate). Only uv_mlx5_sig_caps is called: no mlx5 device is
 * reachable from CI, so segment.View runs in software everywhere and the
 * rest is compiled, not exercised. See provider/ib/doc.go. */
#ifndef URMA_GO_MLX5_H
#define URMA_GO_MLX5_H

#include <stdint.h>
#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>

/* What the device reports about CRC block signatures. */
struct uv_mlx5_sig_caps {
	int mlx5;             /* the device is driven by mlx5 */
	int offload;          /* MLX5DV_CONTEXT_MASK_SIGNATURE_OFFLOAD with CRC */
	uint16_t crc_types;   /* enum mlx5dv_sig_crc_type_caps */
	uint64_t block_sizes; /* enum mlx5dv_block_size_caps */
};

/* uv_mlx5_sig_caps fills caps; it returns 0, or an errno from
 * mlx5dv_query_device on an mlx5 device. */
int uv_mlx5_sig_caps(struct ibv_context *ctx, struct uv_mlx5_sig_caps *caps);

/* uv_mlx5_create_qp creates an RC QP whose extended send operations include
 * mkey configuration, as signature memory keys need. */
struct ibv_qp *uv_mlx5_create_qp(struct ibv_context *ctx, struct ibv_pd *pd,
				 struct ibv_cq *send_cq, struct ibv_cq *recv_cq,
				 struct ibv_srq *srq, uint32_t depth, uint32_t sge, int *err);

/* uv_mlx5_create_sig_mkey creates an indirect memory key that can carry a
 * block signature and point at up to max_entries layout entries. */
struct mlx5dv_mkey *uv_mlx5_create_sig_mkey(struct ibv_pd *pd, uint16_t max_entries, int *err);

/* One domain's signature: crc is MLX5DV_SIG_CRC_TYPE_*, or -1 for plain
 * data; block is MLX5DV_BLOCK_SIZE_*. */
struct uv_mlx5_domain {
	int crc;
	int block;
};

/* uv_mlx5_configure posts (signaled, wr_id) a configuration of mkey: the
 * access flags, an interleaved layout of n entries repeated repeat times,
 * and the two domains' CRC signatures with seed 0xFFFFFFFF and every CRC
 * byte checked. It returns 0 or the error of ibv_wr_complete. */
int uv_mlx5_configure(struct ibv_qp *qp, struct mlx5dv_mkey *mkey, uint64_t wr_id,
		      uint32_t access, uint32_t repeat, uint16_t n,
		      const struct mlx5dv_mr_interleaved *entries,
		      struct uv_mlx5_domain mem, struct uv_mlx5_domain wire);

/* uv_mlx5_invalidate posts (signaled, wr_id) a local invalidate of mkey. */
int uv_mlx5_invalidate(struct ibv_qp *qp, struct mlx5dv_mkey *mkey, uint64_t wr_id);

/* uv_mlx5_check runs mlx5dv_mkey_check. It returns 0 and sets *bad to 0 when
 * every block matched; otherwise *bad is 1 and offset, expected and actual
 * describe the first bad block's guard. A negative return is an error. */
int uv_mlx5_check(struct mlx5dv_mkey *mkey, int *bad, uint64_t *offset,
		  uint32_t *expected, uint32_t *actual);

#endif
