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
// 1000003 → "1,000,003 B". It never rounds, so two different sizes never print alike, and
// [ParseSize] reads what it prints back as the same number.
func Bytes(n int64) string {
	if n < 0 {
		// The magnitude as a uint64: -n overflows for math.MinInt64.
		return "-" + bytesOf(-uint64(n))
	}
	return bytesOf(uint64(n))
}

func bytesOf(n uint64) string {
	for i := len(unitNames) - 1; i > 0; i-- {
		u := uint64(1) << (10 * i)
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

func exactHundredths(n, u uint64) (uint64, bool) {
	var x big.Int
	x.SetUint64(n)
	x.Mul(&x, big.NewInt(100))
	var q, r big.Int
	q.QuoRem(&x, new(big.Int).SetUint64(u), &r)
	return q.Uint64(), r.Sign() == 0 && q.IsUint64()
}

func formatHundredths(h uint64) string {
	s := Group(h / 100)
	switch f := h % 100; {
	case f == 0:
	case f%10 == 0:
		s += "." + strconv.FormatUint(f/10, 10)
	default:
		s += fmt.Sprintf(".%02d", f)
	}
	return s
}

// ErrSize is wrapped by every error of [ParseSize].
var ErrSize = errors.New("not a size")

// sizeUnits are the units ParseSize reads, by lower-case name. "K", "KB" and the like are binary,
// the way dd and fallocate(1) read them.
var sizeUnits = map[string]uint{
	"b": 0,
	"k": 10, "kb": 10, "kib": 10,
	"m": 20, "mb": 20, "mib": 20,
	"g": 30, "gb": 30, "gib": 30,
	"t": 40, "tb": 40, "tib": 40,
	"p": 50, "pb": 50, "pib": 50,
	"e": 60, "eb": 60, "eib": 60,
}

// ParseSize reads a byte count or offset in the one grammar every zrviz input takes (the CLI's flags,
// the ops language, URL queries, and the page's forms through static/js/size.js, which is held to
// this function by static/jstest/testdata/units.json):
//
//	size   = blank* ["-"] (hex | number [blank* unit]) blank*
//	hex    = "0x" hexdigit+                  (either case)
//	number = whole ["." digit+] | "." digit+
//	whole  = digit+ | digit{1,3} ("," digit{3})+    (grouped as [Group] and [Bytes] print)
//	unit   = B | K | KB | KiB | M | MB | MiB | … | E | EB | EiB   (any case; all binary)
//	blank  = " " | "\t"
//
// The result must be a whole number of bytes that fits in an int64. Thousands separators are read
// because the pages and the CLI print every count with them ("16,384", "1,028 KiB"), so what zrviz
// shows can be typed back; a separator elsewhere ("1,2", "1_000", "16 384") is refused rather than
// guessed at. A negative value is read (an offset of -1 is the kernel's EINVAL to show, not a typo to
// hide); callers that want a non-negative count check. Errors wrap [ErrSize] and say why.
func ParseSize(s string) (int64, error) {
	t := trimBlanks(s)
	if t == "" {
		return 0, fmt.Errorf("%w: empty", ErrSize)
	}
	neg := t[0] == '-'
	if neg {
		t = t[1:]
	}
	var mag big.Int
	if len(t) >= 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X') {
		if _, ok := mag.SetString(t[2:], 16); !ok || !allHex(t[2:]) {
			return 0, fmt.Errorf("%w: %q (want hex digits after 0x)", ErrSize, s)
		}
		return fitInt64(&mag, neg, s)
	}
	shift := uint(0)
	if i := strings.LastIndexFunc(t, func(r rune) bool { return !isLetter(r) }); i < len(t)-1 {
		u, ok := sizeUnits[strings.ToLower(t[i+1:])]
		if !ok {
			return 0, fmt.Errorf("%w: %q (the units are B, KiB, MiB, GiB, TiB, PiB, EiB; K, KB and the like mean the same)", ErrSize, s)
		}
		t, shift = trimBlanks(t[:i+1]), u
	}
	whole, frac, ok := splitNumber(t)
	if !ok {
		return 0, fmt.Errorf("%w: %q (want e.g. 4096, 2,097,152, 0x1000, 64MiB or 1.5GiB)", ErrSize, s)
	}
	mag.SetString(whole+frac, 10)
	mag.Lsh(&mag, shift)
	den := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(len(frac))), nil)
	var rem big.Int
	mag.QuoRem(&mag, den, &rem)
	if rem.Sign() != 0 {
		return 0, fmt.Errorf("%w: %q is not a whole number of bytes", ErrSize, s)
	}
	return fitInt64(&mag, neg, s)
}

// trimBlanks drops spaces and tabs at both ends. Only those two: a form field holds no other, and
// which other Unicode spaces count differs between Go and JavaScript.
func trimBlanks(s string) string {
	return strings.Trim(s, " \t")
}

func isLetter(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }

func allHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return s != ""
}

// splitNumber splits a number of the grammar into its whole digits (separators dropped; "" for
// ".5") and its fraction's digits.
func splitNumber(t string) (whole, frac string, ok bool) {
	w, f, dot := strings.Cut(t, ".")
	if dot && (f == "" || !allDigits(f)) {
		return "", "", false
	}
	if w == "" {
		return "0", f, dot
	}
	if allDigits(w) {
		return w, f, true
	}
	groups := strings.Split(w, ",")
	if len(groups[0]) < 1 || len(groups[0]) > 3 || !allDigits(groups[0]) {
		return "", "", false
	}
	for _, g := range groups[1:] {
		if len(g) != 3 || !allDigits(g) {
			return "", "", false
		}
	}
	return strings.Join(groups, ""), f, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// fitInt64 is mag, negated when neg, if it fits in an int64.
func fitInt64(mag *big.Int, neg bool, s string) (int64, error) {
	if neg {
		mag.Neg(mag)
	}
	if !mag.IsInt64() {
		return 0, fmt.Errorf("%w: %q does not fit in 64 bits", ErrSize, s)
	}
	return mag.Int64(), nil
}
