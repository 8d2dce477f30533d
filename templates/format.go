package templates

import (
	"strconv"
	"strings"

	"github.com/zrviz/zrviz/core"
)

// Bytes renders n with a binary unit: "8 GiB", "1.5 MiB", "512 B".
func Bytes(n int64) string {
	if n < 1024 {
		return strconv.FormatInt(n, 10) + " B"
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	f := float64(n) / 1024
	i := 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	if f == float64(int64(f)) {
		return strconv.FormatInt(int64(f), 10) + " " + units[i]
	}
	s := strconv.FormatFloat(f, 'f', 1, 64)
	return strings.TrimSuffix(s, ".0") + " " + units[i]
}

// Int renders n with thousands separators: 16384 → "16,384".
func Int[T ~int | ~int64 | ~uint32 | ~uint64 | ~int32](n T) string { return core.Group(n) }

func itoa[T ~int | ~int64 | ~uint32 | ~uint64](n T) string {
	return strconv.FormatUint(uint64(n), 10)
}

func i64(n int64) string { return strconv.FormatInt(n, 10) }
