package imgio

import (
	"encoding/binary"
	"reflect"
	"strings"
	"sync"
)

// The block inspector's field tables come from the raw structs of raw.go: each field's `f2fs` tag
// gives its C name (and, after a comma, how to show it: hex, str, bytes or time; decimal otherwise),
// and its offset is the sum of the packed sizes of the fields before it, as binary.Decode reads them.
// So a layout is written once, in the struct, and TestLayoutOffsets holds the offsets against the
// hex-offset comments and the sizes against binary.Size.

// spec is one fixed field of a structure: its C name, byte offset within the structure, size and
// how it is shown.
type spec struct {
	name string
	off  int
	size int
	f    fieldFmt
}

var layouts sync.Map // reflect.Type → []spec

// specsOf returns the fields of raw struct T in order, from its `f2fs` tags. It panics on a struct
// without a tag on every field: that is a programming error in raw.go, caught by TestLayoutOffsets.
func specsOf[T any]() []spec {
	t := reflect.TypeFor[T]()
	if v, ok := layouts.Load(t); ok {
		return v.([]spec)
	}
	out := make([]spec, 0, t.NumField())
	off := 0
	for i := range t.NumField() {
		sf := t.Field(i)
		tag, ok := sf.Tag.Lookup("f2fs")
		if !ok {
			panic("imgio: " + t.Name() + "." + sf.Name + " has no f2fs tag")
		}
		name, how, _ := strings.Cut(tag, ",")
		size := binary.Size(reflect.New(sf.Type).Elem().Interface())
		out = append(out, spec{name: name, off: off, size: size, f: fmtOf(how)})
		off += size
	}
	layouts.Store(t, out)
	return out
}

func fmtOf(how string) fieldFmt {
	switch how {
	case "hex":
		return fmtHex
	case "str":
		return fmtStr
	case "bytes":
		return fmtBytes
	case "time":
		return fmtTime
	}
	return fmtDec
}

// offsetOf returns the offset of the field of raw struct T whose C name is name; it panics on a
// name T does not have (a programming error, caught by the tests that reach the call).
func offsetOf[T any](name string) int {
	for _, s := range specsOf[T]() {
		if s.name == name {
			return s.off
		}
	}
	panic("imgio: " + reflect.TypeFor[T]().Name() + " has no field " + name)
}

// decodeAt decodes raw struct T from b at byte off, as binary.Decode reads it; ok is false when T
// does not fit.
func decodeAt[T any](b []byte, off int) (v T, ok bool) {
	if off < 0 || off > len(b) {
		return v, false
	}
	_, err := binary.Decode(b[off:], binary.LittleEndian, &v)
	return v, err == nil
}
