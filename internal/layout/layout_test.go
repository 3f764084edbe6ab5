package layout_test

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/urma-go/sdk/internal/layout"
)

type code uint8
type otherCode uint8

type rec struct {
	A code
	B uint64
	P *int
}

type twin struct {
	X otherCode
	Y uint64
	Q *int
}

func TestSame(t *testing.T) {
	require.NoError(t, layout.Same(reflect.TypeFor[rec](), reflect.TypeFor[twin]()), "names may differ")
	for name, other := range map[string]reflect.Type{
		"field order": reflect.TypeFor[struct {
			B uint64
			A code
			P *int
		}](),
		"narrower field": reflect.TypeFor[struct {
			A uint16
			B uint64
			P *int
		}](),
		"pointer type": reflect.TypeFor[struct {
			A code
			B uint64
			P *uint16
		}](),
		"pointer for an integer": reflect.TypeFor[struct {
			A code
			B *int
			P *int
		}](),
		"one field more": reflect.TypeFor[struct {
			A code
			B uint64
			P *int
			C uint8
		}](),
	} {
		require.Error(t, layout.Same(reflect.TypeFor[rec](), other), name)
	}
	require.Panics(t, func() { layout.Must(reflect.TypeFor[rec](), reflect.TypeFor[int]()) })
}

type head struct{ N *int }

// holder begins with a head: a pointer to one may be read as a *head.
type holder struct {
	H    head
	More string
}

type elsewhere struct {
	More string
	H    head
}

type refs struct {
	P *holder
	S []rec
}

func TestSamePointersAndSlices(t *testing.T) {
	require.NoError(t, layout.Same(reflect.TypeFor[refs](), reflect.TypeFor[struct {
		P *head
		S []twin
	}]()), "a pointer to what begins with the other's, slices of twins")
	require.NoError(t, layout.Same(reflect.TypeFor[*code](), reflect.TypeFor[*otherCode]()), "same layouts")
	require.Error(t, layout.Same(reflect.TypeFor[*elsewhere](), reflect.TypeFor[*head]()), "the head not first")
	require.Error(t, layout.Same(reflect.TypeFor[*head](), reflect.TypeFor[*holder]()), "the shorter read as the longer")
	require.Error(t, layout.Same(reflect.TypeFor[[]rec](), reflect.TypeFor[[]head]()), "slices of other layouts")
}
