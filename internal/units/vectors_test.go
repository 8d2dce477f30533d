package units

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
)

var writeVectors = flag.Bool("units-vectors", false, "write static/jstest/testdata/units.json (the node tests of fmt.js and size.js read it)")

// vectorsFile is where the front end's node tests read what Go does: static/js/fmt.js's groupDigits
// and bytes and static/js/size.js's byteCount are held to every vector (static/jstest/fmt.test.js,
// size.test.js), so the page groups, formats and reads numbers as the CLI and the API do.
const vectorsFile = "../../static/jstest/testdata/units.json"

type sizeVector struct {
	In    string  `json:"in"`
	Value *string `json:"value"` // decimal; null: refused
}

// vectors are the cases of Group, Bytes and ParseSize the front end is held to: the hand-picked
// edges, then seeded random ones (the same every run, so the file is stable).
func vectors() map[string]any {
	r := rand.New(rand.NewPCG(27, 1))
	var group [][2]string
	for _, v := range append([]int64{0, 7, 999, 1000, 16384, 999999, 1000000, -1, -999, -1000, -2891136,
		1 << 53, 1<<53 + 1, math.MaxInt64, math.MinInt64}, randomInts(r, 60)...) {
		group = append(group, [2]string{strconv.FormatInt(v, 10), Group(v)})
	}
	group = append(group, [2]string{"18446744073709551615", Group(uint64(math.MaxUint64))})

	var byteCases [][2]string
	for _, v := range append([]int64{0, 1, 512, 1023, 1024, 1025, 1280, 1536, 4096, 1<<20 - 1, 1 << 20, 1<<20 + 4096,
		1572864, 1000003, 67108864, 8 << 30, 9664729088, 1 << 53, 1<<53 + 1, 7 << 60, math.MaxInt64, -4096, -1, math.MinInt64},
		randomSizes(r, 120)...) {
		byteCases = append(byteCases, [2]string{strconv.FormatInt(v, 10), Bytes(v)})
	}

	var sizes []sizeVector
	for _, in := range append(handSizes(), randomSizeInputs(r, 400)...) {
		v := sizeVector{In: in}
		if n, err := ParseSize(in); err == nil {
			s := strconv.FormatInt(n, 10)
			v.Value = &s
		}
		sizes = append(sizes, v)
	}
	return map[string]any{
		"comment": "written by go test ./internal/units -run TestVectors -units-vectors: what units.Group, units.Bytes and units.ParseSize make of each input",
		"group":   group,
		"bytes":   byteCases,
		"size":    sizes,
	}
}

func handSizes() []string {
	return []string{
		"", " ", "\t", "0", "-0", "7", "007", "4096", "-1", " 7 ", "\t4096\t", "9223372036854775807", "9223372036854775808",
		"-9223372036854775808", "-9223372036854775809", "+1", "--1", "- 1", "1 2", "16 384", "16\u00a0384", "1_048_576",
		"2,097,152", " 2,097,152 ", "1,000", "1,000,000", "0,123", "12,345,678,901", "1,2", "1,0000", "1234,567", ",123", "123,",
		"1,,000", "1,000.5k", "1,000.5", "9,223,372,036,854,775,807", "9,223,372,036,854,775,808",
		"0x1000", "0X10", "0x", "0xg", "-0x10", "0x7fffffffffffffff", "0x8000000000000000", "-0x8000000000000000",
		"0xfffffffffffffffff", "0x_10", "0x+10", "0x1,000", "0x10k", "0b101", "0o17",
		"64MiB", "64 MiB", "64  mib", "64\tMiB", "64MIB", "1.5GiB", "1.5 GiB", "4k", "4K", "4KB", "4kb", "4Kib", "2m", "12B",
		"12b", "512b", ".5k", "0.5KiB", "-.5k", "1.", ".", "-", "1.1", "0.3B", "0.3k", "1.0000000001k", "7EiB", "8EiB", "7e",
		"1e3", "1E3", "1/2", "MiB", "k", "64 MiB MiB", "64 ki", "64 kibb", "64 bytes", "64 x", "4 KiB ", "1,028 KiB", "-4 KiB",
		"1.25 KiB", "9,438,212 KiB", "1.5\u00a0MiB", "\ufeff7", "7\u0085", "٣", "１２",
	}
}

// randomInts spreads values over every magnitude and sign.
func randomInts(r *rand.Rand, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		v := int64(r.Uint64() >> r.UintN(64))
		if r.IntN(3) == 0 {
			v = -v
		}
		out[i] = v
	}
	return out
}

