package templates

import (
	"strconv"

	"github.com/zrviz/zrviz/internal/units"
)

// Bytes renders n exactly with a binary unit: "8 GiB", "1.5 MiB", "1,028 KiB" (see [units.Bytes]).
func Bytes(n int64) string { return units.Bytes(n) }

// Int renders n with thousands separators: 16384 → "16,384".
func Int[T ~int | ~int64 | ~uint32 | ~uint64 | ~int32](n T) string { return units.Group(n) }

func itoa[T ~int | ~int64 | ~uint32 | ~uint64](n T) string {
	return strconv.FormatUint(uint64(n), 10)
}

func i64(n int64) string { return strconv.FormatInt(n, 10) }
