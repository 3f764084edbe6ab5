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
// size. Pointers and slices must point to what has the same layout (a
// pointer also to a struct that begins with what the other points to);
// the other fields that hold pointers (interfaces, strings, maps,
// channels, functions) must have identical types, so that method calls
// see what they expect; plain-data fields may differ in their named types.
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
	case reflect.Pointer:
		// A pointer is read as the other: what it points to must read
		// the same, whole or as its beginning.
		if a != b && Same(a.Elem(), b.Elem()) != nil && !beginsWith(a.Elem(), b.Elem()) {
			return fmt.Errorf("%v and %v point to different layouts", a, b)
		}
	case reflect.Slice:
		if a != b {
			if err := Same(a.Elem(), b.Elem()); err != nil {
				return fmt.Errorf("%v and %v: %w", a, b, err)
			}
		}
	case reflect.Interface, reflect.String, reflect.Map, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		if a != b {
			return fmt.Errorf("%v and %v hold pointers of different types", a, b)
		}
	}
	return nil
}

// beginsWith tells whether the struct a begins with a field of type b (or
// of a struct that does), so that a pointer to an a may be read as one to
// a b.
func beginsWith(a, b reflect.Type) bool {
	for a.Kind() == reflect.Struct && a.NumField() > 0 && a.Field(0).Offset == 0 {
		a = a.Field(0).Type
		if a == b {
			return true
		}
	}
	return false
}

// Must panics when Same fails: a package calls it while it initializes,
// for types whose layouts its code relies on.
func Must(a, b reflect.Type) {
	if err := Same(a, b); err != nil {
		panic("layout: " + err.Error())
	}
}