// randomSizes favours what Bytes has to decide on: multiples of a unit, of its quarters and
// hundredths, and near misses.
func randomSizes(r *rand.Rand, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		u := int64(1) << (10 * r.IntN(6))
		switch r.IntN(4) {
		case 0:
			out[i] = u * r.Int64N(5000)
		case 1:
			out[i] = u / 4 * r.Int64N(20000)
		case 2:
			out[i] = u*r.Int64N(5000) + r.Int64N(3) - 1
		default:
			out[i] = int64(r.Uint64() >> (1 + r.UintN(63)))
		}
		if r.IntN(10) == 0 {
			out[i] = -out[i]
		}
	}
	return out
}

// randomSizeInputs builds inputs from the grammar's pieces and near misses of them.
func randomSizeInputs(r *rand.Rand, n int) []string {
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	digits := func(k int) string {
		b := make([]byte, k)
		for i := range b {
			b[i] = byte('0' + r.IntN(10))
		}
		return string(b)
	}
	out := make([]string, n)
	for i := range out {
		var b strings.Builder
		b.WriteString(pick("", "", "", " ", "\t", "  "))
		b.WriteString(pick("", "", "", "-", "+"))
		switch r.IntN(6) {
		case 0:
			b.WriteString(pick("0x", "0X"))
			const hex = "0123456789abcdefABCDEF"
			for k := 1 + r.IntN(17); k > 0; k-- {
				b.WriteByte(hex[r.IntN(len(hex))])
			}
		case 1: // grouped, sometimes wrongly
			b.WriteString(strconv.Itoa(1 + r.IntN(999)))
			for k := r.IntN(6); k > 0; k-- {
				b.WriteString(",")
				b.WriteString(digits(pick3(r)))
			}
		default:
			b.WriteString(digits(1 + r.IntN(19)))
		}
		if r.IntN(3) == 0 {
			b.WriteString(".")
			b.WriteString(digits(r.IntN(4)))
		}
		if r.IntN(2) == 0 {
			b.WriteString(pick("", " ", "\t"))
			u := pick("b", "k", "kb", "kib", "m", "mb", "mib", "g", "gib", "t", "tib", "p", "pib", "e", "eib", "ki", "x", "bytes")
			for j := range u { // random case
				if r.IntN(2) == 0 {
					b.WriteString(strings.ToUpper(u[j : j+1]))
				} else {
					b.WriteByte(u[j])
				}
			}
		}
		b.WriteString(pick("", "", "", " ", "\t"))
		out[i] = b.String()
	}
	return out
}

// pick3 is mostly 3 (a right group), sometimes 2 or 4.
func pick3(r *rand.Rand) int {
	if r.IntN(8) == 0 {
		return 2 + 2*r.IntN(2)
	}
	return 3
}

// TestVectors: static/jstest/testdata/units.json is what Group, Bytes and ParseSize make of its
// inputs. It fails when the file is stale; -units-vectors rewrites it.
func TestVectors(t *testing.T) {
	v := vectors()
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	if *writeVectors {
		if err := os.WriteFile(vectorsFile, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if old, err := os.ReadFile(vectorsFile); err != nil || !bytes.Equal(old, b) {
		t.Errorf("%s is stale (%v): go test ./internal/units -run TestVectors -units-vectors", vectorsFile, err)
	}
	// The file is only worth holding the page to if it covers both answers of each kind.
	var took, refused, grouped int
	for _, s := range v["size"].([]sizeVector) {
		switch {
		case s.Value == nil:
			refused++
		case strings.Contains(s.In, ","):
			grouped++
			took++
		default:
			took++
		}
	}
	if took < 100 || refused < 100 || grouped < 10 {
		t.Errorf("the size vectors take %d inputs (%d grouped) and refuse %d: too few of one kind", took, grouped, refused)
	}
}

// TestPrintedSizesReadBack: whatever Group or Bytes prints, ParseSize reads back as the same
// number — the reason the grammar takes thousands separators.
func TestPrintedSizesReadBack(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 2))
	ns := append(randomSizes(r, 20000), randomInts(r, 20000)...)
	ns = append(ns, math.MaxInt64, math.MinInt64, 0)
	for _, n := range ns {
		for _, s := range []string{Group(n), Bytes(n)} {
			if back, err := ParseSize(s); err != nil || back != n {
				t.Fatalf("%d prints as %q, which ParseSize reads as %d, %v", n, s, back, err)
			}
		}
	}
}
