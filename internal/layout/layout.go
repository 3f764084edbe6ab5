// Package layout checks that two struct types share one memory layout, so
// that a slice of one may be read as a slice of the other. The public
// packages define their own record types (jetty.CR, segment.SGE) with the
// layout of the provider's, and pass slices of them to providers without a
// copy; Same is what makes that cast safe, and each such pair is checked
// when its package initializes.
package layout

import (
	"fmt"
	"reflect"
)

// Same returns nil when a and b have the same size and alignment and the
// same fields at the same offsets, field by field of the same kind and
// size. Fields that hold pointers (pointers, interfaces, slices, strings,
// maps, channels, functions) must have identical types, so that the
// garbage collector and method calls see what they expect; plain-data
// fields may differ in their named types.
func Same(a, b reflect.Type) error {
	if a.Size() != b.Size() || a.Align() != b.Align() {
		return fmt.Errorf("%v is %d bytes aligned %d, %v is %d aligned %d", a, a.Size(), a.Align(), b, b.Size(), b.Align())
	}
	if a.Kind() != b.Kind() {
		return fmt.Errorf("%v is a %v, %v a %v", a, a.Kind(), b, b.Kind())
	}
	switch a.Kind() {
	case reflect.Struct:
		if a.NumField() != b.NumField() {
			return fmt.Errorf("%v has %d fields, %v %d", a, a.NumField(), b, b.NumField())
		}
		for i := range a.NumField() {
			fa, fb := a.Field(i), b.Field(i)
			if fa.Offset != fb.Offset {
				return fmt.Errorf("%v.%s at %d, %v.%s at %d", a, fa.Name, fa.Offset, b, fb.Name, fb.Offset)
			}
			if err := Same(fa.Type, fb.Type); err != nil {
				return fmt.Errorf("%v.%s: %w", a, fa.Name, err)
			}
		}
	case reflect.Array:
		if a.Len() != b.Len() {
			return fmt.Errorf("%v and %v differ in length", a, b)
		}
		return Same(a.Elem(), b.Elem())
	case reflect.Pointer, reflect.Interface, reflect.Slice, reflect.String, reflect.Map, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		if a != b {
			return fmt.Errorf("%v and %v hold pointers of different types", a, b)
		}
	}
	return nil
}

// Must panics when Same fails: a package calls it while it initializes,
// for types whose layouts its code relies on.
func Must(a, b reflect.Type) {
	if err := Same(a, b); err != nil {
		panic("layout: " + err.Error())
	}
}
