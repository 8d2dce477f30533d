package main

import (
	"strconv"

	"github.com/zrviz/zrviz/internal/units"
)

// sizeFlag is a flag.Value for byte counts and offsets in the syntax every zrviz input takes:
// decimal, 0x hex, or with a binary unit (4096, 0x1000, 64MiB, 1.5GiB; see units.ParseSize).
type sizeFlag struct {
	n   int64
	set bool
	// nonNegative refuses negative values (limits); an offset may be negative, and the engine then
	// answers it with the kernel's EINVAL.
	nonNegative bool
}

func (f *sizeFlag) String() string {
	if f == nil || !f.set {
		return ""
	}
	return strconv.FormatInt(f.n, 10)
}

func (f *sizeFlag) Set(s string) error {
	n, err := units.ParseSize(s)
	if err != nil {
		return err
	}
	if f.nonNegative && n < 0 {
		return units.ErrSize
	}
	f.n, f.set = n, true
	return nil
}
