//go:build linux && cgo && urma_verbs

package verbs

import (
	"reflect"
	"testing"
)

// pointerPath returns the path of the first field of t that holds a
// pointer ("" when none does), walking nested structs and arrays.
func pointerPath(t reflect.Type, path string) string {
	switch t.Kind() {
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if p := pointerPath(f.Type, path+"."+f.Name); p != "" {
				return p
			}
		}
		return ""
	case reflect.Array:
		return pointerPath(t.Elem(), path+"[]")
	case reflect.Pointer, reflect.UnsafePointer, reflect.Slice, reflect.Map, reflect.String,
		reflect.Interface, reflect.Chan, reflect.Func:
		return path + " (" + t.String() + ")"
	}
	return ""
}

// The arrays that every post and poll hands to C hold no pointer: Go's
// cgo argument check (on by default) then looks at a slice once, where a
// pointer field makes it visit each element up to the slice's capacity on
// every call, a large part of a post's time (a CPU profile of urmactl
// perf write_bw shows it).
func TestRequestArraysHoldNoPointers(t *testing.T) {
	for _, v := range []any{SendWR{}, RecvWR{}, SGE{}, WC{}} {
		typ := reflect.TypeOf(v)
		if p := pointerPath(typ, typ.Name()); p != "" {
			t.Errorf("%s holds a pointer at %s", typ.Name(), p)
		}
	}
}
