// Package units formats and parses the numbers zrviz shows and reads: counts with thousands
// separators, byte sizes with binary units. Every page, the CLI and the engine's narration use it, so
// a number reads the same everywhere.
package units

import (
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// Group formats v with thousands separators: 16384 → "16,384", -2891136 → "-2,891,136".
func Group[T ~int | ~int32 | ~int64 | ~uint32 | ~uint64](v T) string {
	neg := v < 0
	u := uint64(v)
	if neg {
		u = -uint64(int64(v)) // also right for math.MinInt64
	}
	s := strconv.FormatUint(u, 10)
	var b strings.Builder
	b.Grow(len(s) + len(s)/3 + 1)
	if neg {
		b.WriteByte('-')
	}
	for i := 0; i < len(s); i++ {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// binary units, smallest first.
var unitNames = [...]string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}

// Bytes formats a byte count exactly with the largest binary unit that shows it in at most two
// decimals: 4096 → "4 KiB", 1572864 → "1.5 MiB", 1052672 (1 MiB + 4 KiB) → "1,028 KiB",
// 1000003 → "1,000,003 B". It never rounds, so two different sizes never print alike.
func Bytes(n int64) string {
	if n < 0 {
		return "-" + Bytes(-n) // n = MinInt64 is not a size anyone has
	}
	for i := len(unitNames) - 1; i > 0; i-- {
		u := int64(1) << (10 * i)
		if n < u {
			continue
		}
		// n/u with two decimals is exact when 100·n is a multiple of u.
		if hundredths, ok := exactHundredths(n, u); ok {
			return formatHundredths(hundredths) + " " + unitNames[i]
		}
	}
	return Group(n) + " B"
}

func exactHundredths(n, u int64) (int64, bool) {
	var x big.Int
	x.SetInt64(n)
	x.Mul(&x, big.NewInt(100))
	var q, r big.Int
	q.QuoRem(&x, big.NewInt(u), &r)
	return q.Int64(), r.Sign() == 0 && q.IsInt64()
}

func formatHundredths(h int64) string {
	s := Group(h / 100)
	switch f := h % 100; {
	case f == 0:
	case f%10 == 0:
		s += "." + strconv.FormatInt(f/10, 10)
	default:
		s += fmt.Sprintf(".%02d", f)
	}
	return s
}

// ErrSize is wrapped by every error of [ParseSize].
var ErrSize = errors.New("not a size")

// sizeSuffixes are the units ParseSize reads, longest first so "MiB" is not read as "B". "K", "KB" and
// the like are binary, the way dd and fallocate(1) read them.
var sizeSuffixes = []struct {
	suffix string
	shift  uint
}{
	{"kib", 10}, {"mib", 20}, {"gib", 30}, {"tib", 40}, {"pib", 50}, {"eib", 60},
	{"kb", 10}, {"mb", 20}, {"gb", 30}, {"tb", 40}, {"pb", 50}, {"eb", 60},
	{"k", 10}, {"m", 20}, {"g", 30}, {"t", 40}, {"p", 50}, {"e", 60},
	{"b", 0},
}

// ParseSize reads a byte count or offset: a decimal integer ("4096", "-1"), hex with 0x ("0x1000"),
// or a decimal number with a binary unit ("64MiB", "1.5 GiB", "4k"), as long as the result is a whole
// number of bytes that fits in an int64. Errors wrap [ErrSize] and say why.
func ParseSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "" {
		return 0, fmt.Errorf("%w: empty", ErrSize)
	}
	if strings.HasPrefix(t, "0x") || strings.HasPrefix(t, "-0x") {
		n, err := strconv.ParseInt(t, 0, 64)
		if err != nil {
			return 0, fmt.Errorf("%w: %q is not a hex number that fits in 64 bits", ErrSize, s)
		}
		return n, nil
	}
	shift := uint(0)
	for _, u := range sizeSuffixes {
		if strings.HasSuffix(t, u.suffix) {
			t, shift = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.shift
			break
		}
	}
	r, ok := new(big.Rat).SetString(t)
	if !ok || t == "" || strings.ContainsAny(t, "/eE") {
		return 0, fmt.Errorf("%w: %q (want e.g. 4096, 0x1000, 64MiB or 1.5GiB)", ErrSize, s)
	}
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), shift)))
	if !r.IsInt() {
		return 0, fmt.Errorf("%w: %q is not a whole number of bytes", ErrSize, s)
	}
	if !r.Num().IsInt64() {
		return 0, fmt.Errorf("%w: %q does not fit in 64 bits", ErrSize, s)
	}
	return r.Num().Int64(), nil
}
