package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/zrviz/zrviz/core"
)

// sizeUnits are the suffixes parseSize accepts, binary multiples as in "64MiB"; "K", "M", "G" and
// "KB", "MB", "GB" are taken as binary too, the way dd and fallocate(1) read them.
var sizeUnits = []struct {
	suffix string
	shift  uint
}{
	{"kib", 10}, {"mib", 20}, {"gib", 30}, {"tib", 40},
	{"kb", 10}, {"mb", 20}, {"gb", 30}, {"tb", 40},
	{"k", 10}, {"m", 20}, {"g", 30}, {"t", 40},
	{"b", 0},
}

// parseSize reads a byte count such as 4096, 0x1000, 64MiB or 1.5GiB... without fractions: only whole
// numbers, decimal or 0x hex, with an optional binary unit.
func parseSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "" {
		return 0, fmt.Errorf("empty size")
	}
	shift := uint(0)
	if !strings.HasPrefix(t, "0x") {
		for _, u := range sizeUnits {
			if strings.HasSuffix(t, u.suffix) {
				t, shift = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.shift
				break
			}
		}
	}
	n, err := strconv.ParseInt(t, 0, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad size %q (want e.g. 4096, 0x1000 or 64MiB)", s)
	}
	if shift > 0 && n > (1<<63-1)>>shift {
		return 0, fmt.Errorf("size %q overflows", s)
	}
	return n << shift, nil
}

// sizeFlag is a flag.Value for byte counts that accepts the forms parseSize does.
type sizeFlag struct {
	n   int64
	set bool
}

func (f *sizeFlag) String() string {
	if f == nil || !f.set {
		return ""
	}
	return strconv.FormatInt(f.n, 10)
}

func (f *sizeFlag) Set(s string) error {
	n, err := parseSize(s)
	if err != nil {
		return err
	}
	f.n, f.set = n, true
	return nil
}

// humanSize formats a byte count for people: 4096 → "4.0 KiB", 67108864 → "64 MiB".
func humanSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	v := float64(n) / float64(div)
	suffix := "KMGTPE"[exp : exp+1]
	if v >= 100 || v == float64(int64(v)) {
		return fmt.Sprintf("%.0f %siB", v, suffix)
	}
	return fmt.Sprintf("%.1f %siB", v, suffix)
}

// groupDigits writes n with separators: 16384 → "16,384".
func groupDigits[T ~int | ~int64 | ~uint32 | ~uint64 | ~int32](n T) string { return core.Group(n) }
