package jetty

import (
	"context"

	"github.com/urma-go/sdk/provider"
	"github.com/urma-go/sdk/urma"
)

// Remote is an imported remote JFR, Jetty or jetty group
// (urma_target_jetty_t). Put it in WR.To, or pass it to the helpers; a
// request to a group goes to the member the group's policy picks (see
// JettyGroup).
type Remote struct {
	// ref is first: a request's To is read by the provider as a pointer
	// to it (see rawWRs).
	ref    provider.RemoteRef
	closer closer
}

// ImportJFR imports a peer's JFR (urma_import_jfr); under PLAIN_TEXT the
// token must match. The provider may ask the owner: ctx bounds the wait,
// and once it is done ImportJFR returns its error (matching
// context.Canceled or DeadlineExceeded) with nothing imported.
func ImportJFR(ctx context.Context, uctx *urma.Context, desc Descriptor, token uint32) (*Remote, error) {
	return importRemote(ctx, uctx, desc, token, KindJFR)
}

// ImportJetty imports a peer's Jetty (urma_import_jetty), as ImportJFR
// imports a JFR. A descriptor of Kind KindJettyGroup imports a peer's
// JettyGroup: the owner checks the token and names the members, which are
// imported with it; each request to the Remote then goes to the member
// the group's policy picks.
func ImportJetty(ctx context.Context, uctx *urma.Context, desc Descriptor, token uint32) (*Remote, error) {
	if desc.Kind == KindJettyGroup && uctx != nil && desc.Validate() == nil {
		r, err := importGroup(ctx, uctx, desc, token)
		if err != nil {
			return nil, &urma.OpError{Op: "import JETTY_GROUP", Obj: desc.String(), Err: err}
		}
		return r, nil
	}
	return importRemote(ctx, uctx, desc, token, KindJetty)
}

func importRemote(ctx context.Context, uctx *urma.Context, desc Descriptor, token uint32, kind Kind) (*Remote, error) {
	op := "import " + kind.String()
	if uctx == nil {
		return nil, opErr(op, provider.Errorf(urma.ErrInvalid, "nil context"))
	}
	if err := desc.Validate(); err != nil {
		return nil, opErr(op, err)
	}
	if desc.Kind != kind {
		return nil, opErr(op, provider.Errorf(urma.ErrInvalid, "descriptor names a %v", desc.Kind))
	}
	p, err := uctx.Raw().Import(ctx, desc.Raw(), token)
	if err != nil {
		return nil, &urma.OpError{Op: op, Obj: desc.String(), Err: err}
	}
	return &Remote{ref: provider.RemoteRef{Remote: p}}, nil
}

// WrapRemote makes a Remote of a provider's remote. It is for packages that
// add provider-specific ways of reaching peers (package rdmacm); others
// import with ImportJFR and ImportJetty.
func WrapRemote(p provider.Remote) *Remote { return &Remote{ref: provider.RemoteRef{Remote: p}} }

// Descriptor returns the descriptor the remote was imported from.
func (r *Remote) Descriptor() Descriptor { return DescriptorOf(r.ref.Remote.Desc()) }

// Raw returns the provider's handle.
func (r *Remote) Raw() provider.Remote { return r.ref.Remote }

// Unimport releases the remote (urma_unimport_jfr / urma_unimport_jetty).
// Idempotent and nil-safe.
func (r *Remote) Unimport() error {
	if r == nil {
		return nil
	}
	return r.closer.close("unimport", r.ref.Remote.Close)
}

// Close is Unimport, for io.Closer.
func (r *Remote) Close() error { return r.Unimport() }
