// Package rdmanl lists the resources of an RDMA device from the kernel's
// RDMA netlink interface (NETLINK_RDMA, client RDMA_NL_NLDEV): the queue
// pairs, completion queues, shared receive queues and memory regions that
// every process, and the kernel itself, holds on the device. It is what
// iproute2's "rdma resource show" reads, in pure Go (no cgo), so that
// urmactl lists an ib device's objects in any build.
//
// The kernel answers with one dump per resource type and device: a device
// index (Devices resolves names), then nested tables of entries whose
// attributes are RDMA_NLDEV_ATTR_*. The decoders take the raw messages and
// never trust a length: a short or malformed message is an error, not a
// panic. Fields the kernel leaves out (keys without CAP_NET_ADMIN, the
// remote QPN of a datagram QP) are reported as absent.
//
// A kernel without RDMA netlink (no ib_core) makes Dial fail with an
// error that matches provider.ErrNotSupported and says so.
package rdmanl
