package provider_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/urma-go/sdk/provider"
)

// TestOrderValues pins the order types and their capability bits to
// urma_order_type_t and urma_order_type_cap_t.
func TestOrderValues(t *testing.T) {
	for _, v := range []umdkValue{
		{"URMA_DEF_ORDER", 0, int64(provider.OrderDefault)},
		{"URMA_OT", 1, int64(provider.OrderOT)},
		{"URMA_OI", 2, int64(provider.OrderOI)},
		{"URMA_OL", 3, int64(provider.OrderOL)},
		{"URMA_NO", 4, int64(provider.OrderNO)},
		{"urma_order_type_cap_t.ot", 1 << 0, int64(provider.OrderCapOf(provider.OrderOT))},
		{"urma_order_type_cap_t.oi", 1 << 1, int64(provider.OrderCapOf(provider.OrderOI))},
		{"urma_order_type_cap_t.ol", 1 << 2, int64(provider.OrderCapOf(provider.OrderOL))},
		{"urma_order_type_cap_t.no", 1 << 3, int64(provider.OrderCapOf(provider.OrderNO))},
	} {
		assert.Equal(t, v.umdk, v.got, v.name)
	}
}

func TestOrderCap(t *testing.T) {
	c := provider.OrderCapOf(provider.OrderOL, provider.OrderNO, provider.OrderDefault, provider.OrderType(9))
	assert.Equal(t, "OL,NO", c.String())
	assert.True(t, c.Has(provider.OrderDefault), "the default is always there")
	assert.True(t, c.Has(provider.OrderOL))
	assert.False(t, c.Has(provider.OrderOT))
	assert.False(t, c.Has(provider.OrderType(9)))
	assert.Equal(t, "none", provider.OrderCap(0).String())
	assert.Equal(t, "OrderType(9)", provider.OrderType(9).String())
}
