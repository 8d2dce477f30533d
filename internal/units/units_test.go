package units

import (
	"errors"
	"math"
	"testing"
)

func TestGroup(t *testing.T) {
	for _, c := range []struct {
		in   int64
		want string
	}{
		{0, "0"}, {7, "7"}, {999, "999"}, {1000, "1,000"}, {16384, "16,384"}, {-2891136, "-2,891,136"},
		{math.MaxInt64, "9,223,372,036,854,775,807"}, {math.MinInt64, "-9,223,372,036,854,775,808"},
	} {
		if got := Group(c.in); got != c.want {
			t.Errorf("Group(%d) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := Group(uint64(math.MaxUint64)); got != "18,446,744,073,709,551,615" {
		t.Errorf("Group(MaxUint64) = %q", got)
	}
}

func TestBytes(t *testing.T) {
	for _, c := range []struct {
		in   int64
		want string
	}{
		{0, "0 B"}, {512, "512 B"}, {1023, "1,023 B"}, {1024, "1 KiB"}, {4096, "4 KiB"},
		{1536, "1.5 KiB"}, {1280, "1.25 KiB"}, {1 << 20, "1 MiB"}, {1<<20 + 4096, "1,028 KiB"},
		{1572864, "1.5 MiB"}, {67108864, "64 MiB"}, {1000003, "1,000,003 B"}, {8 << 30, "8 GiB"},
		{9664729088, "9,438,212 KiB"}, {math.MaxInt64, "9,223,372,036,854,775,807 B"}, {-4096, "-4 KiB"}, {math.MinInt64, "-8 EiB"},
	} {
		if got := Bytes(c.in); got != c.want {
			t.Errorf("Bytes(%d) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestBytesExact: what Bytes prints parses back to the same number, separators and all, for every
// size of a sweep.
func TestBytesExact(t *testing.T) {
	for n := int64(0); n < 1<<22; n += 257 {
		s := Bytes(n)
		back, err := ParseSize(s)
		if err != nil || back != n {
			t.Fatalf("Bytes(%d) = %q parses back as %d, %v", n, s, back, err)
		}
	}
}

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{
		{"0", 0}, {"4096", 4096}, {"-1", -1}, {"0x1000", 4096}, {"0X10", 16}, {"64MiB", 64 << 20},
		{"64 MiB", 64 << 20}, {"1.5GiB", 3 << 29}, {"4k", 4096}, {"4KB", 4096}, {"2m", 2 << 20},
		{"12B", 12}, {"9223372036854775807", math.MaxInt64}, {" 7 ", 7}, {"0.5KiB", 512},
		{"2,097,152", 2097152}, {"1,028 KiB", 1052672}, {"-0x10", -16}, {"-9223372036854775808", math.MinInt64},
	} {
		got, err := ParseSize(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"", "abc", "1.1", "0.3B", "8EiB", "9223372036854775808", "1e3", "1/2",
		"0x", "0xfffffffffffffffff", "MiB", "--1", "1 2",
		"+1", "1,2", "1,0000", "1_000", "16 384", "0b101", "1.", "64 ki", "0x1,000", "1.5\u00a0MiB"} {
		if got, err := ParseSize(in); !errors.Is(err, ErrSize) {
			t.Errorf("ParseSize(%q) = %d, %v; want ErrSize", in, got, err)
		}
	}
}
